package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/serve"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
	"github.com/linoone/linoone/internal/testutil/testlayer"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// consoleReport is what testdata/console_browser.mjs saw.
type consoleReport struct {
	Steps         []string `json:"steps"`
	Error         string   `json:"error"`
	LoginStatus   int      `json:"loginStatus"`
	AfterLogin    string   `json:"afterLogin"`
	ShortURL      string   `json:"shortURL"`
	Clipboard     string   `json:"clipboard"`
	Token         string   `json:"token"`
	SearchTerm    string   `json:"searchTerm"`
	SearchRows    int      `json:"searchRows"`
	SearchFound   bool     `json:"searchFound"`
	QRShown       bool     `json:"qrShown"`
	QRPNG         []byte   `json:"qrPNG"` // base64 in the JSON
	QRDisposition string   `json:"qrDisposition"`
	Unique        string   `json:"uniqueVisitors"`
	Browsers      string   `json:"browsers"`
	FirstVisit    int      `json:"firstVisit"`
	BarAfterMs    int      `json:"barAfterMs"`
	BarSVG        string   `json:"barSVG"`
	BlockConfirm  string   `json:"blockConfirm"`
	BlockNotice   string   `json:"blockNotice"`
	BlockBadge    string   `json:"blockBadge"`
	GoneAfterMs   int      `json:"goneAfterMs"`
	DenyRules     int      `json:"denyRules"`
	UnblockNotice string   `json:"unblockNotice"`
	BackAfterMs   int      `json:"backAfterMs"`
	Health        string   `json:"health"`
	PhoneOverflow bool     `json:"phoneOverflow"`
	CrossOrigin   int      `json:"crossOriginStatus"`
	CrossText     string   `json:"crossOriginText"`
	SecondLogin   int      `json:"secondLoginStatus"`
	SecondText    string   `json:"secondLoginText"`
	ConsoleErrors []string `json:"consoleErrors"`
	External      []string `json:"external"`
	Pages         map[string]struct {
		Screenshot string `json:"screenshot"`
		Violations []struct {
			ID     string `json:"id"`
			Impact string `json:"impact"`
			Nodes  int    `json:"nodes"`
		} `json:"violations"`
	} `json:"pages"`
}

// TestConsoleInBrowser runs `linoone console` against a real serve and drives it in
// headless Chromium (testdata/console_browser.mjs): login, shorten and Copy, find,
// search by target, visit and today's bar, unique visitors and browsers, the QR
// shown and its PNG decoded, block → 410 within the deny list's promise, unblock → 302,
// the used login URL refused, a cross-origin form refused; a screenshot per page in
// test-artifacts/ (or $LINOONE_TEST_ARTIFACTS) and axe-core with no serious or
// critical finding. A foreign Host is refused too.
func TestConsoleInBrowser(t *testing.T) {
	testlayer.Skip(t, testlayer.Browser)
	node, root, artifacts := browserPrereqs(t)
	axe := filepath.Join(root, "node_modules", "axe-core", "axe.min.js")
	if _, err := os.Stat(axe); err != nil {
		t.Fatalf("the console browser test needs the pinned axe-core: run scripts/install-npm-tools.sh: %v", err)
	}
	in := newInstance(t)
	in.start()
	addr := testport.Free(t)
	login, logs := startConsole(t, in, addr)

	req, _ := http.NewRequest(http.MethodGet, login, nil)
	req.Host = "evil.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("Host: evil.example: %v %v, want 421", res, err)
	} else {
		res.Body.Close()
	}

	landing := landingServer(t, "http://"+addr)
	target := "http://landing.example/console-" + strings.ToLower(rand.Text()[:8]) + "?utm_source=test"
	cfg, _ := json.Marshal(map[string]any{"login": login, "origin": "http://" + addr, "target": target, "landing": landing,
		"artifacts": artifacts, "axe": axe, "promiseMs": serve.DenyListPoll.Milliseconds()})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "console_browser.mjs"), string(cfg))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var r consoleReport
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil && r.Error == "" {
		t.Fatalf("console in the browser: %v %v\n%s\nstderr: %s", err, jerr, out, stderr.String())
	}
	if r.Error != "" {
		t.Fatalf("the browser script failed after steps %v: %s\nconsole log:\n%s", r.Steps, r.Error, logs)
	}
	checkConsoleReport(t, r, target)
	t.Logf("block → 410 after %d ms, unblock → 302 after %d ms (deny list promise %v); today's bar after %d ms",
		r.GoneAfterMs, r.BackAfterMs, serve.DenyListPoll, r.BarAfterMs)

	for _, action := range []string{`"action":"shorten"`, `"action":"block"`, `"action":"unblock"`, `"msg":"console login"`} {
		if !strings.Contains(logs.String(), action) {
			t.Errorf("the console's log lacks %s:\n%s", action, logs)
		}
	}
	if secret := in.credentials().SecretAccessKey; strings.Contains(logs.String(), secret) {
		t.Error("the console logged the secret key")
	}
}

