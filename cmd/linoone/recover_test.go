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
	"github.com/linoone/linoone/internal/foundation/rotlog"
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

// factsChain writes n click facts as the consumer's facts log does (one event a
// line), moving the log aside with rotlog every perFile facts, at stamps that go
// back in time when reversed is set, so that the order the files were made in is
// not their stamps' order. The live log ends in a torn line. It returns the facts
// in the order a reader of the chain meets them.
func factsChain(t *testing.T, log string, n, perFile int, reversed bool) []clickfact.Fact {
	t.Helper()
	facts := loggedFacts(t, slog.New(slog.DiscardHandler), n)
	at := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	var uuid [16]byte
	files := [][]clickfact.Fact{}
	for i := 0; i < n; i += perFile {
		files = append(files, facts[i:min(i+perFile, n)])
	}
	write := func(fs []clickfact.Fact) {
		var b []byte
		for _, f := range fs {
			b = append(clickfact.AppendEvent(b, &uuid, "000000000000", "us-east-1", at, f.Detail), '\n')
		}
		if err := os.WriteFile(log, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rotated := files[:len(files)-1]
	for i := range rotated {
		k := i
		if reversed {
			k = len(rotated) - 1 - i
		}
		write(rotated[k])
		if _, err := rotlog.Rotate(log, at.Add(time.Duration(k)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := rotlog.Tidy(log, 100, nil); err != nil {
			t.Fatal(err)
		}
	}
	write(files[len(files)-1])
	// The consumer was appending a batch when it stopped: half an event, no newline.
	var torn []byte
	torn = clickfact.AppendEvent(torn, &uuid, "000000000000", "us-east-1", at, facts[0].Detail)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(torn[:len(torn)/2])
	f.Close()
	return facts
}

// TestRecoverFromRotatedFactsLog: the facts log, rotated and compressed by rotlog,
// is read whole: its rotated files oldest first, then the live one, whose torn last
// line is passed over. Each fact reaches the journal once.
func TestRecoverFromRotatedFactsLog(t *testing.T) {
	for _, reversed := range []bool{false, true} {
		t.Run(fmt.Sprintf("made in reverse %v", reversed), func(t *testing.T) {
			dataDir := servedDir(t)
			log := filepath.Join(t.TempDir(), "facts.jsonl")
			facts := factsChain(t, log, 250, 60, reversed)
			files, err := rotlog.Chain(log)
			if err != nil || len(files) != 5 || !files[0].Compressed || files[4].Path != log {
				t.Fatalf("chain %+v, %v: want 4 compressed files and the live log", files, err)
			}
			getenv := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dataDir}[k] }
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"recover", "--from-log", log}, getenv, &stdout, &stderr); code != 0 {
				t.Fatalf("recover exit %d\nstdout: %s\nstderr: %s", code, &stdout, &stderr)
			}
			if got, want := stdout.String(), "republished 250, skipped 0, failed 0, invalid 0\n"; got != want {
				t.Fatalf("recover printed %q, want %q\nstderr: %s", got, want, &stderr)
			}
			// The files in the order of their stamps, whatever order they were made in.
			var order []string
			for _, line := range strings.Split(stderr.String(), "\n") {
				if _, rest, ok := strings.Cut(line, " of 5: "); ok {
					order = append(order, strings.Fields(rest)[0])
				}
			}
			var want []string
			for _, f := range files {
				want = append(want, f.Path)
			}
			if fmt.Sprint(order) != fmt.Sprint(want) || !strings.Contains(stderr.String(), "last line is unfinished") {
				t.Errorf("recover read %v, want %v, and says it passed over the torn line\nstderr: %s", order, want, &stderr)
			}
			for _, f := range facts {
				if n := journalCount(t, dataDir, f.IdempotencyKey); n != 1 {
					t.Fatalf("%s journaled %d times, want 1", f.IdempotencyKey, n)
				}
			}
		})
	}
}

// TestRecoverRefusesACorruptRotatedFile: a rotated file that is not whole gzip is
// named, and nothing of the chain is republished; named alone, a whole rotated
// file is still read.
func TestRecoverRefusesACorruptRotatedFile(t *testing.T) {
	dataDir := servedDir(t)
	log := filepath.Join(t.TempDir(), "facts.jsonl")
	facts := factsChain(t, log, 120, 40, false)
	files, err := rotlog.Chain(log)
	if err != nil || len(files) != 3 {
		t.Fatalf("chain %+v, %v", files, err)
	}
	bad := files[1].Path
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b[:len(b)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"LINOONE_DATA_DIR": dataDir}[k] }
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"recover", "--from-log", log}, getenv, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), bad+" is not a whole gzip file") || !strings.Contains(stderr.String(), "nothing was republished") {
		t.Fatalf("recover exit %d, want 1 naming %s\nstdout: %s\nstderr: %s", code, bad, &stdout, &stderr)
	}
	for _, f := range facts {
		if n := journalCount(t, dataDir, f.IdempotencyKey); n != 0 {
			t.Fatalf("%s journaled %d times, want 0", f.IdempotencyKey, n)
		}
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"recover", "--from-log", files[0].Path}, getenv, &stdout, &stderr); code != 0 ||
		stdout.String() != "republished 40, skipped 0, failed 0, invalid 0\n" {
		t.Fatalf("recover of %s alone: exit %d, printed %q", files[0].Path, code, &stdout)
	}
}
