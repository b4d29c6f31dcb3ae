package denylist_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/denylist/denylisttest"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

const list = `# deny list
evil.example
*.Phish.Example.
https://docs.example.com/shared/
http://files.example.org:8080/x

10.0.0.1
[::1]
bücher.example
`

func TestMatchEverySpelling(t *testing.T) {
	l, bad := denylist.ParseString(list)
	if len(bad) != 0 {
		t.Fatalf("malformed: %v", bad)
	}
	tests := []struct {
		target string
		kind   denylist.Kind // "": not blocked
	}{
		{"https://evil.example/", denylist.KindHost},
		{"https://EVIL.example/x", denylist.KindHost},
		{"https://evil.example./x", denylist.KindHost},
		{"HTTPS://evil.example:8443/x?y", denylist.KindHost},
		{"https://ｅｖｉｌ.example/", denylist.KindHost}, // fullwidth letters (UTS-46)
		{"https://sub.evil.example/", ""},            // a host rule is that host only
		{"https://phish.example/", denylist.KindDomain},
		{"https://login.phish.example/a", denylist.KindDomain},
		{"https://a.b.PHISH.EXAMPLE./", denylist.KindDomain},
		{"https://notphish.example/", ""},
		{"https://phish.example.com/", ""},
		{"https://docs.example.com/shared/doc1", denylist.KindPrefix},
		{"https://DOCS.example.com:443/shared/", denylist.KindPrefix},
		{"https://docs.example.com/shared", ""},
		{"http://docs.example.com/shared/doc1", ""}, // the scheme is part of the prefix
		{"https://docs.example.com/other/", ""},
		{"http://files.example.org:8080/xyz", denylist.KindPrefix},
		{"http://files.example.org/x", ""},
		{"http://10.0.0.1/", denylist.KindHost},
		{"http://0xa.0.0.1/", denylist.KindHost},         // hex
		{"http://012.0.0.1/", denylist.KindHost},         // octal
		{"http://10.1/", denylist.KindHost},              // two parts
		{"http://167772161/", denylist.KindHost},         // one number
		{"http://[::ffff:10.0.0.1]/", denylist.KindHost}, // IPv4-mapped IPv6
		{"http://[0:0::1]:8080/", denylist.KindHost},
		{"https://xn--bcher-kva.example/", denylist.KindHost},
		{"https://BÜCHER.example/", denylist.KindHost},
		{"https://good.example/", ""},
		{"not a url", ""},
		// Spellings a browser reads as a blocked host or path.
		{"https://%65vil.example/x", denylist.KindHost},                 // a percent-escaped letter
		{"https://%EF%BD%85vil.example/x", denylist.KindHost},           // an escaped fullwidth letter
		{"https://ev%C2%ADil.example/x", denylist.KindHost},             // an escaped soft hyphen
		{"https://login.b%C2%ADad.phish.example/", denylist.KindDomain}, // under a domain rule
		{"https://docs.example.com/x/../shared/a", denylist.KindPrefix},
		{"https://docs.example.com/./shared/a", denylist.KindPrefix},
		{"https://docs.example.com/%2e%2E/shared/a", denylist.KindPrefix},
		{"https://docs.example.com/x/.%2e/shared/a?q#f", denylist.KindPrefix},
		{`https://docs.example.com/x\..\shared\a`, denylist.KindPrefix},   // '\' is '/' to a browser
		{"https://docs.example.com/shared/x/..", denylist.KindPrefix},     // a trailing ".." leaves "/shared/"
		{"https://docs.example.com/x/%2e./shared/a", denylist.KindPrefix}, // ".." half escaped
		{"https://docs.example.com:0443/shared/a", denylist.KindPrefix},   // the port's leading zero
		{"https://docs.example.com/shared/../other/", ""},
		{"https://docs.example.com/sha%72ed/a", ""}, // other escapes compare as written
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			r, ok := l.Match(tt.target)
			if ok != (tt.kind != "") || r.Kind != tt.kind {
				t.Errorf("Match = %+v, %v; want kind %q", r, ok, tt.kind)
			}
		})
	}
}

