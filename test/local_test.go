package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/linoone/linoone/internal/testutil/syncbuf"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// TestLocal runs the suite against `linoone serve` built from ../cmd/linoone, on
// free loopback ports with a fresh data directory.
func TestLocal(t *testing.T) {
	runSuite(t, startLocal(t))
}

// localRegion is the SigV4 region of the local management API (LINOONE_REGION).
const localRegion = "us-east-1"

// local is a `linoone serve` process and the CLI around its data directory. The bus
// is broken by restarting serve with LINOONE_BUS_FAULT=always.
type local struct {
	root                          *testing.T // owns the processes and their cleanup
	bin, dataDir                  string
	resolver, management, persist string // host:port
	env                           []string
	logs                          *syncbuf.Buffer
	proc                          *serveProc // nil while stopped
	factLines                     int        // facts.jsonl lines PollFacts returned
	signer                        Signer
}

var _ Deployment = (*local)(nil)

func startLocal(t *testing.T) *local {
	t.Helper()
	l := &local{
		root: t, bin: linooneBinary(t), dataDir: t.TempDir(), logs: &syncbuf.Buffer{},
		resolver: testport.Free(t), management: testport.Free(t), persist: testport.Free(t),
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LINOONE_") {
			l.env = append(l.env, kv)
		}
	}
	l.env = append(l.env,
		"LINOONE_DATA_DIR="+l.dataDir,
		"LINOONE_RESOLVER_ADDR="+l.resolver,
		"LINOONE_MANAGEMENT_ADDR="+l.management,
		"LINOONE_PERSIST_ADDR="+l.persist,
		"LINOONE_REGION="+localRegion,
		"LINOONE_ENVIRONMENT=e2e",
		"LINOONE_LOG_LEVEL=info",
	)
	t.Cleanup(func() {
		l.stop(t)
		if t.Failed() {
			t.Logf("linoone serve logs (data dir %s):\n%s", l.dataDir, l.logs)
		}
	})
	l.start(t)
	l.signer = l.readCredentials(t)
	return l
}

// linooneBinary builds ../cmd/linoone in the service's own module (so with the
// service's dependency versions, not this module's), or takes LINOONE_TEST_BINARY.
func linooneBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("LINOONE_TEST_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "linoone")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/linoone")
	cmd.Dir = ".."
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/linoone: %v\n%s", err, out)
	}
	t.Logf("built linoone in %s", time.Since(start).Round(time.Millisecond))
	return bin
}

// start runs serve with extra environment and waits until all three listeners
// answer /healthz.
func (l *local) start(t *testing.T, extraEnv ...string) {
	t.Helper()
	fmt.Fprintf(l.logs, "--- linoone serve %s\n", strings.Join(extraEnv, " "))
	cmd := exec.Command(l.bin, "serve")
	cmd.Env = append(append([]string{}, l.env...), extraEnv...)
	cmd.Stdout, cmd.Stderr = l.logs, l.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start linoone serve: %v", err)
	}
	p := &serveProc{cmd: cmd, exited: make(chan struct{})}
	l.proc = p
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()

	const readyWithin = 20 * time.Second
	deadline := time.Now().Add(readyWithin)
	for {
		if l.healthy() {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("linoone serve exited before it was ready (%v):\n%s", p.err, l.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("linoone serve not ready within %s:\n%s", readyWithin, l.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *local) healthy() bool {
	for _, addr := range []string{l.resolver, l.management, l.persist} {
		res, err := plainClient.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return false
		}
	}
	return true
}

// stop interrupts serve and waits for its graceful shutdown; it kills a serve that
// does not stop.
func (l *local) stop(t *testing.T) {
	t.Helper()
	if l.proc == nil {
		return
	}
	p := l.proc
	l.proc = nil
	select {
	case <-p.exited:
		t.Errorf("linoone serve had exited by itself (%v)", p.err)
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	const stopWithin = 25 * time.Second
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("linoone serve exited with %v after SIGINT", p.err)
		}
	case <-time.After(stopWithin):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("linoone serve did not stop within %s of SIGINT; killed", stopWithin)
	}
}

// serveProc is one run of `linoone serve`.
type serveProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	err    error         // cmd.Wait's result, set before exited is closed
}

