package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/app/status"
)

const statusUsage = `usage: linoone status [--json]

Says whether a serve runs on LINOONE_DATA_DIR and which process delivers its journal
(serve itself or a linoone consume; Linux lists the locks that tell), whether serve's
resolver, management API and local Persist answer GET /healthz (ok, degraded and
what is, or down), how much of the journal waits for its consumer and since when
(the time of the oldest click not yet delivered), and how many click facts wait in
the click DLQ, the data dir's size by part (facts log with its rotated files, local
Persist's database, its WAL, the bus journal, the click DLQ, refused.jsonl, other)
and the free space of its file system. It asks the listeners where the running serve recorded them in the
data dir, else where LINOONE_RESOLVER_ADDR, LINOONE_MANAGEMENT_ADDR (or _URL) and
LINOONE_PERSIST_ADDR say. It takes no lock and writes nothing, so it runs beside
serve and linoone consume. Exit 1 when a listener is down or degraded.

example:
  linoone status
  linoone status --json | jq .journal
`

// statusCmd is linoone status: it prints the report, and fails when a listener is
// down or degraded.
func statusCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("status")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadStatus(getenv)
	if err != nil {
		return err
	}
	if err := datadir.CheckServed(cfg.DataDir); err != nil {
		return err
	}
	rep, err := status.Check(ctx, cfg)
	if err != nil && !errors.Is(err, status.ErrNotAllUp) {
		return err
	}
	var werr error
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		werr = enc.Encode(rep)
	} else {
		werr = rep.Write(stdout, time.Now())
	}
	if werr != nil {
		return werr
	}
	return err
}
