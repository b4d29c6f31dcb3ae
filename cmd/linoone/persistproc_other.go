//go:build !unix

package main

import (
	"context"
	"errors"
	"io"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// persistProc is unix-only; elsewhere local Persist runs inside serve.
type persistProc struct{}

func persistChild(args []string, _ func(string) string, _ io.Reader, _, _ io.Writer) error {
	if _, err := parse(newFlags(persistChildCommand), args, 0, 0); err != nil {
		return err
	}
	return errors.New("local Persist runs inside serve on this system")
}

// startPersist runs local Persist inside serve: a child process needs a listener
// passed as a file, which this system does not offer.
func (s *stack) startPersist(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, _ io.Writer) error {
	lp, err := openLocalPersist(ctx, cfg, creds, s.log)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, lp.Close)
	s.persist = newServer(lp.Handler(), s.log)
	return nil
}

func (s *stack) stopPersist(ctx context.Context) {
	if s.persist != nil {
		ctx, cancel := context.WithTimeout(ctx, persistStopGrace)
		defer cancel()
		_ = s.persist.Shutdown(ctx)
	}
}
