package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/signing"
	"github.com/linoone/linoone/internal/app/smoke"
	"github.com/linoone/linoone/internal/foundation/tty"
)

const smokeUsage = `usage: linoone smoke --from-terraform DIR [--redirects N] [--json]
       linoone smoke --resolver URL --management URL [--redirects N] [--json]

Checks a deployed environment from outside: it issues a short URL for a unique
target under example.com (signed with LINOONE_ACCESS_KEY_ID and
LINOONE_SECRET_ACCESS_KEY, the pair serve wrote to the data directory for a
management API on this machine, else the AWS default credential chain), follows no
redirect, and checks the 201, the 302 and its Location, GET /links/{token}, the 404
of an unknown token (JSON, and the HTML page a browser gets), /docs and
/openapi.yaml unsigned and that an unsigned POST /shorten is refused. Then it times
N redirects on one kept-alive connection and N on new connections, and issuances,
and prints p50/p90/p99 and a verdict. Exit 1 if any check fails.

It never deletes, blocks or changes anything it did not create; the short URLs it
creates are listed at the end, and its redirects count as clicks on them.
--json output is what 'linoone capacity --from-smoke FILE' reads.

example:
  linoone smoke --from-terraform terraform/envs/sandbox
  linoone smoke --resolver http://127.0.0.1:8080 --management http://127.0.0.1:8081 --redirects 50
  linoone smoke --from-terraform terraform/envs/prod --json > smoke.json && linoone capacity --from-smoke smoke.json
`

// smokeCmd runs linoone smoke: the work is internal/app/smoke's.
func smokeCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("smoke")
	tfDir := fs.String("from-terraform", "", "read resolver_url and management_url from terraform output -json in `DIR`")
	resolver := fs.String("resolver", "", "resolver base `URL` (instead of --from-terraform)")
	management := fs.String("management", "", "management API base `URL` (instead of --from-terraform)")
	redirects := fs.Int("redirects", 200, "timed redirects on each kind of connection (1-10000)")
	issuances := fs.Int("issuances", 20, "timed issuances, each a new short URL (1-1000)")
	region := fs.String("region", "", "SigV4 region (default: the one in an execute-api URL, else the AWS configuration's, else $LINOONE_REGION or us-east-1)")
	timeout := fs.Duration("timeout", 10*time.Second, "bound on each request")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	fromTF := *tfDir != ""
	switch {
	case fromTF == (*resolver != "" || *management != ""):
		return &usageError{fs: fs, err: errors.New("give --from-terraform DIR, or --resolver URL and --management URL")}
	case !fromTF && (*resolver == "" || *management == ""):
		return &usageError{fs: fs, err: errors.New("--resolver and --management go together")}
	case *redirects < 1 || *redirects > 10000:
		return &usageError{fs: fs, err: fmt.Errorf("--redirects %d: want 1 to 10000", *redirects)}
	case *issuances < 1 || *issuances > 1000:
		return &usageError{fs: fs, err: fmt.Errorf("--issuances %d: want 1 to 1000", *issuances)}
	case *timeout <= 0:
		return &usageError{fs: fs, err: fmt.Errorf("--timeout %v: want a positive duration", *timeout)}
	}
	target := smoke.Target{Resolver: *resolver, Management: *management}
	if fromTF {
		var err error
		if target, err = smoke.FromTerraform(ctx, *tfDir); err != nil {
			return err
		}
	} else if err := target.Check(); err != nil {
		return &usageError{fs: fs, err: err}
	}
	cfg, err := config.LoadShorten(getenv)
	if err != nil {
		return err
	}
	s, err := signing.Resolve(ctx, signing.Request{Endpoint: target.Management, Region: *region, Config: cfg, Getenv: getenv})
	if err != nil {
		return err
	}
	opts := smoke.Options{Target: target, Redirects: *redirects, Issuances: *issuances, Timeout: *timeout,
		Signer: s.Transport(http.DefaultTransport.(*http.Transport).Clone())}
	r, err := smoke.Run(ctx, opts, s.Identity)
	if err != nil {
		return err
	}
	if *asJSON {
		err = smoke.WriteJSON(stdout, r)
	} else {
		err = smoke.WriteText(stdout, r)
	}
	if err != nil || r.OK {
		return err
	}
	return failedChecks(r)
}

// failedChecks is the error of a run whose checks failed, each named with why.
func failedChecks(r smoke.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d checks failed:", len(r.Failed()), len(r.Checks))
	for _, c := range r.Checks {
		if !c.OK {
			fmt.Fprintf(&b, "\n  %s: %s", c.Name, tty.Printable(c.Detail))
		}
	}
	return errors.New(b.String())
}
