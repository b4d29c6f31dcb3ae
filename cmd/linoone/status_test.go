package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/foundation/flock"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// statusOutput is linoone status --json's document, as a script reads it.
type statusOutput struct {
	Serve struct {
		DataDir   string `json:"data_dir"`
		State     string
		PID       int
		Addresses string
	}
	Resolver, Management listenerOutput
	Persist              *listenerOutput
	Journal              struct {
		WaitingBytes  int64      `json:"waiting_bytes"`
		OldestWaiting *time.Time `json:"oldest_waiting"`
		Consumer      string
		ConsumerPID   int `json:"consumer_pid"`
	}
	ClickDLQ struct{ Waiting int } `json:"click_dlq"`
}

type listenerOutput struct {
	URL, Status, Error string
	Degraded           []string
}

// TestStatusOfEachListener: status asks each listener for GET /healthz over HTTP and
// says what it answered: ok, degraded and what is, or down with why, for a refused
// connection and for an answer that is not the health document; it exits 1 naming
// the listeners that are not ok. The data dir's locks, which this process holds as a
// serve with its consumer inline does, say who runs (on Linux; elsewhere the
// resolver's bus_lag_bytes tells an inline consumer).
func TestStatusOfEachListener(t *testing.T) {
	resolver := healthServer(t, `{"status":"degraded","degraded":["click-delivery"],"bus_lag_bytes":1234}`)
	management := healthServer(t, `<html>a proxy's page</html>`)
	persistAddr := testport.Free(t) // nothing listens there
	dataDir := t.TempDir()
	holdDataDir(t, dataDir)
	env := map[string]string{
		"LINOONE_DATA_DIR":       dataDir,
		"LINOONE_RESOLVER_ADDR":  strings.TrimPrefix(resolver.URL, "http://"),
		"LINOONE_MANAGEMENT_URL": management.URL,
		"LINOONE_PERSIST_ADDR":   persistAddr,
	}
	runStatus := func(args ...string) (int, string, string) { return runStatusWith(env, args...) }

	code, out, errOut := runStatus("--json")
	if code != 1 || !strings.Contains(errOut, "resolver degraded, management down, persist down") {
		t.Errorf("exit %d, stderr %q; want 1 naming the listeners that are not ok", code, errOut)
	}
	if runtime.GOOS == "linux" && !strings.Contains(errOut, fmt.Sprintf("serve, pid %d, holds the data dir", os.Getpid())) {
		t.Errorf("stderr %q does not say that a serve holds the data dir", errOut)
	}
	var rep statusOutput
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if rep.Resolver.Status != "degraded" || len(rep.Resolver.Degraded) != 1 || rep.Resolver.Degraded[0] != "click-delivery" || rep.Resolver.URL != resolver.URL {
		t.Errorf("resolver: %+v", rep.Resolver)
	}
	if rep.Management.Status != "down" || !strings.Contains(rep.Management.Error, "GET /healthz") {
		t.Errorf("management answering a page that is no health document: %+v", rep.Management)
	}
	if rep.Persist == nil || rep.Persist.Status != "down" || !strings.Contains(rep.Persist.Error, "refused") {
		t.Errorf("persist on a closed port: %+v", rep.Persist)
	}
	if rep.Journal.Consumer != "inline" || rep.Journal.WaitingBytes != 0 || rep.Journal.OldestWaiting != nil || rep.ClickDLQ.Waiting != 0 {
		t.Errorf("journal %+v, click DLQ %+v", rep.Journal, rep.ClickDLQ)
	}
	wantServe := "unknown" // where no locks are listed: from the resolver's bus_lag_bytes
	if runtime.GOOS == "linux" {
		wantServe = "running"
	}
	if rep.Serve.State != wantServe || rep.Serve.DataDir != dataDir || (wantServe == "running" && rep.Serve.PID != os.Getpid()) {
		t.Errorf("serve %+v, want %s in %s", rep.Serve, wantServe, dataDir)
	}

	code, out, _ = runStatus()
	for _, want := range []string{"degraded: click-delivery", "management  " + management.URL + "  down: GET /healthz", "refused", "every click delivered", "no click fact waiting"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("status (exit %d) does not say %q:\n%s", code, want, out)
		}
	}

	// A Persist of its own (LINOONE_PERSIST_URL): serve starts none, status asks none.
	env["LINOONE_PERSIST_URL"] = "http://" + persistAddr
	if _, out, _ := runStatus("--json"); strings.Contains(out, `"persist"`) {
		t.Errorf("status asked a Persist serve does not start:\n%s", out)
	}
}

