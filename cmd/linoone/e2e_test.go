package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/serve"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/schematest"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
	"github.com/linoone/linoone/internal/testutil/testlayer"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// binary is the linoone binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	// A serve run in this process (TestStopWhileStartingIsNoFailure) starts local
	// Persist as this executable's persist-child: the test binary must then be that
	// child, not run every test again, whose serves its kill would leave behind.
	if len(os.Args) > 1 && os.Args[1] == serve.ChildCommand {
		main()
	}
	flag.Parse()
	if testing.Short() { // the end-to-end tests skip: nothing needs the binary
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "linoone-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "linoone")
	if out, err := exec.Command("go", "build", "-race", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build linoone: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// instance is one `linoone serve` process.
type instance struct {
	t                             *testing.T
	env                           []string
	dataDir                       string
	resolver, management, persist string
	cmd                           *exec.Cmd
	logs                          *syncbuf.Buffer
	exited                        chan struct{} // closed once cmd has exited and been waited for
}

func newInstance(t *testing.T, extraEnv ...string) *instance {
	t.Helper()
	testlayer.Skip(t, testlayer.EndToEnd)
	in := &instance{t: t, dataDir: t.TempDir(), resolver: testport.Free(t), management: testport.Free(t), persist: testport.Free(t)}
	in.env = append(os.Environ(),
		"LINOONE_DATA_DIR="+in.dataDir,
		"LINOONE_RESOLVER_ADDR="+in.resolver,
		"LINOONE_MANAGEMENT_ADDR="+in.management,
		"LINOONE_PERSIST_ADDR="+in.persist,
		"LINOONE_ACCESS_KEY_ID=", "LINOONE_SECRET_ACCESS_KEY=", "LINOONE_BUS_FAULT=",
		"LINOONE_PERSIST_ACCESS_KEY_ID=", "LINOONE_PERSIST_SECRET_ACCESS_KEY=",
	)
	in.env = append(in.env, extraEnv...)
	return in
}

func (in *instance) start(extraEnv ...string) {
	in.t.Helper()
	in.startCommand([]string{binary, "serve"}, extraEnv...)
}

// startBinary is start with another build of linoone.
func (in *instance) startBinary(bin string) { in.t.Helper(); in.startCommand([]string{bin, "serve"}) }

// startCommand runs argv, a serve of this instance (perhaps behind a wrapper that
// execs it), and waits until all three listeners answer /healthz, failing at once if
// it exits first.
func (in *instance) startCommand(argv []string, extraEnv ...string) {
	t := in.t
	t.Helper()
	in.logs = &syncbuf.Buffer{}
	in.cmd = exec.Command(argv[0], argv[1:]...)
	in.cmd.Env = append(append([]string{}, in.env...), extraEnv...)
	in.cmd.Stdout, in.cmd.Stderr = in.logs, in.logs
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, cmd := make(chan struct{}), in.cmd
	in.exited = exited
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(in.stop)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		ok := true
		for _, a := range []string{in.resolver, in.management, in.persist} {
			res, err := http.Get("http://" + a + "/healthz")
			if err != nil {
				ok = false
				break
			}
			res.Body.Close()
			ok = ok && res.StatusCode == 200
		}
		if ok {
			return
		}
		select {
		case <-exited:
			t.Fatalf("linoone serve exited (%v) before it became ready:\n%s", cmd.ProcessState, in.logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("linoone serve did not become ready:\n%s", in.logs)
}

// hasExited reports whether serve has exited (and been waited for).
func (in *instance) hasExited() bool {
	select {
	case <-in.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGINT and waits for a clean exit.
func (in *instance) stop() {
	if in.cmd == nil || in.exited == nil || in.hasExited() {
		return
	}
	_ = in.cmd.Process.Signal(os.Interrupt)
	select {
	case <-in.exited:
		if !in.cmd.ProcessState.Success() {
			in.t.Errorf("serve exited with %v:\n%s", in.cmd.ProcessState, in.logs)
		}
	case <-time.After(30 * time.Second):
		_ = in.cmd.Process.Kill()
		<-in.exited
		in.t.Errorf("serve did not stop on SIGINT:\n%s", in.logs)
	}
}

func (in *instance) credentials() sigv4.Credentials {
	in.t.Helper()
	return in.readCredentials(sigv4.CredentialsFile)
}

// readCredentials reads a pair serve wrote into the data dir.
func (in *instance) readCredentials(file string) sigv4.Credentials {
	in.t.Helper()
	b, err := os.ReadFile(filepath.Join(in.dataDir, file))
	if err != nil {
		in.t.Fatal(err)
	}
	var f struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		in.t.Fatal(err)
	}
	return sigv4.Credentials{AccessKeyID: f.AccessKeyID, SecretAccessKey: f.SecretAccessKey}
}

func (in *instance) client() *management.ClientWithResponses {
	in.t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: in.credentials().Transport(nil, "us-east-1", "execute-api")}
	c, err := management.NewClientWithResponses("http://"+in.management, management.WithHTTPClient(hc))
	if err != nil {
		in.t.Fatal(err)
	}
	return c
}

// shorten issues a short URL for target through the generated client and returns
// its token.
func (in *instance) shorten(target string) string {
	in.t.Helper()
	res, err := in.client().ShortenWithResponse(context.Background(), nil, management.ShortenJSONRequestBody{TargetURL: target})
	if err != nil || res.JSON201 == nil {
		in.t.Fatalf("shorten %s: %v %d %s", target, err, res.StatusCode(), res.Body)
	}
	return res.JSON201.Token
}

// cli runs a linoone command against this instance's data directory.
func (in *instance) cli(args ...string) (string, string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = in.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

var noRedirect = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (in *instance) resolve(token string) *http.Response {
	in.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+in.resolver+"/"+token, nil)
	req.Header.Set("User-Agent", "linoone-e2e/1.0")
	res, err := noRedirect.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

func (in *instance) clicks(token string) int64 {
	in.t.Helper()
	res, err := in.client().GetLinkStatsWithResponse(context.Background(), token, nil)
	if err != nil || res.JSON200 == nil {
		in.t.Fatalf("stats %s: %v %d %s", token, err, res.StatusCode(), res.Body)
	}
	return res.JSON200.Clicks
}

// waitClicks waits for the bus consumer to bring the clicks into Persist.
func (in *instance) waitClicks(token string, want int64) {
	in.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		if got = in.clicks(token); got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	in.t.Fatalf("token %s: %d clicks in the graph, want %d", token, got, want)
}

func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	in := newInstance(t)
	in.start()
	c := in.client()

	// Through the generated client.
	res, err := c.ShortenWithResponse(ctx, nil, management.ShortenJSONRequestBody{TargetURL: "https://example.com/landing?message_id=msg_123"})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("shorten: %v %d %s", err, res.StatusCode(), res.Body)
	}
	viaClient := res.JSON201
	if !shorturl.IsToken(viaClient.Token) || viaClient.ShortURL != "http://"+in.resolver+"/"+viaClient.Token {
		t.Fatalf("response %+v", viaClient)
	}

	// Through curl's own SigV4 implementation.
	creds := in.credentials()
	out, err := exec.Command("curl", "-sS", "--fail-with-body", "--aws-sigv4", "aws:amz:us-east-1:execute-api",
		"--user", creds.AccessKeyID+":"+creds.SecretAccessKey,
		"-H", "Content-Type: application/json", "-d", `{"target_url":"https://example.org/from-curl?a=1&b=2"}`,
		"http://"+in.management+"/shorten").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	var viaCurl management.ShortURL
	if err := json.Unmarshal(out, &viaCurl); err != nil || !shorturl.IsToken(viaCurl.Token) {
		t.Fatalf("curl answer %s: %v", out, err)
	}

	// Through the producer CLI.
	stdout, stderr, err := in.cli("shorten", "https://example.net/cli")
	if err != nil || !strings.HasPrefix(stdout, "http://"+in.resolver+"/") {
		t.Fatalf("linoone shorten: %v %q %q", err, stdout, stderr)
	}
	viaCLI := strings.TrimSpace(strings.TrimPrefix(stdout, "http://"+in.resolver+"/"))

	// --json after the URL prints the answer whole.
	stdout, stderr, err = in.cli("shorten", "https://example.net/cli-json", "--json")
	var viaJSON management.ShortURL
	if err != nil || json.Unmarshal([]byte(stdout), &viaJSON) != nil || !shorturl.IsToken(viaJSON.Token) ||
		viaJSON.ShortURL != "http://"+in.resolver+"/"+viaJSON.Token {
		t.Fatalf("linoone shorten URL --json: %v %q %q", err, stdout, stderr)
	}

	// A curl request with the wrong secret writes nothing.
	out, _ = exec.Command("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:execute-api",
		"--user", creds.AccessKeyID+":wrong-secret", "-H", "Content-Type: application/json",
		"-d", `{"target_url":"https://evil.example/"}`, "http://"+in.management+"/shorten").CombinedOutput()
	if string(out) != "403" {
		t.Fatalf("mis-signed curl: %s", out)
	}
	if _, stderr, err := in.cli("shorten", "ftp://example.com/"); err == nil || !strings.Contains(stderr, "target-url-scheme") {
		t.Fatalf("bad target through the CLI: %v %q", err, stderr)
	}

	want := map[string]string{viaClient.Token: "https://example.com/landing?message_id=msg_123", viaCurl.Token: "https://example.org/from-curl?a=1&b=2", viaCLI: "https://example.net/cli"}
	for tok, target := range want {
		r := in.resolve(tok)
		if r.StatusCode != http.StatusFound || r.Header.Get("Location") != target || r.Header.Get("Cache-Control") != "private, max-age=0" {
			t.Fatalf("GET /%s: %d %q %q", tok, r.StatusCode, r.Header.Get("Location"), r.Header.Get("Cache-Control"))
		}
	}
	if r := in.resolve("AAAAAAAAAA"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown token: %d", r.StatusCode)
	}
	if r := in.resolve("not-a-token"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("invalid token: %d", r.StatusCode)
	}
	in.waitClicks(viaClient.Token, 1)

	// Every click is a schema-valid fact in facts.jsonl.
	facts := waitFacts(t, filepath.Join(in.dataDir, "facts.jsonl"), 3)
	for _, f := range facts {
		schematest.MustValidate(t, schematest.GraphFact, f.Detail)
		if f.Source != "shorturl" || f.DetailType != "GraphFactProduced" {
			t.Fatalf("event %+v", f)
		}
	}

	// Durability: restart and resolve again.
	in.stop()
	in.start()
	for tok, target := range want {
		if r := in.resolve(tok); r.StatusCode != http.StatusFound || r.Header.Get("Location") != target {
			t.Fatalf("after restart GET /%s: %d %q", tok, r.StatusCode, r.Header.Get("Location"))
		}
	}
	in.waitClicks(viaClient.Token, 2)
}

type busEvent struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
}

// waitFacts waits until the consumer has appended n events to facts.jsonl.
func waitFacts(t *testing.T, path string, n int) []busEvent {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		facts := readFacts(t, path)
		if len(facts) == n {
			return facts
		}
		if len(facts) > n || time.Now().After(deadline) {
			t.Fatalf("%d facts in %s, want %d", len(facts), path, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readFacts(t *testing.T, path string) []busEvent {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []busEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e busEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("facts.jsonl line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func TestConcurrentIssuance(t *testing.T) {
	in := newInstance(t)
	in.start()
	c := in.client()
	const n = 300
	tokens := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := c.ShortenWithResponse(context.Background(), nil, management.ShortenJSONRequestBody{TargetURL: fmt.Sprintf("https://example.com/item/%d", i)})
			if err != nil || res.JSON201 == nil {
				errs <- fmt.Errorf("%d: %v %s", i, err, res.Body)
				return
			}
			tokens[i] = res.JSON201.Token
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, tok := range tokens {
		if seen[tok] {
			t.Fatalf("token %s issued twice", tok)
		}
		seen[tok] = true
		if r := in.resolve(tok); r.StatusCode != http.StatusFound || r.Header.Get("Location") != fmt.Sprintf("https://example.com/item/%d", i) {
			t.Fatalf("token %s: %d %q", tok, r.StatusCode, r.Header.Get("Location"))
		}
	}
}

// TestBusFaultDrill is the fault drill of docs/operations.md: with the bus rejecting every
// publish, clicks still redirect and land in the DLQ; replay publishes each exactly
// once with its original idempotency key, and the graph holds no duplicate edge.
func TestBusFaultDrill(t *testing.T) {
	in := newInstance(t)
	in.start("LINOONE_BUS_FAULT=always", "LINOONE_EMF=on") // serve writes EMF lines only when asked off Lambda
	res, err := in.client().ShortenWithResponse(context.Background(), nil, management.ShortenJSONRequestBody{TargetURL: "https://example.com/drill"})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("shorten: %v", err)
	}
	tok := res.JSON201.Token
	const clicks = 5
	for range clicks {
		if r := in.resolve(tok); r.StatusCode != http.StatusFound {
			t.Fatalf("click during bus fault: %d", r.StatusCode)
		}
	}
	out, _, err := in.cli("dlq", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var waiting []struct{ IdempotencyKey string }
	if err := json.Unmarshal([]byte(out), &waiting); err != nil || len(waiting) != clicks {
		t.Fatalf("dlq --json: %v, %d entries: %s", err, len(waiting), out)
	}
	if out, _, err := in.cli("dlq"); err != nil || strings.Count(out, tok) != clicks {
		t.Fatalf("dlq does not show the token %s of each waiting fact: %v\n%s", tok, err, out)
	}
	for _, name := range mustGlob(t, filepath.Join(in.dataDir, "dlq", "*.json")) {
		b, _ := os.ReadFile(name)
		schematest.MustValidate(t, schematest.ClickDLQ, b)
	}
	if got := readFacts(t, filepath.Join(in.dataDir, "facts.jsonl")); len(got) != 0 {
		t.Fatalf("%d facts published while the bus was failing", len(got))
	}
	if n := in.clicks(tok); n != 0 {
		t.Fatalf("%d clicks in the graph while the bus was failing", n)
	}

	// While the server still rejects publishes, replay (a separate process, the bus
	// recovered for it) drains the DLQ onto the bus; the server's consumer ingests.
	stdout, _, err := in.cli("replay")
	if err != nil || !strings.Contains(stdout, fmt.Sprintf("replayed %d, failed 0, invalid 0", clicks)) {
		t.Fatalf("replay: %v %q", err, stdout)
	}
	in.waitClicks(tok, clicks)
	stdout, _, err = in.cli("replay")
	if err != nil || !strings.Contains(stdout, "replayed 0, failed 0, invalid 0") {
		t.Fatalf("second replay: %v %q", err, stdout)
	}
	facts := waitFacts(t, filepath.Join(in.dataDir, "facts.jsonl"), clicks)
	keys := map[string]int{}
	for _, f := range facts {
		var d struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		_ = json.Unmarshal(f.Detail, &d)
		keys[d.IdempotencyKey]++
	}
	for _, w := range waiting {
		if keys[w.IdempotencyKey] != 1 {
			t.Errorf("%s published %d times, want once", w.IdempotencyKey, keys[w.IdempotencyKey])
		}
	}
	if len(keys) != clicks {
		t.Errorf("%d distinct facts published, want %d", len(keys), clicks)
	}
	time.Sleep(300 * time.Millisecond) // nothing more may arrive
	if n := in.clicks(tok); n != clicks {
		t.Fatalf("%d clicks in the graph, want %d (no duplicate edges)", n, clicks)
	}
	in.stop() // the metrics emitter flushes on shutdown
	if !strings.Contains(in.logs.String(), `"FactsDeadLettered":5`) {
		t.Errorf("no EMF line counting 5 dead-lettered facts in the log")
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCommandErrors(t *testing.T) {
	in := newInstance(t)
	tests := []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"bogus"}, nil, "unknown command"},
		{[]string{"shorten"}, nil, "an argument is missing"},
		{[]string{"shorten", "https://example.com/"}, nil, "no credentials"},
		{[]string{"serve"}, []string{"LINOONE_RESOLVER_ADDR=nonsense", "LINOONE_LOG_LEVEL=loud", "LINOONE_BUS_FAULT=sometimes"}, "LINOONE_RESOLVER_ADDR"},
	}
	for _, tt := range tests {
		cmd := exec.Command(binary, tt.args...)
		cmd.Env = append(append([]string{}, in.env...), tt.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "goroutine") {
			t.Errorf("%v: %v %s", tt.args, err, out)
		}
		if tt.args[0] == "serve" {
			for _, v := range []string{"LINOONE_LOG_LEVEL", "LINOONE_BUS_FAULT"} {
				if !strings.Contains(string(out), v) {
					t.Errorf("serve does not report every bad variable at once: %s", out)
				}
			}
		}
	}
}

// TestShutdownCountsFactsLoggedWhole: with the bus and the DLQ both failing, clicks
// wait in the buffer, and a clean stop logs them whole; the metrics must count them
// (FactsLostToLog is the alarm that says to run recover --from-log), so the last
// metrics line is written after the recorder's last flush.
func TestShutdownCountsFactsLoggedWhole(t *testing.T) {
	in := newInstance(t)
	in.start("LINOONE_BUS_FAULT=always", "LINOONE_EMF=on") // FactsLostToLog is an EMF count
	tok := in.shorten("https://example.com/lost-at-stop")
	dlq := filepath.Join(in.dataDir, "dlq")
	if err := os.Rename(dlq, dlq+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dlq, nil, 0o600); err != nil { // a file where the DLQ was: it fails even for root
		t.Fatal(err)
	}
	const clicks = 5
	for range clicks {
		if r := in.resolve(tok); r.StatusCode != http.StatusFound {
			t.Fatalf("click: %d", r.StatusCode)
		}
	}
	in.stop()
	var logged, counted, hits, misses float64
	durations := map[string]int{} // Persist call durations by kind
	for line := range strings.SplitSeq(in.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == shorturl.MsgLostToLog {
			logged++
		}
		if n, ok := rec["FactsLostToLog"].(float64); ok {
			counted += n
		}
		h, _ := rec["HotSetHits"].(float64)
		m, _ := rec["HotSetMisses"].(float64)
		hits, misses = hits+h, misses+m
		if ms, ok := rec["PersistLatency"].([]any); ok {
			durations[rec["Operation"].(string)] += len(ms)
		}
	}
	if logged != clicks || counted != clicks {
		t.Fatalf("%v facts logged whole, %v counted in FactsLostToLog; want %d each\n%s", logged, counted, clicks, in.logs)
	}
	// Every click is a hit but the first at most (coalesced issuance writes through
	// Persist's batch call, around the hot set); a miss is one Persist lookup, and
	// the issuance's ingest is one more Persist call, each an EMF duration.
	if hits+misses != clicks || misses > 1 || durations["lookup"] != int(misses) || durations["ingest"] < 1 {
		t.Errorf("HotSetHits %v, HotSetMisses %v, Persist call durations %v; want %d clicks counted, at most 1 miss, "+
			"a lookup per miss and an ingest\n%s", hits, misses, durations, clicks, in.logs)
	}
}

// TestSecondServeOnADataDirIsRefused: one serve per data dir. A second one, even
// with an external consumer and ports of its own, must stop before it opens
// anything there (it would migrate local Persist's file under the first, and take
// the same idempotency keys in another process), and leave the first serving.
func TestSecondServeOnADataDirIsRefused(t *testing.T) {
	in := newInstance(t)
	in.start()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second) // a second serve that runs is killed
	defer cancel()
	second := exec.CommandContext(ctx, binary, "serve")
	second.Env = append(append([]string{}, in.env...), "LINOONE_CONSUMER=external",
		"LINOONE_RESOLVER_ADDR="+testport.Free(t), "LINOONE_MANAGEMENT_ADDR="+testport.Free(t), "LINOONE_PERSIST_ADDR="+testport.Free(t))
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another linoone serve (pid ") {
		t.Fatalf("second serve: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "local persist open") {
		t.Errorf("the second serve opened local Persist before it stopped:\n%s", out)
	}
	tok := in.shorten("https://example.com/still-served")
	if r := in.resolve(tok); r.StatusCode != http.StatusFound {
		t.Fatalf("the first serve after the second's attempt: %d", r.StatusCode)
	}
}

// TestMachineNamesAreOwnHosts is issue 44's finding 4 through the real serve: on
// loopback, a target on the machine's hostname or /etc/hosts' loopback names is
// the service's own host (400 target-url-self), so no short URL chains through it.
func TestMachineNamesAreOwnHosts(t *testing.T) {
	in := newInstance(t)
	in.start()
	name, err := os.Hostname()
	if err != nil || name == "" {
		t.Skip("no hostname:", err)
	}
	_, port, _ := strings.Cut(in.resolver, ":")
	for _, host := range []string{name, "localhost.localdomain", "ip6-localhost"} {
		target := "http://" + host + ":" + port + "/7BTadEDkJ8"
		res, err := in.client().ShortenWithResponse(context.Background(), nil, management.ShortenJSONRequestBody{TargetURL: target})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusBadRequest || res.ApplicationProblemJSON400 == nil || !strings.HasSuffix(res.ApplicationProblemJSON400.Type, ":target-url-self") {
			t.Errorf("shorten %s: %d %s, want 400 target-url-self", target, res.StatusCode(), res.Body)
		}
	}
}
