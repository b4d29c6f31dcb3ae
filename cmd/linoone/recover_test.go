package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localbus"
)

// loggedFacts builds n click facts and logs each as the Recorder does when
// nothing else keeps it.
func loggedFacts(t *testing.T, log *slog.Logger, n int) []clickfact.Fact {
	t.Helper()
	var facts []clickfact.Fact
	for i := range n {
		f, err := clickfact.Build(clickfact.Click{Token: "aB3dE5gH7j", Path: "http://127.0.0.1:8080/aB3dE5gH7j",
			Target: "https://example.com/?a=1&b=<2>", IP: "192.0.2.1", UserAgent: fmt.Sprintf("agent-%d", i),
			At: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}, fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", i))
		if err != nil {
			t.Fatal(err)
		}
		log.Error(shorturl.MsgLostToLog, "graph_fact", json.RawMessage(f.Detail))
		facts = append(facts, f)
	}
	return facts
}

// journalCount is how many journal records carry key.
func journalCount(t *testing.T, dataDir, key string) int {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dataDir, datadir.Bus, "journal", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err == nil {
			n += bytes.Count(b, []byte(key))
		}
	}
	return n
}

// servedDir is a data dir as serve leaves it for dlq, replay and recover: with its
// local bus.
func servedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bus, err := localbus.OpenBus(filepath.Join(dir, datadir.Bus), localbus.BusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLocalCommandsRefuseADataDirNoServeUsed: dlq, replay and recover in a data dir
// no serve has used (a wrong LINOONE_DATA_DIR, or another working directory) must
// say so and create nothing, as shorten and consume do, instead of reporting
// success for a journal and a DLQ no serve reads.
func TestLocalCommandsRefuseADataDirNoServeUsed(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "serve.log")
	var logBuf bytes.Buffer
	loggedFacts(t, slog.New(slog.NewJSONHandler(&logBuf, nil)), 1)
	if err := os.WriteFile(logPath, logBuf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"dlq"}, {"replay"}, {"recover", "--from-log", logPath}} {
		t.Run(args[0], func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "never-served")
			getenv := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dataDir}[k] }
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, getenv, &stdout, &stderr)
			want := "start `linoone serve` with the same LINOONE_DATA_DIR (" + dataDir + ") first"
			if code != 1 || !strings.Contains(stderr.String(), want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", code, &stdout, &stderr, want)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("%v created the data dir: %v", args, err)
			}
		})
	}
}

func TestRecoverFromLog(t *testing.T) {
	var logBuf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logBuf, nil))
	facts := loggedFacts(t, log, 3)
	logBuf.WriteString("not json at all\n{\"level\":\"ERROR\",\"msg\":\"truncated\n")
	log.Info("a fact at INFO is not a lost one", "graph_fact", json.RawMessage(facts[0].Detail))
	log.Error(shorturl.MsgLostToLog, "graph_fact", json.RawMessage(facts[1].Detail)) // twice in the log
	log.Error(shorturl.MsgLostToLog, "idempotency_key", facts[2].IdempotencyKey, "graph_fact", json.RawMessage(facts[2].Detail))
	log.Error("something else failed", "err", "boom")
	logBuf.WriteString(strings.Repeat("x", 100_000)) // a last line without a newline

	dataDir := servedDir(t)
	logPath := filepath.Join(dataDir, "serve.log")
	if err := os.WriteFile(logPath, logBuf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dataDir}[k] }
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"recover", "--from-log", logPath}, getenv, &stdout, &stderr); code != 0 {
		t.Fatalf("recover exit %d\nstdout: %s\nstderr: %s", code, &stdout, &stderr)
	}
	if got, want := stdout.String(), "republished 3, skipped 2, failed 0, invalid 0\n"; got != want {
		t.Fatalf("recover printed %q, want %q", got, want)
	}
	for _, f := range facts {
		if n := journalCount(t, dataDir, f.IdempotencyKey); n != 1 {
			t.Errorf("%s journaled %d times, want 1", f.IdempotencyKey, n)
		}
	}
}

