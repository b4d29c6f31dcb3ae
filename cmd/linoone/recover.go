package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localbus"
)

const recoverUsage = `usage: linoone recover --from-log FILE

Republishes onto the local bus every click fact a serve log holds whole (the
graph_fact of its ERROR lines), each once per run. The consumer keeps the facts
Persist refused in $LINOONE_DATA_DIR/bus/refused.jsonl, in the same shape.

example:
  linoone serve 2>serve.log   # later:
  linoone recover --from-log serve.log
  linoone recover --from-log .linoone/bus/refused.jsonl
`

// refusedFile is the name of the file in which the bus's consumer keeps the click
// facts Persist refused (localbus.Consumer.RefusedPath).
const refusedFile = "refused.jsonl"

// recoverCmd republishes onto the local bus every click fact a serve log holds
// whole (shorturl.RepublishLogged).
func recoverCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("recover")
	from := fs.String("from-log", "", "a serve log (JSON lines) whose logged click facts to republish")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *from == "" {
		return &usageError{fs: fs, err: errors.New("--from-log FILE is required")}
	}
	cfg, err := config.LoadReplay(getenv)
	if err != nil {
		return err
	}
	if err := datadir.CheckServed(cfg.DataDir); err != nil {
		return err
	}
	f, err := os.Open(*from)
	if errors.Is(err, os.ErrNotExist) && filepath.Base(*from) == refusedFile {
		// The consumer makes refused.jsonl on Persist's first refusal only: its
		// absence means there is no refused fact, which the help's example meets
		// on every fresh data dir.
		_, err = fmt.Fprintf(stdout, "nothing to recover: %s does not exist (Persist has refused no click fact)\n", *from)
		return err
	}
	if err != nil {
		return err
	}
	defer f.Close()
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, datadir.Bus), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region})
	if err != nil {
		return err
	}
	defer bus.Close()
	res, err := shorturl.RepublishLogged(ctx, f, bus, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "republished %d, skipped %d, failed %d, invalid %d\n", res.Republished, res.Skipped, res.Failed, res.Invalid)
	if res.Failed > 0 || res.Invalid > 0 {
		return fmt.Errorf("%d click facts were not republished (run recover again) and %d lines held a fact that cannot be read", res.Failed, res.Invalid)
	}
	return nil
}
