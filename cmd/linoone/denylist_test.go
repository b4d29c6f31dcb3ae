package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
)

// TestDenyListBlockUnblock is issue 11's "done when", through the real serve binary:
// linoone block makes a new short URL to a target under the rule answer 422 and an
// existing one 410 within 5 s; unblock restores the 302. The times are measured.
func TestDenyListBlockUnblock(t *testing.T) {
	ctx := context.Background()
	in := newInstance(t)
	in.start()
	c := in.client()
	const target = "https://login.evil.example/x?victim=someone"
	res, err := c.ShortenWithResponse(ctx, nil, management.ShortenJSONRequestBody{TargetURL: target})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("shorten: %v %d %s", err, res.StatusCode(), res.Body)
	}
	tok := res.JSON201.Token
	if r := in.resolve(tok); r.StatusCode != http.StatusFound { // also puts it in the hot set
		t.Fatalf("before blocking: %d", r.StatusCode)
	}

	start := time.Now()
	out, errOut, err := in.cli("block", "*.evil.example")
	if err != nil || !strings.Contains(out, "domain rule") || !strings.Contains(out, "within 2s") {
		t.Fatalf("block: %v\n%s%s", err, out, errOut)
	}
	took := waitStatus(t, in, tok, http.StatusGone, start)
	t.Logf("edit to first 410: %v", took)
	for range 3 {
		if r := in.resolve(tok); r.StatusCode != http.StatusGone {
			t.Fatalf("GET after blocking: %d", r.StatusCode)
		}
	}
	res, err = c.ShortenWithResponse(ctx, nil, management.ShortenJSONRequestBody{TargetURL: "https://LOGIN.evil.example./y"})
	if err != nil || res.StatusCode() != http.StatusUnprocessableEntity || !strings.Contains(string(res.Body), "target-url-blocked") {
		t.Fatalf("shorten a blocked target: %v %d %s", err, res.StatusCode(), res.Body)
	}
	if out, _, _ := in.cli("blocked", "--check", target); !strings.Contains(out, "blocked by domain rule *.evil.example (line 1") {
		t.Errorf("blocked --check: %q", out)
	}

	start = time.Now()
	if out, errOut, err := in.cli("unblock", "*.evil.example"); err != nil {
		t.Fatalf("unblock: %v\n%s%s", err, out, errOut)
	}
	t.Logf("edit to first 302 after unblocking: %v", waitStatus(t, in, tok, http.StatusFound, start))
	if r := in.resolve(tok); r.StatusCode != http.StatusFound {
		t.Fatalf("GET after unblocking: %d", r.StatusCode)
	}
	if out, _, _ := in.cli("blocked", "--check", target); strings.TrimSpace(out) != "not blocked" {
		t.Errorf("blocked --check after unblock: %q", out)
	}
	in.waitClicks(tok, 2) // the 302s only: a 410 is not a visit
	time.Sleep(300 * time.Millisecond)
	if n := in.clicks(tok); n != 2 {
		t.Errorf("clicks %d, want 2: a 410 recorded a click", n)
	}
	for line := range strings.SplitSeq(in.logs.String(), "\n") {
		if strings.Contains(line, "blocked") && strings.Contains(line, "login.evil.example") {
			t.Errorf("a log line names the blocked target: %s", line)
		}
	}
	if !strings.Contains(in.logs.String(), `"rule_kind":"domain"`) {
		t.Errorf("no log line names the rule kind:\n%s", in.logs)
	}
}

// waitStatus asks HEAD /tok (answered as GET, never a click) until it answers want,
// for at most 5 s after start.
func waitStatus(t *testing.T, in *instance, tok string, want int, start time.Time) time.Duration {
	t.Helper()
	for time.Since(start) < 5*time.Second {
		res, err := noRedirect.Head("http://" + in.resolver + "/" + tok)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == want {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("token %s did not answer %d within 5 s", tok, want)
	return 0
}

// blockEnv is the environment of block and unblock on the deny list file at path
// (no serve answers at the resolver address).
func blockEnv(path string) func(string) string {
	return func(k string) string {
		switch k {
		case "LINOONE_DENYLIST_FILE":
			return path
		case "LINOONE_RESOLVER_ADDR":
			return "127.0.0.1:1"
		}
		return ""
	}
}

// TestUnblockTheFirstRuleAfterAByteOrderMark: a list saved by an editor that writes
// a byte order mark holds its first rule after the mark; unblock finds it there.
func TestUnblockTheFirstRuleAfterAByteOrderMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	if err := os.WriteFile(path, []byte("\ufeff*.evil.example\r\nok.example\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"unblock", "*.evil.example"}, blockEnv(path), &out, &errOut); code != 0 {
		t.Fatalf("unblock: exit %d, %q", code, &errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != "ok.example\n" {
		t.Errorf("list %q after unblock, want the other rule only", b)
	}
}