func TestRecoverFromLogFails(t *testing.T) {
	dataDir := t.TempDir()
	var logBuf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logBuf, nil))
	loggedFacts(t, log, 1)
	log.Error(shorturl.MsgLostToLog, "graph_fact", json.RawMessage(`{"schema_version":"forged"}`))
	// A line cut short (the log's disk full): the fact it held is gone, which recover
	// must say rather than pass over.
	var torn bytes.Buffer
	loggedFacts(t, slog.New(slog.NewJSONHandler(&torn, nil)), 1)
	logBuf.Write(torn.Bytes()[:torn.Len()/2])
	logBuf.WriteString("\n")
	logPath := filepath.Join(dataDir, "serve.log")
	if err := os.WriteFile(logPath, logBuf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, fault, want string
	}{
		{"invalid fact", "", "republished 1, skipped 0, failed 0, invalid 2\n"},
		{"bus refuses", "always", "republished 0, skipped 0, failed 1, invalid 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"LINOONE_DATA_DIR": servedDir(t), "LINOONE_BUS_FAULT": tt.fault}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"recover", "--from-log", logPath}, func(k string) string { return env[k] }, &stdout, &stderr)
			if code == 0 || stdout.String() != tt.want {
				t.Fatalf("recover exit %d, printed %q; want non-zero, %q\nstderr: %s", code, &stdout, tt.want, &stderr)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"recover"}, func(string) string { return "" }, &stdout, &stderr); code == 0 {
		t.Fatal("recover without --from-log succeeded")
	}
}

