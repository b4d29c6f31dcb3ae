package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/http/sigv4"
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
		err = cfg.local(getenv)
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

// local signs with the pair the local serve's data dir holds (or LINOONE_ACCESS_*),
// as linoone shorten does, and edits that serve's deny list and DLQ.
func (c *Config) local(getenv func(string) string) error {
	sh, err := config.LoadShorten(getenv)
	if err != nil {
		return err
	}
	creds, err := datadir.ProducerCredentials(sh.DataDir, sh.Credentials)
	if err != nil {
		return err
	}
	l := &Local{}
	if l.DenyList, err = config.LoadDenyList(getenv); err != nil {
		return err
	}
	if l.Status, err = config.LoadStatus(getenv); err != nil {
		return err
	}
	if l.Replay, err = config.LoadReplay(getenv); err != nil {
		return err
	}
	opts := append(apiOptions(), client.WithCredentials(creds.AccessKeyID, creds.SecretAccessKey), client.WithRegion(sh.Region))
	if c.API, err = client.New(sh.ManagementURL, opts...); err != nil {
		return err
	}
	from := sigv4.EnvAccessKeyID
	if sh.Credentials == (sigv4.Credentials{}) {
		from = filepath.Join(sh.DataDir, sigv4.CredentialsFile)
	}
	c.Endpoint, c.Local = sh.ManagementURL, l
	c.Identity = fmt.Sprintf("access key %s (from %s)", keyPrefix(creds.AccessKeyID), from)
	return nil
}

// deployed signs with the AWS default credential chain for a deployed endpoint and
// says whose credentials those are: STS's answer when it can be reached, else the
// access key's prefix and where it came from.
func (c *Config) deployed(ctx context.Context, endpoint string, getenv func(string) string) error {
	if err := config.CheckServiceURL(endpoint); err != nil {
		return fmt.Errorf("--endpoint %w", err)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS default configuration: %w", err)
	}
	if c.API, err = client.New(endpoint, append(apiOptions(), client.WithCredentialsProvider(awsCfg.Credentials))...); err != nil {
		return err
	}
	c.Endpoint = endpoint
	c.Identity, err = identity(ctx, awsCfg, getenv)
	return err
}

// identity names the credentials of awsCfg without revealing them.
func identity(ctx context.Context, awsCfg aws.Config, getenv func(string) string) (string, error) {
	if awsCfg.Credentials == nil {
		return "", errors.New("the AWS default credential chain found no credentials (environment, profile, SSO)")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	creds, err := awsCfg.Credentials.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("AWS credentials: %w", err)
	}
	source := cmp.Or(creds.Source, "the AWS default credential chain")
	if p := getenv("AWS_PROFILE"); p != "" {
		source += ", profile " + p
	}
	who := fmt.Sprintf("access key %s (from %s)", keyPrefix(creds.AccessKeyID), source)
	out, err := sts.NewFromConfig(awsCfg, func(o *sts.Options) { o.RetryMaxAttempts = 1 }).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return who + "; STS GetCallerIdentity failed, so the identity is unconfirmed", nil
	}
	return fmt.Sprintf("%s %s", aws.ToString(out.Arn), who), nil
}

// keyPrefix is enough of an access key id to tell keys apart, never all of it.
func keyPrefix(id string) string {
	if len(id) <= 8 {
		return "…"
	}
	return id[:8] + "…"
}
