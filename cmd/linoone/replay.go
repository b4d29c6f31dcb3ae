package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/foundation/tty"
	"github.com/linoone/linoone/internal/local/localbus"
)

const replayUsage = `usage: linoone replay [--quiet]

Republishes every click fact in the local click DLQ onto the local bus and prints how
many were replayed; the ones that fail again stay (exit 1).

example:
  linoone replay && linoone dlq
`

// replayCmd republishes every fact in the local click DLQ onto the local bus.
func replayCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("replay")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadReplay(getenv)
	if err != nil {
		return err
	}
	if err := datadir.CheckServed(cfg.DataDir); err != nil {
		return err
	}
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, datadir.Bus), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region})
	if err != nil {
		return err
	}
	defer bus.Close()
	q, err := localbus.OpenDLQ(filepath.Join(cfg.DataDir, datadir.DLQ), localbus.DLQOptions{})
	if err != nil {
		return err
	}
	onTTY := tty.IsTerminal(stderr)
	progress := func(done, total int) {
		switch {
		case *quiet:
		case onTTY: // one line, rewritten in place
			fmt.Fprintf(stderr, "\rreplaying %d/%d", done, total)
			if done == total {
				fmt.Fprintln(stderr)
			}
		case done == total || done%1000 == 0: // a log: a line now and then
			fmt.Fprintf(stderr, "replaying %d/%d\n", done, total)
		}
	}
	res, err := q.Replay(ctx, bus, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "replayed %d, failed %d, invalid %d\n", res.Replayed, res.Failed, res.Invalid)
	if res.Failed > 0 || res.Invalid > 0 {
		return fmt.Errorf("%d click facts stay in the DLQ (failed) and %d were set aside as invalid", res.Failed, res.Invalid)
	}
	return nil
}