// checkConsoleReport holds the browser's report to what an operator must see.
func checkConsoleReport(t *testing.T, r consoleReport, target string) {
	t.Helper()
	switch {
	case r.LoginStatus != http.StatusOK || strings.Contains(r.AfterLogin, "secret="):
		t.Errorf("login: %d, then at %s", r.LoginStatus, r.AfterLogin)
	case !strings.HasSuffix(r.ShortURL, "/"+r.Token) || len(r.Token) != 10:
		t.Errorf("short URL %q", r.ShortURL)
	case r.Clipboard != r.ShortURL:
		t.Errorf("clipboard %q, want %q", r.Clipboard, r.ShortURL)
	}
	if !r.SearchFound || r.SearchRows != 1 {
		t.Errorf("searching %q listed %d links, the new one among them: %v; want it alone", r.SearchTerm, r.SearchRows, r.SearchFound)
	}
	if text, err := qrdecode.PNG(r.QRPNG); err != nil || text != r.ShortURL || !r.QRShown || !strings.Contains(r.QRDisposition, "attachment") {
		t.Errorf("QR: shown %v, PNG (%s) decodes to %q, %v; want %s", r.QRShown, r.QRDisposition, text, err, r.ShortURL)
	}
	if !strings.HasPrefix(r.Unique, "1 ") || !strings.Contains(r.Browsers, "Chrome") {
		t.Errorf("unique visitors %q, browsers %q; want 1 visitor with Chrome", r.Unique, r.Browsers)
	}
	if r.FirstVisit != http.StatusFound || r.BarAfterMs < 0 || r.BarSVG != "1" {
		t.Errorf("visit: %d, today's bar after %d ms (SVG says %q), want 302 and 1", r.FirstVisit, r.BarAfterMs, r.BarSVG)
	}
	if !strings.Contains(r.BlockConfirm, target) || !strings.Contains(r.BlockNotice, "Blocked") || !strings.Contains(r.BlockBadge, "BLOCKED") {
		t.Errorf("block: confirmation %q, notice %q, badge %q", r.BlockConfirm, r.BlockNotice, r.BlockBadge)
	}
	promise := int((serve.DenyListPoll + time.Second).Milliseconds())
	if r.GoneAfterMs < 0 || r.GoneAfterMs > promise || r.BackAfterMs < 0 || r.BackAfterMs > promise {
		t.Errorf("410 after %d ms and 302 again after %d ms, want both within %d ms", r.GoneAfterMs, r.BackAfterMs, promise)
	}
	if r.DenyRules != 1 || !strings.Contains(r.UnblockNotice, "Unblocked") {
		t.Errorf("deny list rows %d, unblock notice %q", r.DenyRules, r.UnblockNotice)
	}
	if !strings.Contains(r.Health, "accepts the console's signature") || !strings.Contains(r.Health, "Click DLQ") {
		t.Errorf("health page:\n%s", r.Health)
	}
	if r.PhoneOverflow {
		t.Error("the Link page scrolls sideways at 375 px")
	}
	if r.CrossOrigin != http.StatusForbidden || strings.Contains(r.CrossText, "by-attacker") {
		t.Errorf("cross-origin form: %d %q, want 403", r.CrossOrigin, r.CrossText)
	}
	if r.SecondLogin != http.StatusForbidden || !strings.Contains(r.SecondText, "used already") {
		t.Errorf("second login: %d %q, want 403", r.SecondLogin, r.SecondText)
	}
	if len(r.ConsoleErrors) > 0 || len(r.External) > 0 {
		t.Errorf("console errors %q, requests off the machine %q", r.ConsoleErrors, r.External)
	}
	for _, name := range []string{"shorten", "links", "link", "link-blocked", "denylist", "health", "link-phone", "login-refused"} {
		p, ok := r.Pages[name]
		if !ok {
			t.Errorf("page %s was not checked", name)
			continue
		}
		if fi, err := os.Stat(p.Screenshot); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot of %s: %v", name, err)
		}
		for _, v := range p.Violations {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("axe-core on %s: %s %s (%d nodes)", name, v.Impact, v.ID, v.Nodes)
			}
		}
		t.Logf("%s: %s, axe-core: %d findings, none serious or critical", name, p.Screenshot, len(p.Violations))
	}
}

// landingServer is where the short URLs lead (landing.example, mapped to it in the
// browser), and a page of another origin whose form posts to the console with the
// console's own CSRF token, as a page that stole it would.
func landingServer(t *testing.T, consoleOrigin string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path != "/attack" {
			fmt.Fprint(w, "<!doctype html><title>landing</title><p>landing")
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>attack</title><form method="post" action="%s/shorten">`+
			`<input name="urls" value="https://landing.example/by-attacker"><input name="csrf" value="%s">`+
			`<button type="submit">go</button></form>`, consoleOrigin, html.EscapeString(r.URL.Query().Get("csrf")))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// startConsole runs linoone console on in's data dir and returns its login URL and
// its log.
func startConsole(t *testing.T, in *instance, addr string) (string, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, "console", "--addr", addr)
	cmd.Env = in.env
	logs := &syncbuf.Buffer{}
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("linoone console exited before printing its login URL:\n%s", logs)
			}
			if strings.HasPrefix(line, "http://"+addr+"/login?secret=") {
				go func() {
					for range lines {
					}
				}()
				return line, logs
			}
		case <-timeout:
			t.Fatalf("linoone console printed no login URL:\n%s", logs)
		}
	}
}

// browserPrereqs are Chromium, node and playwright-core, and the artifacts
// directory: what TestDocsInBrowser checks too.
func browserPrereqs(t *testing.T) (node, root, artifacts string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser tests need headless Chromium at %s (Debian package chromium): %v", chromiumPath, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the browser tests need Node.js 20 or later (README prerequisites): %v", err)
	}
	if root, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("the browser tests need the pinned playwright-core: run scripts/install-npm-tools.sh: %v", err)
	}
	artifacts = os.Getenv("LINOONE_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(root, "test-artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	return node, root, artifacts
}
