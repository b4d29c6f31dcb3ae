package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
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
A rule that is not there is reported, with the nearest one that is, and removes
nothing (exit 0, as block of a rule that is there already).

example:
  linoone unblock '*.evil.example'
`

// blockCmd is linoone block RULE and linoone unblock RULE: they add or remove one
// rule of the deny list file, atomically, and say whether and when a serve applies
// it. An edit that no running serve can apply fails (exit 1) saying so: a takedown
// never reports success it lacks.
func blockCmd(name string, args []string, getenv func(string) string, stdout io.Writer) error {
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
	if len(bad) > 0 {
		// Why, and what was probably meant: a rule block accepted but no target can
		// match would be reported in force and take nothing down.
		why := strings.TrimPrefix(bad[0].Err.Error(), denylist.ErrMalformed.Error()+": ")
		return fmt.Errorf("%q is not a rule (a host, *.domain or an http(s) URL prefix): %s", rule, why)
	}
	if l.Len() != 1 {
		return fmt.Errorf("%q is not a rule: a host, *.domain or an http(s) URL prefix", rule)
	}
	kind := l.Rules()[0].Kind
	if !cfg.FileSet {
		// The list is the data dir's: one no serve has used is most often the wrong
		// directory, and writing there would make a list nothing reads.
		if err := datadir.CheckServed(cfg.DataDir); err != nil {
			return fmt.Errorf("%w, or set LINOONE_DATA_DIR to the data dir of the serve to block in", err)
		}
	}
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
		if !removed { // as block of a rule there already: nothing to do, and said so
			fmt.Fprintf(stdout, "%s is not in the deny list %s: nothing removed%s\n", rule, cfg.File, nearestRule(cfg.File, rule))
			return nil
		}
		effect = "matching short URLs redirect again and can be issued, unless another rule matches"
	}
	fmt.Fprintf(stdout, "%sed %s (%s rule) in %s\n", name, rule, kind, cfg.File)
	return whenInForce(stdout, cfg, effect)
}

// whenInForce says when a serve applies the edit, from the record the serve
// running on the data dir keeps there: within serve.DenyListPoll when it polls this
// very file. It fails when that serve reads another file.
func whenInForce(stdout io.Writer, cfg config.DenyList, effect string) error {
	l, state, err := datadir.Serving(cfg.DataDir)
	if err != nil {
		return err
	}
	file := cfg.File
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	switch {
	case state == "stopped" && cfg.FileSet:
		fmt.Fprintf(stdout, "no serve runs on %s; the next serve started with LINOONE_DENYLIST_FILE=%s applies it: %s\n", cfg.DataDir, file, effect)
	case state == "stopped":
		fmt.Fprintf(stdout, "no serve runs on %s; the next serve start applies it: %s\n", cfg.DataDir, effect)
	case l.DenyList == file && state == "running":
		fmt.Fprintf(stdout, "the serve on %s (pid %d) applies it within %v: %s\n", cfg.DataDir, l.PID, serve.DenyListPoll, effect)
	case l.DenyList == file:
		fmt.Fprintf(stdout, "the serve that last ran on %s (pid %d) applies it within %v if it still runs: %s\n", cfg.DataDir, l.PID, serve.DenyListPoll, effect)
	case l.DenyList != "":
		return fmt.Errorf("not in force: the serve on %s (pid %d) reads the deny list %s, not %s (LINOONE_DENYLIST_FILE)", cfg.DataDir, l.PID, l.DenyList, file)
	case state == "running":
		return fmt.Errorf("not known to be in force: the serve on %s (pid %d) did not record which deny list it reads; restart it to be sure", cfg.DataDir, l.PID)
	default:
		fmt.Fprintf(stdout, "a serve on %s applies it within %v of reading %s: %s\n", cfg.DataDir, serve.DenyListPoll, file, effect)
	}
	return nil
}

// nearestRule is "; did you mean X?" for the rule of the list at file nearest to
// rule (at most a third of its length in edits away), or "".
func nearestRule(file, rule string) string {
	lines, err := denyfile.Lines(file)
	if err != nil {
		return ""
	}
	best, bestD := "", len(rule)/3+1
	for _, line := range lines {
		text := denylist.LineText(line)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if d := editDistance(strings.ToLower(rule), strings.ToLower(text)); d < bestD {
			best, bestD = text, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}
