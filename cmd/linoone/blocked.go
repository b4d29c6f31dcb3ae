package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/local/denyfile"
)

const blockedUsage = `usage: linoone blocked [--check URL]

Lists the deny list's rules, or says whether URL is blocked and by which rule:
with --check it exits 0 when URL is not blocked and 1 when it is, for scripts.

example:
  linoone blocked --check https://login.evil.example/
`

// errBlocked is blocked --check's exit 1 when the URL is blocked: stdout said so.
var errBlocked = silentError{errors.New("blocked")}

// blockedCmd is linoone blocked [--check URL]: the rules in force, or whether one
// URL is blocked and by which rule.
func blockedCmd(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("blocked")
	check := fs.String("check", "", "say whether this URL is blocked, and by which rule")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadDenyList(getenv)
	if err != nil {
		return err
	}
	lines, err := denyfile.Lines(cfg.File)
	if err != nil {
		return err
	}
	l, bad := denylist.ParseString(strings.Join(lines, "\n"))
	for _, e := range bad {
		fmt.Fprintf(stderr, "%s: %v (ignored)\n", cfg.File, e)
	}
	if *check != "" {
		r, ok := l.Match(*check)
		if !ok {
			fmt.Fprintln(stdout, "not blocked")
			return nil
		}
		fmt.Fprintf(stdout, "blocked by %s rule %s (line %d of %s)\n", r.Kind, r.Text, r.Line, cfg.File)
		return errBlocked
	}
	fmt.Fprintf(stdout, "%d rules in %s\n", l.Len(), cfg.File)
	for _, r := range l.Rules() {
		fmt.Fprintf(stdout, "%5d  %-6s  %s\n", r.Line, r.Kind, r.Text)
	}
	return nil
}
