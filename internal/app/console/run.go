package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"time"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/signing"
)

// Options are linoone console's flags.
type Options struct {
	Endpoint string // a deployed management API; "" for the local serve's
	Addr     string // host:port, loopback; port 0 picks one
	Open     bool   // open the login URL in the desktop's browser
}

// Run serves the console until ctx ends: it prints the login URL on stdout and
// logs (JSON) who did what on stderr.
func Run(ctx context.Context, o Options, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := CheckAddr(o.Addr); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg := Config{Log: log}
	var err error
	if o.Endpoint == "" {
		err = cfg.local(ctx, getenv)
	} else {
		err = cfg.deployed(ctx, o.Endpoint, getenv)
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	cfg.Addr = ln.Addr().String()
	s, err := New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(stdout, "linoone console signs as %s for %s\n", cfg.Identity, cfg.Endpoint)
	fmt.Fprintf(stdout, "open this one-time login URL (it works once):\n%s\n", s.LoginURL())
	if o.Open {
		if err := exec.Command("xdg-open", s.LoginURL()).Start(); err != nil {
			fmt.Fprintf(stdout, "could not open a browser (%v): open the URL above\n", err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// apiOptions are the client's options in the console: a page waits for at most two
// attempts, and no redirect is followed with a signature.
func apiOptions() []client.Option {
	hc := &http.Client{Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return []client.Option{client.WithHTTPClient(hc), client.WithRetry(2, 200*time.Millisecond, time.Second)}
}

// local signs as shorten does for the local serve (signing.Resolve without an
// endpoint), and edits that serve's deny list and DLQ.
func (c *Config) local(ctx context.Context, getenv func(string) string) error {
	l := &Local{}
	var err error
	if l.DenyList, err = config.LoadDenyList(getenv); err != nil {
		return err
	}
	if l.Status, err = config.LoadStatus(getenv); err != nil {
		return err
	}
	if l.Replay, err = config.LoadReplay(getenv); err != nil {
		return err
	}
	c.Local = l
	return c.connect(ctx, "", getenv)
}

// deployed signs for a deployed endpoint (the AWS default credential chain,
// unless a Linoone pair is set) and says whose credentials those are: STS's
// answer when it can be reached, else the access key's prefix and its source.
func (c *Config) deployed(ctx context.Context, endpoint string, getenv func(string) string) error {
	if err := config.CheckServiceURL(endpoint); err != nil {
		return fmt.Errorf("--endpoint %w", err)
	}
	return c.connect(ctx, endpoint, getenv)
}

// connect is the client of the management API at endpoint ("": the local
// serve's), signing with the credentials signing.Resolve picks.
func (c *Config) connect(ctx context.Context, endpoint string, getenv func(string) string) error {
	sh, err := config.LoadShorten(getenv)
	if err != nil {
		return err
	}
	s, err := signing.Resolve(ctx, signing.Request{Endpoint: endpoint, Config: sh, Getenv: getenv})
	if err != nil {
		return err
	}
	s.Confirm(ctx)
	opts := append(apiOptions(), client.WithCredentialsProvider(s.Provider), client.WithRegion(s.Region))
	if c.API, err = client.New(s.Base, opts...); err != nil {
		return err
	}
	c.Endpoint, c.Identity = s.Base, s.Identity
	return nil
}
