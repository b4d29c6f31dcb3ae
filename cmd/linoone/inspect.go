package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/http/sigv4"
)

const inspectUsage = `usage: linoone inspect [--json] [--management-url URL] TOKEN|SHORT_URL

Shows where a short URL goes without visiting it (no click is recorded): its token,
short URL, target URL and, when Persist returns one, when Persist stored it. The
request is signed like shorten's; with --json it prints the API's answer.

example:
  linoone inspect 7BTadEDkJ8
  linoone inspect https://s.example.com/7BTadEDkJ8 --json
`

// inspect prints GET /links/{token} through the generated client.
func inspect(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("inspect")
	managementURLFlag(fs)
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	api, err := managementClient(getenv, fs, 30*time.Second)
	if err != nil {
		return err
	}
	tok := tokenOf(pos[0])
	call := fmt.Sprintf("GET %s/links/%s", api.base, tok)
	res, err := api.client.GetLinkWithResponse(ctx, tok)
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return printAnswer(stdout, *asJSON, answer{call, res.StatusCode(), res.Body}, "Link", res.JSON200, func(l *management.Link) error {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		// The server's strings are quoted if they do not print: a target URL is
		// printed where an operator decides whether to block it.
		fmt.Fprintf(tw, "token\t%s\nshort_url\t%s\ntarget_url\t%s\n", printable(l.Token), printable(l.ShortURL), printable(l.TargetURL))
		if l.CreatedAt != nil {
			fmt.Fprintf(tw, "created_at\t%s\n", l.CreatedAt.UTC().Format(time.RFC3339Nano))
		}
		return tw.Flush()
	})
}

// tokenOf is the token of a short URL (its last path segment), or s itself.
func tokenOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return path.Base(u.Path)
	}
	return s
}

// managementURLFlag is the --management-url flag of every command that calls the
// management API; managementClient reads it.
func managementURLFlag(fs *flag.FlagSet) {
	fs.String("management-url", "", "management API base URL (default $LINOONE_MANAGEMENT_URL or http://$LINOONE_MANAGEMENT_ADDR)")
}

// managementAPI is the management API as a command reaches it.
type managementAPI struct {
	client *management.ClientWithResponses
	base   string // its base URL, as messages show it
	signer string // whose pair signs the requests, for a message when the API refuses it
}

// managementClient is the generated management client, signing with the producer's
// credentials. It follows no redirect: the transport signs every request it sends,
// so a redirect to another host would be handed a fresh signature (and the body)
// to replay against this API. A management URL with userinfo is refused, as
// LINOONE_MANAGEMENT_URL is by config: SigV4 signs in a header, so a password there
// serves nothing, and every message naming the URL would print it.
func managementClient(getenv func(string) string, fs *flag.FlagSet, timeout time.Duration) (managementAPI, error) {
	endpoint := fs.Lookup("management-url").Value.String()
	if endpoint != "" {
		if err := config.CheckServiceURL(endpoint); err != nil {
			return managementAPI{}, &usageError{fs: fs, err: fmt.Errorf("--management-url %w", err)}
		}
	}
	cfg, err := config.LoadShorten(getenv)
	if err != nil {
		return managementAPI{}, err
	}
	if endpoint == "" {
		endpoint = cfg.ManagementURL
	}
	creds, err := producerCredentials(cfg)
	if err != nil {
		return managementAPI{}, err
	}
	hc := &http.Client{Timeout: timeout, Transport: creds.Transport(nil, cfg.Region, "execute-api"),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := strings.TrimRight(endpoint, "/")
	client, err := management.NewClientWithResponses(base, management.WithHTTPClient(hc))
	if err != nil {
		return managementAPI{}, fmt.Errorf("management client: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return managementAPI{}, fmt.Errorf("management client: %w", err)
	}
	signer := sigv4.EnvAccessKeyID + " and " + sigv4.EnvSecretAccessKey
	if cfg.Credentials == (sigv4.Credentials{}) {
		signer = fmt.Sprintf("the pair serve wrote to %s (LINOONE_DATA_DIR)", filepath.Join(cfg.DataDir, sigv4.CredentialsFile))
	}
	return managementAPI{client: client, base: u.Redacted(), signer: signer}, nil
}