// TestStatusAsksWhereServeListens: status asks the listeners where the serve holding
// the data dir recorded them, whatever this environment's LINOONE_*_ADDR say, and
// asks local Persist only if that serve started one. A record whose pid holds no
// lock (left by a serve that was killed) is not trusted: status asks where the
// environment says, and says that a serve holds the data dir. Where the system lists
// no locks, no record is trusted.
func TestStatusAsksWhereServeListens(t *testing.T) {
	resolver := healthServer(t, `{"status":"ok","bus_lag_bytes":0}`)
	management := healthServer(t, `{"status":"ok"}`)
	dataDir := t.TempDir()
	holdDataDir(t, dataDir)
	env := map[string]string{ // nothing listens where this environment says
		"LINOONE_DATA_DIR":        dataDir,
		"LINOONE_RESOLVER_ADDR":   testport.Free(t),
		"LINOONE_MANAGEMENT_ADDR": testport.Free(t),
		"LINOONE_PERSIST_ADDR":    testport.Free(t),
	}
	rec := datadir.Listening{PID: os.Getpid(), Resolver: strings.TrimPrefix(resolver.URL, "http://"), Management: strings.TrimPrefix(management.URL, "http://")}
	if err := datadir.RecordListening(dataDir, rec); err != nil {
		t.Fatal(err)
	}
	statusJSON := func() (int, statusOutput, string) {
		code, out, errOut := runStatusWith(env, "--json")
		var rep statusOutput
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		return code, rep, errOut
	}

	code, rep, errOut := statusJSON()
	if runtime.GOOS != "linux" {
		if code != 1 || rep.Serve.Addresses != "environment" {
			t.Errorf("where no locks are listed: exit %d, addresses from %q; want 1, environment", code, rep.Serve.Addresses)
		}
		return
	}
	if code != 0 || rep.Serve.Addresses != "recorded" || rep.Resolver.URL != resolver.URL || rep.Management.URL != management.URL ||
		rep.Resolver.Status != "ok" || rep.Management.Status != "ok" {
		t.Errorf("exit %d (%s), serve %+v, resolver %+v, management %+v; want both ok where serve recorded them", code, errOut, rep.Serve, rep.Resolver, rep.Management)
	}
	if rep.Persist != nil {
		t.Errorf("status asked a Persist serve recorded none of: %+v", rep.Persist)
	}
	rec.Persist = env["LINOONE_RESOLVER_ADDR"] // a closed port
	if err := datadir.RecordListening(dataDir, rec); err != nil {
		t.Fatal(err)
	}
	if code, rep, _ := statusJSON(); code != 1 || rep.Persist == nil || rep.Persist.URL != "http://"+rec.Persist || rep.Persist.Status != "down" {
		t.Errorf("exit %d, persist %+v; want 1 and persist down where serve recorded it", code, rep.Persist)
	}

	rec.PID = os.Getpid() + 1 // holds no lock here
	if err := datadir.RecordListening(dataDir, rec); err != nil {
		t.Fatal(err)
	}
	code, rep, errOut = statusJSON()
	if code != 1 || rep.Serve.Addresses != "environment" || rep.Resolver.URL != "http://"+env["LINOONE_RESOLVER_ADDR"] ||
		rep.Persist == nil || rep.Persist.URL != "http://"+env["LINOONE_PERSIST_ADDR"] {
		t.Errorf("a stale record: exit %d, serve %+v, resolver %+v, persist %+v; want the environment's addresses", code, rep.Serve, rep.Resolver, rep.Persist)
	}
	if !strings.Contains(errOut, "holds the data dir: were LINOONE_RESOLVER_ADDR") {
		t.Errorf("stderr %q does not ask whether the addresses are serve's", errOut)
	}
}

// healthServer answers GET /healthz with body.
func healthServer(t *testing.T, body string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

// holdDataDir makes this process hold the data dir's two locks until the test ends,
// as a serve with its consumer inline does.
func holdDataDir(t *testing.T, dataDir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dataDir, datadir.Bus), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{datadir.ServeLock, filepath.Join(datadir.Bus, "consumer.lock")} {
		l, err := flock.Open(filepath.Join(dataDir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if err := l.Lock(); err != nil {
			t.Fatal(err)
		}
	}
}

// runStatusWith runs linoone status in env: its exit code, stdout and stderr.
func runStatusWith(env map[string]string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"status"}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}
