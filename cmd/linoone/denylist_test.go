package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/datadir"
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

// TestBlockNeedsTheServesDataDir is issue 44's finding 2: block run where no serve
// has used the data dir (another working directory, a mistyped LINOONE_DATA_DIR)
// refuses, naming LINOONE_DATA_DIR, and creates nothing there; it never claims a
// rule it wrote to a list nothing reads is applied.
func TestBlockNeedsTheServesDataDir(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), ".linoone")
	env := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dataDir}[k] }
	for _, cmd := range []string{"block", "unblock"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{cmd, "*.evil.example"}, env, &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), "LINOONE_DATA_DIR") || strings.Contains(out.String(), "applies it") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 naming LINOONE_DATA_DIR", cmd, code, &out, &errOut)
		}
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("block created the data dir no serve used (%v)", err)
	}
}

// TestBlockSaysWhetherTheRunningServeReadsTheList: a serve running on the data dir
// records which list it polls; block says it applies the rule only when that is the
// list block edited, and fails otherwise.
func TestBlockSaysWhetherTheRunningServeReadsTheList(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("which process holds the data dir is known on Linux only")
	}
	dataDir := t.TempDir()
	holdDataDir(t, dataDir) // this process stands for the running serve
	own := filepath.Join(dataDir, "denylist.txt")
	other := filepath.Join(t.TempDir(), "other-denylist.txt")
	for i, tc := range []struct {
		serveReads string
		env        map[string]string
		code       int
		want       string
	}{
		{own, map[string]string{}, 0, fmt.Sprintf("the serve on %s (pid %d) applies it within 2s", dataDir, os.Getpid())},
		{other, map[string]string{}, 1, "not in force: the serve on " + dataDir},
		{own, map[string]string{"LINOONE_DENYLIST_FILE": other}, 1, "reads the deny list " + own + ", not " + other},
	} {
		rec := datadir.Listening{PID: os.Getpid(), Resolver: "127.0.0.1:1", Management: "127.0.0.1:2", DenyList: tc.serveReads}
		if err := datadir.RecordListening(dataDir, rec); err != nil {
			t.Fatal(err)
		}
		tc.env["LINOONE_DATA_DIR"] = dataDir
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"block", fmt.Sprintf("evil%d.example", i)}, func(k string) string { return tc.env[k] }, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("serve reads %s, env %v: exit %d, stdout %q, stderr %q; want %d and %q", tc.serveReads, tc.env, code, &out, &errOut, tc.code, tc.want)
		}
	}
}

// TestBlockedCheckAndUnblockAreScriptable: blocked --check exits 1 when the URL is
// blocked; unblock of a rule not in the list removes nothing, says so with the
// nearest rule, and exits 0 as block of a rule there already does.
func TestBlockedCheckAndUnblockAreScriptable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	if err := os.WriteFile(path, []byte("*.evil.example\nphish.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, blockEnv(path), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := cli("blocked", "--check", "https://a.evil.example/x"); code != 1 || !strings.Contains(out, "blocked by domain rule *.evil.example") || errOut != "" {
		t.Errorf("check of a blocked URL: exit %d, %q, %q; want 1 and the rule", code, out, errOut)
	}
	if code, out, _ := cli("blocked", "--check", "https://ok.example/"); code != 0 || strings.TrimSpace(out) != "not blocked" {
		t.Errorf("check of a URL not blocked: exit %d, %q", code, out)
	}
	if code, out, _ := cli("unblock", "*.evi.example"); code != 0 || !strings.Contains(out, `nothing removed; did you mean "*.evil.example"?`) {
		t.Errorf("unblock of a missing rule: exit %d, %q; want 0 and the nearest rule", code, out)
	}
	if code, out, _ := cli("block", "phish.example"); code != 0 || !strings.Contains(out, "already blocked") {
		t.Errorf("block of a rule there already: exit %d, %q", code, out)
	}
	if b, _ := os.ReadFile(path); string(b) != "*.evil.example\nphish.example\n" {
		t.Errorf("the list changed: %q", b)
	}
}

// TestBlockRefusesRulesThatCanNeverMatch is issue 44's finding 1: block refuses a
// rule no target can match (exit 1), says why and what was probably meant, and
// writes nothing.
func TestBlockRefusesRulesThatCanNeverMatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	for rule, want := range map[string]string{
		".evil.example":  `did you mean "*.evil.example"`,
		"..evil.example": `did you mean "*.evil.example"`,
		"evil..example":  `did you mean "evil.example"`,
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"block", rule}, blockEnv(path), &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), "empty label") || !strings.Contains(errOut.String(), want) || out.Len() != 0 {
			t.Errorf("block %s: exit %d, stdout %q, stderr %q; want 1 saying %q", rule, code, &out, &errOut, want)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused rule wrote the list (%v)", err)
	}
}