// readCredentials takes the SigV4 pair serve wrote into the data directory.
func (l *local) readCredentials(t *testing.T) Signer {
	t.Helper()
	path := filepath.Join(l.dataDir, "credentials.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("management credentials: %v", err)
	}
	var c struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.AccessKeyID == "" || c.SecretAccessKey == "" {
		t.Fatalf("%s: want access_key_id and secret_access_key (%v)", path, err)
	}
	return Signer{Credentials: credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, ""), Region: localRegion}
}

// cli runs a linoone command on this data directory and returns its stdout.
func (l *local) cli(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.bin, args...)
	cmd.Env = l.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("linoone %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func (l *local) ManagementURL() string { return "http://" + l.management }
func (l *local) ResolverURL() string   { return "http://" + l.resolver }
func (l *local) Signer() Signer        { return l.signer }

func (l *local) Patience() Patience {
	return Patience{Fact: 15 * time.Second, Quiet: time.Second, Poll: 50 * time.Millisecond}
}

// PollFacts reads the complete lines of facts.jsonl that it has not returned yet.
func (l *local) PollFacts(t *testing.T) []Fact {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.dataDir, "facts.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("facts.jsonl: %v", err)
	}
	lines := strings.Split(string(b), "\n")
	lines = lines[:len(lines)-1] // the last element is "" or a line still being written
	var out []Fact
	for i := l.factLines; i < len(lines); i++ {
		var f Fact
		if err := json.Unmarshal([]byte(lines[i]), &f); err != nil {
			t.Fatalf("facts.jsonl line %d is not an event: %v: %.300s", i+1, err, lines[i])
		}
		out = append(out, f)
	}
	l.factLines = max(l.factLines, len(lines))
	return out
}

// WaitDeadLettered polls `linoone dlq --json`.
func (l *local) WaitDeadLettered(t *testing.T, n int) []string {
	t.Helper()
	const within = 15 * time.Second
	deadline := time.Now().Add(within)
	for {
		out := l.cli(t, "dlq", "--json")
		var entries []struct {
			IdempotencyKey string
			Problem        string
		}
		if err := json.Unmarshal([]byte(out), &entries); err != nil {
			t.Fatalf("linoone dlq --json: %v: %.500s", err, out)
		}
		if len(entries) == n {
			l.validateDeadLetters(t)
			keys := make([]string, 0, n)
			for _, e := range entries {
				if e.Problem != "" {
					t.Fatalf("invalid dead letter %s: %s", e.IdempotencyKey, e.Problem)
				}
				keys = append(keys, e.IdempotencyKey)
			}
			return keys
		}
		if time.Now().After(deadline) {
			t.Fatalf("click DLQ holds %d facts after %s, want %d:\n%s", len(entries), within, n, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// validateDeadLetters checks every message file of the local click DLQ against the
// DLQ message schema.
func (l *local) validateDeadLetters(t *testing.T) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(l.dataDir, "dlq", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) { // replay may just have removed it
			t.Fatal(err)
		}
		if err == nil {
			validateSchema(t, clickDLQSchema, b)
		}
	}
}

func (l *local) BreakBus(t *testing.T) {
	t.Helper()
	l.stop(t)
	l.start(t, "LINOONE_BUS_FAULT=always")
}

func (l *local) HealBus(t *testing.T) {
	t.Helper()
	l.stop(t)
	l.start(t)
}

// Replay runs `linoone replay` while serve runs; serve's bus consumer ingests.
func (l *local) Replay(t *testing.T) {
	t.Helper()
	out := l.cli(t, "replay", "--quiet")
	if !strings.Contains(out, "failed 0, invalid 0") {
		t.Fatalf("linoone replay: %s", out)
	}
	t.Logf("linoone replay: %s", strings.TrimSpace(out))
}
