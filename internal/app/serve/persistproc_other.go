//go:build !unix

package serve

import (
	"context"
	"errors"
	"io"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// persistProc is unix-only; elsewhere local Persist runs inside serve.
type persistProc struct{}

// PersistChild is not needed where local Persist runs inside serve.
func PersistChild(func(string) string, io.Reader, io.Writer, io.Writer) error {
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