// TestPrefixPathsAsBrowsersRequestThem: a prefix rule and a target compare by the
// path a browser requests, whichever way either is written: no path is "/", and the
// characters a browser percent-encodes compare encoded.
func TestPrefixPathsAsBrowsersRequestThem(t *testing.T) {
	l, bad := denylist.ParseString("https://root.example/\nhttps://q.example/?campaign=42\n" +
		"https://docs.example.com/geschäft/\nhttps://docs.example.com/%7Bid%7D/\nhttps://docs.example.com/a%20b?x='y'\n")
	if len(bad) != 0 {
		t.Fatalf("malformed: %v", bad)
	}
	tests := []struct {
		target string
		want   bool
	}{
		{"https://root.example", true},
		{"https://root.example?victim=1", true},
		{"https://root.example:443#x", true},
		{"https://root.example/any", true},
		{"http://root.example", false}, // the scheme is part of the prefix
		{"https://q.example?campaign=42", true},
		{"https://q.example/?campaign=42&x", true},
		{"https://q.example?campaign=4", false},
		{"https://docs.example.com/geschäft/a.pdf", true},
		{"https://docs.example.com/gesch%C3%A4ft/a.pdf", true},
		{"https://docs.example.com/gesch%c3%a4ft/a.pdf", false}, // escapes written otherwise compare as written
		{"https://docs.example.com/{id}/x", true},
		{"https://docs.example.com/%7Bid%7D/x", true},
		{"https://docs.example.com/a%20b?x=%27y%27", true},
		{"https://docs.example.com/a%20b?x='y'&z", true},
		{"https://docs.example.com/a%20b?x=y", false},
	}
	for _, tt := range tests {
		if _, got := l.Match(tt.target); got != tt.want {
			t.Errorf("Match(%q) = %v, want %v", tt.target, got, tt.want)
		}
	}
}

// TestRuleHostsDecoded: a rule's host may be written with percent-escapes, as a
// target's may; both compare decoded.
func TestRuleHostsDecoded(t *testing.T) {
	l, bad := denylist.ParseString("b%C3%BCcher.example\n*.b%C3%BCcher.test\nhttps://b%C3%BCcher.org/shared/\n")
	if len(bad) != 0 {
		t.Fatalf("malformed: %v", bad)
	}
	wantBlocked(t, l, "https://bücher.example/", "https://a.bücher.test/", "https://xn--bcher-kva.org/shared/x")
	if _, bad := denylist.ParseString("b%ZZcher.example\n"); len(bad) != 1 {
		t.Errorf("a broken escape is not reported malformed: %v", bad)
	}
}

// TestByteOrderMark: a UTF-8 byte order mark before a line (an editor's, at the
// file's start) is not part of its rule.
func TestByteOrderMark(t *testing.T) {
	l, bad := denylist.ParseString("\ufeff*.evil.example\r\n\ufeffhttps://docs.example.com/shared/\r\n\ufeff[2001:db8::1]\r\n")
	if len(bad) != 0 {
		t.Fatalf("malformed: %v", bad)
	}
	wantBlocked(t, l, "https://login.evil.example/", "https://docs.example.com/shared/a", "http://[2001:db8::1]/")
	if got := l.Rules()[0].Text; got != "*.evil.example" {
		t.Errorf("rule text %q, want it without the mark", got)
	}
}

// wantBlocked fails t for each target l does not block.
func wantBlocked(t *testing.T, l *denylist.List, targets ...string) {
	t.Helper()
	for _, target := range targets {
		if _, ok := l.Match(target); !ok {
			t.Errorf("Match(%q) = false, want blocked", target)
		}
	}
}

