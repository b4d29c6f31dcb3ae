package main

import (
	"context"
	"errors"
	"io"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/serve"
)

const consumeUsage = `usage: linoone consume [--drain [--timeout DURATION]]

Delivers the local bus into Persist apart from serve (LINOONE_CONSUMER=external);
with --drain it delivers what is queued and exits, 1 if Persist refused a fact
(kept in $LINOONE_DATA_DIR/bus/refused.jsonl for linoone recover --from-log).
While Persist fails, a drain retries it; --timeout gives up after DURATION, exit 1,
keeping what it delivered.

example:
  LINOONE_CONSUMER=external linoone serve &
  linoone consume --drain --timeout 5m
`

// consumeCmd is linoone consume: the local bus's consumer apart from serve.
func consumeCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("consume")
	drain := fs.Bool("drain", false, "deliver what is queued, then exit")
	timeout := fs.Duration("timeout", 0, "with --drain: give up after this long (e.g. 5m), exit 1; 0: wait for Persist as long as it takes")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *timeout < 0 || (*timeout > 0 && !*drain) {
		return &usageError{fs: fs, err: errors.New("--timeout is a positive duration, and goes with --drain")}
	}
	cfg, err := config.LoadConsume(getenv)
	if err != nil {
		return err
	}
	var d *serve.Drain
	if *drain {
		d = &serve.Drain{Timeout: *timeout}
	}
	return serve.Consume(ctx, cfg, d, stdout, stderr)
}