// TestRefusedFactsAreRecovered: a click fact local Persist refused (422) was logged
// and skipped, in no file recover reads, while consume --drain exited 0. consume now
// keeps it in bus/refused.jsonl and exits 1 saying so; recover republishes it from
// there, and once Persist takes it, it is delivered.
func TestRefusedFactsAreRecovered(t *testing.T) {
	dataDir := t.TempDir()
	facts := loggedFacts(t, slog.New(slog.DiscardHandler), 3)
	bus, err := localbus.OpenBus(filepath.Join(dataDir, datadir.Bus), localbus.BusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range facts {
		if err := bus.Publish(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}

	// Persist, refusing the second fact with a 422 while refuse is set.
	var mu sync.Mutex
	refuse := true
	delivered := map[string]int{}
	persist := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if refuse && bytes.Contains(body, []byte(facts[1].EventID)) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"error":"refused"}`))
			return
		}
		for _, f := range facts {
			if bytes.Contains(body, []byte(f.EventID)) {
				delivered[f.EventID]++
			}
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer persist.Close()
	env := map[string]string{"LINOONE_DATA_DIR": dataDir, "LINOONE_PERSIST_URL": persist.URL,
		"LINOONE_PERSIST_ACCESS_KEY_ID": "AKIDLOCALTEST", "LINOONE_PERSIST_SECRET_ACCESS_KEY": "secret"}
	getenv := func(k string) string { return env[k] }
	cli := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, getenv, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	refused := filepath.Join(dataDir, datadir.Bus, "refused.jsonl")
	code, out, errOut := cli("consume", "--drain")
	if code != 1 || out != "delivered 2, invalid 1, refused 1\n" || !strings.Contains(errOut, "linoone recover --from-log "+refused) {
		t.Fatalf("consume --drain: exit %d, printed %q; want 1, the refused fact counted and how to redrive it\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = cli("recover", "--from-log", refused)
	if code != 0 || out != "republished 1, skipped 0, failed 0, invalid 0\n" {
		t.Fatalf("recover: exit %d, printed %q\nstderr: %s", code, out, errOut)
	}
	mu.Lock()
	refuse = false
	mu.Unlock()
	code, out, errOut = cli("consume", "--drain")
	if code != 0 || out != "delivered 1, invalid 0, refused 0\n" {
		t.Fatalf("consume --drain after recover: exit %d, printed %q\nstderr: %s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, f := range facts {
		if delivered[f.EventID] != 1 {
			t.Errorf("fact %d delivered %d times, want 1", i, delivered[f.EventID])
		}
	}
}

// TestConsumeDrainGivesUp: a drain retries a Persist that does not answer for as
// long as it does not; with --timeout it gives up, exits 1 and says what is left,
// and a drain once Persist answers delivers the click.
func TestConsumeDrainGivesUp(t *testing.T) {
	in := newInstance(t, "LINOONE_CONSUMER=external")
	in.start()
	tok := in.shorten("https://example.com/drain-timeout")
	if res := in.resolve(tok); res.StatusCode != http.StatusFound {
		t.Fatalf("GET /%s: %d", tok, res.StatusCode)
	}
	in.stop() // local Persist stops with serve: nothing answers on its port
	start := time.Now()
	out, errOut, err := in.cli("consume", "--drain", "--timeout", "1s")
	if err == nil || !strings.Contains(errOut, "not drained within 1s: delivered 0,") {
		t.Fatalf("consume --drain --timeout 1s with Persist down: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("gave up after %v", took)
	}
	in.start()
	if out, errOut, err := in.cli("consume", "--drain", "--timeout", "1m"); err != nil || !strings.Contains(out, "delivered 1,") {
		t.Fatalf("consume --drain with Persist up: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
}

// TestDLQListingPrintsEscapesItDoesNotRun: a file in the DLQ that is not a dead
// letter is listed with what can be read of it, its idempotency key among that; an
// escape sequence there must reach the terminal as text, and each entry stay on one
// line.
func TestDLQListingPrintsEscapesItDoesNotRun(t *testing.T) {
	dir := servedDir(t)
	if err := os.MkdirAll(filepath.Join(dir, datadir.DLQ), 0o700); err != nil {
		t.Fatal(err)
	}
	const evil = "\x1b]0;pwned\x07\x1b[2J\nsecond line\xff"
	body, err := json.Marshal(map[string]any{"failed_at": "2026-12-02T00:00:00Z", "attempts": 1, "reason": "bus: " + evil,
		"graph_fact": map[string]string{"idempotency_key": evil}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, datadir.DLQ, "20261202T000000Z-1.json"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"dlq"}, func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dir}[k] }, &stdout, &stderr)
	out := stdout.String()
	if code != 0 || strings.Contains(out, "\x1b") || strings.Count(out, "\n") != 3 ||
		!strings.Contains(out, `\x1b]0;pwned\a\x1b[2J second line`) {
		t.Fatalf("dlq: exit %d, stdout %q, stderr %q; want one row with the key's escapes as text", code, out, &stderr)
	}
}

// TestRecoverHelpExampleOnAFreshDataDir: the help's example, recover from the
// refused facts' file, on a data dir serve made but whose consumer never kept a
// refused fact says there is nothing to recover and exits 0; a missing serve log
// is still an error.
func TestRecoverHelpExampleOnAFreshDataDir(t *testing.T) {
	dataDir := servedDir(t)
	getenv := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dataDir}[k] }
	refused := filepath.Join(dataDir, datadir.Bus, "refused.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"recover", "--from-log", refused}, getenv, &stdout, &stderr)
	if want := "nothing to recover: " + refused + " does not exist"; code != 0 || !strings.HasPrefix(stdout.String(), want) || stderr.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, &stdout, &stderr, want)
	}
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"recover", "--from-log", filepath.Join(dataDir, "serve.log")}, getenv, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no such file") {
		t.Errorf("a missing serve log: exit %d, stdout %q, stderr %q; want 1", code, &stdout, &stderr)
	}
}

// TestEmptyDLQPrintsOneLine: an empty local click DLQ is one line, no header over
// no rows; --json is still an empty array.
func TestEmptyDLQPrintsOneLine(t *testing.T) {
	dir := servedDir(t)
	getenv := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dir}[k] }
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"dlq"}, getenv, &stdout, &stderr)
	if want := "no click facts waiting in " + filepath.Join(dir, datadir.DLQ) + "\n"; code != 0 || stdout.String() != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, &stdout, &stderr, want)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"dlq", "--json"}, getenv, &stdout, &stderr); code != 0 || stdout.String() != "[]\n" {
		t.Errorf("dlq --json: exit %d, stdout %q", code, &stdout)
	}
}
