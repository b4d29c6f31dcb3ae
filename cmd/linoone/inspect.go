package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/producer"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/tty"
)

const inspectUsage = `usage: linoone inspect [--json] [--management-url URL] TOKEN|SHORT_URL

Shows where a short URL goes without visiting it (no click is recorded): its token,
short URL, target URL, when Persist stored it (when Persist returns it), and whether
the deny list in force blocks it, by which rule. The request is signed like
shorten's; with --json it prints the API's answer.

example:
  linoone inspect 7BTadEDkJ8
  linoone inspect https://s.example.com/7BTadEDkJ8 --json
`

// inspectCmd prints GET /links/{token} through the generated client.
func inspectCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("inspect")
	managementURLFlag(fs)
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	tok, err := tokenArg(fs, pos[0])
	if err != nil {
		return err
	}
	api, err := managementClient(ctx, getenv, fs, 30*time.Second)
	if err != nil {
		return err
	}
	call := fmt.Sprintf("GET %s/links/%s", api.Base, tok)
	res, err := api.Client.GetLinkWithResponse(ctx, tok)
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return producer.Print(stdout, *asJSON, producer.Answer{Call: call, Status: res.StatusCode(), Body: res.Body}, "Link", res.JSON200, func(l *management.Link) error {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		// The server's strings are quoted if they do not print: a target URL is
		// printed where an operator decides whether to block it.
		fmt.Fprintf(tw, "token\t%s\nshort_url\t%s\ntarget_url\t%s\n", tty.Printable(l.Token), tty.Printable(l.ShortURL), tty.Printable(l.TargetURL))
		if l.CreatedAt != nil {
			fmt.Fprintf(tw, "created_at\t%s\n", l.CreatedAt.UTC().Format(time.RFC3339Nano))
		}
		fmt.Fprintf(tw, "blocked\t%s\n", blockedText(l))
		return tw.Flush()
	})
}

// blockedText is the deny list's verdict on a link as inspect and links print it:
// "no", or "yes: <kind> rule <rule> (line N)".
func blockedText(l *management.Link) string {
	if !l.Blocked || l.BlockRule == nil {
		return "no"
	}
	s := fmt.Sprintf("yes: %s rule %s", l.BlockRule.Kind, tty.Printable(l.BlockRule.Rule))
	if l.BlockRule.Line != nil {
		s += fmt.Sprintf(" (line %d)", *l.BlockRule.Line)
	}
	return s
}

// managementURLFlag is the --management-url flag of every command that calls the
// management API; managementClient reads it.
func managementURLFlag(fs *flag.FlagSet) {
	fs.String("management-url", "", "management API base URL (default $LINOONE_MANAGEMENT_URL or http://$LINOONE_MANAGEMENT_ADDR)")
}

// managementClient is the management API at --management-url, or where the
// environment says, signing as internal/app/signing picks (producer.Connect). A
// URL with userinfo is refused, as LINOONE_MANAGEMENT_URL is by config: SigV4 signs
// in a header, so a password there serves nothing, and every message naming the
// URL would print it.
func managementClient(ctx context.Context, getenv func(string) string, fs *flag.FlagSet, timeout time.Duration) (producer.API, error) {
	endpoint := fs.Lookup("management-url").Value.String()
	if endpoint != "" {
		if err := config.CheckServiceURL(endpoint); err != nil {
			return producer.API{}, &usageError{fs: fs, err: fmt.Errorf("--management-url %w", err)}
		}
	}
	cfg, err := config.LoadShorten(getenv)
	if err != nil {
		return producer.API{}, err
	}
	return producer.Connect(ctx, endpoint, cfg, timeout)
}

// tokenArg is the token of a TOKEN|SHORT_URL argument, or a usage error saying what
// a token looks like: nothing is sent for an argument that cannot name a short URL.
func tokenArg(fs *flag.FlagSet, arg string) (string, error) {
	tok := producer.TokenOf(arg)
	if !shorturl.IsToken(tok) {
		return "", &usageError{fs: fs, err: fmt.Errorf("%s is not a token or a short URL: a token is 10 letters and digits, such as 7BTadEDkJ8, the last part of its short URL", strconv.Quote(arg))}
	}
	return tok, nil
}