func TestMalformedLinesReportedAndIgnored(t *testing.T) {
	l, bad := denylist.ParseString("ok.example\nbad host\n*.10.0.0.1\nevil.*.example\nftp://x.example/\nexample.123\nhttps://u@x.example/\nhttps://x.example/p/ # trailing comment\n  # indented comment\nfine.example\n")
	var lines []int
	for _, e := range bad {
		if !errors.Is(e.Err, denylist.ErrMalformed) {
			t.Errorf("line %d: %v does not match ErrMalformed", e.Line, e.Err)
		}
		lines = append(lines, e.Line)
	}
	if diff := cmp.Diff([]int{2, 3, 4, 5, 6, 7, 8}, lines); diff != "" {
		t.Errorf("malformed lines (-want +got):\n%s", diff)
	}
	if l.Len() != 2 {
		t.Errorf("Len = %d, want 2 (the valid rules)", l.Len())
	}
	if _, ok := l.Match("https://fine.example/"); !ok {
		t.Error("a rule after malformed lines is not in force")
	}
}

func TestEmptyList(t *testing.T) {
	for _, s := range []string{"", "# only a comment\n\n"} {
		l, bad := denylist.ParseString(s)
		if l.Len() != 0 || len(bad) != 0 {
			t.Errorf("%q: Len %d, bad %v", s, l.Len(), bad)
		}
		if _, ok := l.Match("https://evil.example/"); ok {
			t.Errorf("%q blocks", s)
		}
	}
	var h denylist.Holder
	if _, blocked := h.Screen("https://evil.example/"); blocked {
		t.Error("the zero Holder blocks")
	}
}

