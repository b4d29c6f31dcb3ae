package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/foundation/flock"
)

// blockCmd is linoone block RULE and linoone unblock RULE: they add or remove one
// rule of the deny list file, atomically, and say what the running serve will do.
func blockCmd(ctx context.Context, name string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
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
	path, unlock, err := lockDenyList(cfg.File)
	if err != nil {
		return err
	}
	defer unlock()
	lines, err := readLines(path)
	if err != nil {
		return err
	}
	kept := lines[:0:0]
	for _, line := range lines {
		if denylist.LineText(line) != rule {
			kept = append(kept, line)
		}
	}
	switch {
	case name == "block" && len(kept) < len(lines):
		fmt.Fprintf(stdout, "%s is already blocked (%s rule) in %s\n", rule, kind, cfg.File)
		return nil
	case name == "block":
		kept = append(lines, rule)
	case len(kept) == len(lines):
		return fmt.Errorf("%s is not in the deny list %s", rule, cfg.File)
	}
	if err := writeAtomically(path, kept); err != nil {
		return err
	}
	effect := "new short URLs to matching targets answer 422 target-url-blocked and existing ones 410 link-blocked"
	if name == "unblock" {
		effect = "matching short URLs redirect again and can be issued, unless another rule matches"
	}
	fmt.Fprintf(stdout, "%sed %s (%s rule) in %s\n%s\n", name, rule, kind, cfg.File, whenInForce(ctx, cfg.ResolverAddr, effect))
	return nil
}

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
	lines, err := readLines(cfg.File)
	if err != nil {
		return err
	}
	l, bad := denylist.ParseString(strings.Join(lines, "\n"))
	for _, e := range bad {
		fmt.Fprintf(stderr, "%s: %v (ignored)\n", cfg.File, e)
	}
	if *check != "" {
		if r, ok := l.Match(*check); ok {
			fmt.Fprintf(stdout, "blocked by %s rule %s (line %d of %s)\n", r.Kind, r.Text, r.Line, cfg.File)
		} else {
			fmt.Fprintln(stdout, "not blocked")
		}
		return nil
	}
	fmt.Fprintf(stdout, "%d rules in %s\n", l.Len(), cfg.File)
	for _, r := range l.Rules() {
		fmt.Fprintf(stdout, "%5d  %-6s  %s\n", r.Line, r.Kind, r.Text)
	}
	return nil
}

// lockDenyList takes the edit lock of the deny list at file, beside the file a
// symlink there leads to, and returns that file's path: block and unblock read,
// change and replace the list under it, so that edits running at once all land, and
// through a symlink the list it points to is edited, not replaced by a copy.
func lockDenyList(file string) (path string, unlock func(), err error) {
	path = file
	if real, err := filepath.EvalSymlinks(file); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("deny list: %w", err)
	}
	l, err := flock.Open(filepath.Join(dir, "."+filepath.Base(path)+".lock"))
	if err != nil {
		return "", nil, fmt.Errorf("deny list: %w", err)
	}
	if err := l.Lock(); err != nil {
		_ = l.Close()
		return "", nil, fmt.Errorf("deny list: %w", err)
	}
	return path, func() { _ = l.Close() }, nil // closing releases the lock
}

// readLines reads the deny list file; an absent file has no lines.
func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deny list: %w", err)
	}
	s := strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// writeAtomically replaces path with lines through a temporary file in the same
// directory and a rename, so serve never reads half a list.
func writeAtomically(path string, lines []string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".denylist-*.tmp")
	if err != nil {
		return fmt.Errorf("deny list: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename: already gone
	text := strings.Join(lines, "\n")
	if text != "" {
		text += "\n"
	}
	// The list keeps its mode: a serve running under another account may read it
	// (CreateTemp makes 0600).
	if fi, serr := os.Stat(path); serr == nil {
		err = f.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		_, err = f.WriteString(text)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("deny list: %w", err)
	}
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
			return fmt.Sprintf("the serve on %s applies it within %v: %s", resolverAddr, denyListPoll, effect)
		}
	}
	return fmt.Sprintf("no serve answers on %s; the next serve start applies it: %s", resolverAddr, effect)
}
