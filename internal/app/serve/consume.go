package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/local/localbus"
)

// Drain asks Consume to deliver what is queued and return, within Timeout (0: as
// long as Persist takes to answer).
type Drain struct {
	Timeout time.Duration
}

// Consume runs the local bus consumer on its own, for LINOONE_CONSUMER=external: the
// way production consumers run apart from the resolver. With a drain it delivers
// what is queued and returns, with an error if Persist refused a fact: the fact is
// kept in refused.jsonl, but delivered it is not, and a script that drains must see
// it. Without one it runs until ctx ends.
func Consume(ctx context.Context, cfg config.Consume, drain *Drain, stdout, stderr io.Writer) error {
	log := cfg.Logger(stderr)
	creds, err := datadir.PersistCredentials(cfg.DataDir, cfg.Persist.Credentials, false, log)
	if err != nil {
		return err
	}
	pc, err := newPersistClient(cfg.Persist, creds, cfg.Region, nil)
	if err != nil {
		return err
	}
	c, err := newConsumer(cfg.DataDir, pc, localbus.ConsumerOptions{FactsLog: cfg.Bounds.FactsLog}, log)
	if err != nil {
		return err
	}
	defer c.Close()
	if drain != nil {
		// A drain retries a Persist that fails (backing off to 5 s) for as long as it
		// fails; a script or a cron job gives it a bound. What it delivered before the
		// bound stays delivered: the offset moves batch by batch.
		dctx, cancel := ctx, context.CancelFunc(func() {})
		if drain.Timeout > 0 {
			dctx, cancel = context.WithTimeout(ctx, drain.Timeout)
		}
		err := c.Drain(dctx)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			lag, _ := c.Lag()
			return fmt.Errorf("not drained within %s: delivered %d, %d bytes of the journal still queued (run it again once Persist answers): %w",
				drain.Timeout, c.Stats().Delivered, lag, err)
		}
		if err != nil {
			return err
		}
	} else if err := c.Run(ctx); err != nil {
		return err
	}
	st := c.Stats()
	if _, err := fmt.Fprintf(stdout, "delivered %d, invalid %d, refused %d\n", st.Delivered, st.Invalid, st.Refused); err != nil {
		return err
	}
	if drain != nil && st.Refused > 0 {
		return fmt.Errorf("persist refused %d click facts, kept in %s: once Persist takes them, run linoone recover --from-log %s",
			st.Refused, c.RefusedPath(), c.RefusedPath())
	}
	return nil
}