func TestPollerKeepsLastGoodList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	h := &denylist.Holder{}
	p := &denylist.Poller{Path: path, Holder: h, Log: slog.New(slog.DiscardHandler)}
	if changed, err := p.Reload(); err != nil || !changed || h.List().Len() != 0 {
		t.Fatalf("absent file: changed %v, err %v, rules %d; want an empty list in force", changed, err, h.List().Len())
	}
	write(t, path, "evil.example\n")
	if _, err := p.Reload(); err != nil || !blocked(h, "https://evil.example/") {
		t.Fatalf("after writing: err %v, blocked %v", err, blocked(h, "https://evil.example/"))
	}
	if changed, _ := p.Reload(); changed {
		t.Error("an unchanged file reloaded")
	}
	// Unreadable, even for root: a directory where the file was.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reload(); err == nil {
		t.Error("an unreadable file reported no error")
	}
	if !blocked(h, "https://evil.example/") {
		t.Error("an unreadable file dropped the list in force")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	write(t, path, "other.example\n")
	if _, err := p.Reload(); err != nil || blocked(h, "https://evil.example/") || !blocked(h, "https://other.example/") {
		t.Errorf("after unblocking: err %v", err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func blocked(h *denylist.Holder, target string) bool {
	_, b := h.Screen(target)
	return b
}

func TestHundredThousandRules(t *testing.T) {
	s := denylisttest.Rules(100_000)
	start := time.Now()
	l, bad := denylist.ParseString(s)
	t.Logf("100,000 rules (%d bytes) loaded in %v", len(s), time.Since(start))
	if l.Len() != 100_000 || len(bad) != 0 {
		t.Fatalf("Len %d, malformed %d", l.Len(), len(bad))
	}
	for target, want := range map[string]bool{
		"https://host99999.example/":          true,
		"https://a.b.domain99997.example/":    true,
		"https://prefix99998.example/p/q":     true,
		"https://prefix99998.example/q":       false,
		"https://login.unlisted.example/path": false,
	} {
		if _, ok := l.Match(target); ok != want {
			t.Errorf("Match(%s) = %v, want %v", target, ok, want)
		}
	}
}

// BenchmarkMatch100k is the lookup cost per target with 100,000 rules in force.
func BenchmarkMatch100k(b *testing.B) {
	l, _ := denylist.ParseString(denylisttest.Rules(100_000))
	for _, target := range []string{"https://login.unlisted.example/some/path?q=1", "https://a.b.domain99997.example/x", "https://Login.Unlisted.Example./x"} {
		b.Run(target, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.Match(target)
			}
		})
	}
}

// TestPollerWaitsOutASaveInPlace: an editor saving in place empties the file, then
// writes it; a poll in between must not lift every block.
func TestPollerWaitsOutASaveInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	write(t, path, "*.evil.example\nbad.example\n")
	var logs syncbuf.Buffer
	h := &denylist.Holder{}
	p := &denylist.Poller{Path: path, Holder: h, Log: slog.New(slog.NewJSONHandler(&logs, nil)), Settle: 100 * time.Millisecond}
	if _, err := p.Reload(); err != nil || !blocked(h, "https://login.evil.example/") {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		changed, err := p.Reload() // the poll between the two
		if err != nil {
			t.Error(err)
		}
		done <- changed
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := f.WriteString("*.evil.example\nbad.example\nworse.example\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if changed := <-done; changed || !blocked(h, "https://login.evil.example/") {
		t.Fatalf("the emptied file was put in force (changed %v)", changed)
	}
	if _, err := p.Reload(); err != nil || !blocked(h, "https://worse.example/") {
		t.Fatalf("the saved file is not in force: %v", err)
	}
	// An empty list that stays is put in force, said at WARN; so is a removal.
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := p.Reload(); err != nil || !changed || blocked(h, "https://worse.example/") {
		t.Fatalf("an emptied list: changed %v, %v", changed, err)
	}
	write(t, path, "bad.example\n")
	if _, err := p.Reload(); err != nil || !blocked(h, "https://bad.example/") {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if changed, err := p.Reload(); err != nil || !changed || blocked(h, "https://bad.example/") {
		t.Fatalf("a removed list: changed %v, %v", changed, err)
	}
	for _, msg := range []string{"deny list emptied: every block is lifted", "deny list removed: every block is lifted"} {
		if !strings.Contains(logs.String(), `"level":"WARN","msg":"`+msg+`"`) {
			t.Errorf("no WARN %q in\n%s", msg, logs.String())
		}
	}
}

// TestPollerSeesAnEditThatKeepsItsTimes: cp -p, rsync -t or touch -r can give a
// rewritten list its old modification time and size; its change time still moves.
func TestPollerSeesAnEditThatKeepsItsTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	if err := os.WriteFile(path, []byte("good.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &denylist.Holder{}
	p := &denylist.Poller{Path: path, Holder: h, Log: slog.New(slog.DiscardHandler)}
	if _, err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // past the clock's tick, so the change time moves
	if err := os.WriteFile(path, []byte("evil.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if changed, err := p.Reload(); err != nil || !changed || !blocked(h, "https://evil.example/") {
		t.Fatalf("an edit with its old times: changed %v, %v", changed, err)
	}
}

// TestRulesThatCanNeverMatch is issue 44's finding 1: a rule whose host has an
// empty label names no host a target can have; it is malformed, and the error says
// what was probably meant.
func TestRulesThatCanNeverMatch(t *testing.T) {
	for rule, hint := range map[string]string{
		".evil.example":           `did you mean "*.evil.example" (the domain`,
		"..evil.example":          `did you mean "*.evil.example" (the domain`,
		"evil..example":           `did you mean "evil.example" (that host)`,
		"*..evil.example":         `did you mean "*.evil.example"`,
		"https://.evil.example/x": "empty label",
		"https://evil..example/x": "empty label",
		"%2eevil.example":         "empty label",
		"evil。。example":           "empty label",
		".":                       "invalid host",
	} {
		l, bad := denylist.ParseString(rule)
		if l.Len() != 0 || len(bad) != 1 {
			t.Errorf("%q: %d rules, %d malformed; want it malformed", rule, l.Len(), len(bad))
			continue
		}
		if err := bad[0].Err; !errors.Is(err, denylist.ErrMalformed) || !strings.Contains(err.Error(), hint) {
			t.Errorf("%q: %v; want it to say %q", rule, err, hint)
		}
	}
}
