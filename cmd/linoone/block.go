package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/serve"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/local/denyfile"
)

const blockUsage = `usage: linoone block RULE

Adds a rule to the deny list (LINOONE_DENYLIST_FILE): a host, '*.domain' (the domain
and its subdomains) or an http(s) URL prefix. A running serve applies it within 2 s.

example:
  linoone block '*.evil.example'
`

const unblockUsage = `usage: linoone unblock RULE

Removes a rule from the deny list (LINOONE_DENYLIST_FILE), written as it was added.

example:
  linoone unblock '*.evil.example'
`

// blockCmd is linoone block RULE and linoone unblock RULE: they add or remove one
// rule of the deny list file, atomically, and say what the running serve will do.
func blockCmd(ctx context.Context, name string, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags(name)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDenyList(getenv)
	if err != nil {
		return err
	}
	rule := denylist.LineText(pos[0])
	l, bad := denylist.ParseString(rule)
	if len(bad) > 0 || l.Len() != 1 {
		return fmt.Errorf("%q is not a rule: a host, *.domain or an http(s) URL prefix", rule)
	}
	kind := l.Rules()[0].Kind
	effect := "new short URLs to matching targets answer 422 target-url-blocked and existing ones 410 link-blocked"
	if name == "block" {
		added, err := denyfile.Add(cfg.File, rule)
		if err != nil {
			return err
		}
		if !added {
			fmt.Fprintf(stdout, "%s is already blocked (%s rule) in %s\n", rule, kind, cfg.File)
			return nil
		}
	} else {
		removed, err := denyfile.Remove(cfg.File, rule)
		if err != nil {
			return err
		}
		if !removed {
			return fmt.Errorf("%s is not in the deny list %s", rule, cfg.File)
		}
		effect = "matching short URLs redirect again and can be issued, unless another rule matches"
	}
	fmt.Fprintf(stdout, "%sed %s (%s rule) in %s\n%s\n", name, rule, kind, cfg.File, whenInForce(ctx, cfg.ResolverAddr, effect))
	return nil
}

// whenInForce says when a running serve applies the edit: it polls the file.
func whenInForce(ctx context.Context, resolverAddr, effect string) string {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+resolverAddr+"/healthz", nil)
	if err == nil {
		var res *http.Response
		if res, err = http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			return fmt.Sprintf("the serve on %s applies it within %v: %s", resolverAddr, serve.DenyListPoll, effect)
		}
	}
	return fmt.Sprintf("no serve answers on %s; the next serve start applies it: %s", resolverAddr, effect)
}
