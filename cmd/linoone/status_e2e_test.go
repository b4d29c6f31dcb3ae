package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// TestStatus runs linoone status beside a real serve: with the consumer external, the
// clicks of its redirects wait in the journal, since the time of the first, until
// linoone consume delivers them; with the bus failing, they wait in the click DLQ;
// with serve stopped, every listener is down (exit 1) and the data dir still tells
// what waits. On Linux the data dir's locks name serve's and the consumer's pids.
func TestStatus(t *testing.T) {
	in := newInstance(t)
	in.start("LINOONE_CONSUMER=external")
	status := func() (statusOutput, string, error) {
		t.Helper()
		out, errOut, err := in.cli("status", "--json")
		var rep statusOutput
		if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
			t.Fatalf("status --json: %v (%v, %s)\n%s", jerr, err, errOut, out)
		}
		return rep, errOut, err
	}

	tok := in.shorten("https://example.com/status")
	first := time.Now().Truncate(time.Second)
	const clicks = 4
	for range clicks {
		if r := in.resolve(tok); r.StatusCode != http.StatusFound {
			t.Fatalf("redirect: %d", r.StatusCode)
		}
	}
	rep, _, err := status()
	if err != nil {
		t.Fatalf("status of a serve that answers: %v", err)
	}
	for _, l := range []*listenerOutput{&rep.Resolver, &rep.Management, rep.Persist} {
		if l == nil || l.Status != "ok" {
			t.Errorf("listener %+v, want ok", l)
		}
	}
	linux := runtime.GOOS == "linux"
	if linux && (rep.Serve.State != "running" || rep.Serve.PID != in.cmd.Process.Pid) {
		t.Errorf("serve %+v, want running as pid %d", rep.Serve, in.cmd.Process.Pid)
	}
	j := rep.Journal
	wantConsumer := "external" // from /healthz, where no locks are listed
	if linux {
		wantConsumer = "none" // no linoone consume runs yet
	}
	if j.Consumer != wantConsumer || j.WaitingBytes < clicks*1000 || j.OldestWaiting == nil ||
		j.OldestWaiting.Before(first) || j.OldestWaiting.After(time.Now()) {
		t.Errorf("journal after %d clicks with the consumer external, the first at %v: %+v (oldest %v)", clicks, first, j, j.OldestWaiting)
	}
	// A shell whose LINOONE_*_ADDR are not serve's finds serve where it recorded its
	// listeners (where the system lists locks, which tell the record is serve's).
	if linux {
		other := exec.Command(binary, "status", "--json")
		other.Env = append(append([]string{}, in.env...), "LINOONE_RESOLVER_ADDR="+testport.Free(t),
			"LINOONE_MANAGEMENT_ADDR="+testport.Free(t), "LINOONE_PERSIST_ADDR="+testport.Free(t))
		out, err := other.Output()
		var rep statusOutput
		if jerr := json.Unmarshal(out, &rep); err != nil || jerr != nil || rep.Serve.Addresses != "recorded" ||
			rep.Resolver.URL != "http://"+in.resolver || rep.Management.URL != "http://"+in.management || rep.Persist == nil || rep.Persist.URL != "http://"+in.persist {
			t.Errorf("status in another environment (%v, %v): %s", err, jerr, out)
		}
	}
	if out, _, _ := in.cli("status"); !strings.Contains(out, "waiting for the consumer; the oldest click from") ||
		!strings.Contains(out, "linoone consume") {
		t.Errorf("status does not say what waits and who delivers it:\n%s", out)
	}

	// A linoone consume running beside serve delivers the journal, and status names it.
	consume := exec.Command(binary, "consume")
	consume.Env = in.env
	if err := consume.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; {
		rep, _, _ = status()
		if rep.Journal.WaitingBytes == 0 && (!linux || rep.Journal.ConsumerPID != 0) {
			break
		}
		if time.Now().After(deadline) {
			_ = consume.Process.Kill()
			_ = consume.Wait()
			t.Fatalf("status while linoone consume runs: %+v", rep.Journal)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if linux && (rep.Journal.Consumer != "external" || rep.Journal.ConsumerPID != consume.Process.Pid) {
		t.Errorf("journal %+v, want delivered by linoone consume, pid %d", rep.Journal, consume.Process.Pid)
	}
	if rep.Journal.OldestWaiting != nil {
		t.Errorf("journal delivered, but an oldest click waiting: %v", rep.Journal.OldestWaiting)
	}
	_ = consume.Process.Signal(os.Interrupt)
	if err := consume.Wait(); err != nil {
		t.Errorf("linoone consume on SIGINT: %v", err)
	}

	in.stop()
	in.start("LINOONE_BUS_FAULT=always")
	if r := in.resolve(tok); r.StatusCode != http.StatusFound {
		t.Fatalf("redirect during the bus fault: %d", r.StatusCode)
	}
	if rep, _, err := status(); err != nil || rep.ClickDLQ.Waiting != 1 || rep.Journal.Consumer != "inline" {
		t.Errorf("status during the bus fault (%v): click DLQ %+v, journal %+v", err, rep.ClickDLQ, rep.Journal)
	}

	in.stop()
	if _, err := os.Stat(filepath.Join(in.dataDir, datadir.ListeningFile)); !os.IsNotExist(err) {
		t.Errorf("serve stopped, but its record of its listeners is left: %v", err)
	}
	rep, errOut, err := status()
	if err == nil || !strings.Contains(errOut, "resolver down, management down, persist down") {
		t.Errorf("status of a stopped serve: %v, %q; want exit 1 naming every listener", err, errOut)
	}
	wantConsumer, wantServe := "unknown", "unknown"
	if linux {
		wantConsumer, wantServe = "none", "stopped"
	}
	if rep.ClickDLQ.Waiting != 1 || rep.Journal.Consumer != wantConsumer || rep.Serve.State != wantServe || rep.Serve.PID != 0 {
		t.Errorf("status of a stopped serve: click DLQ %+v, journal %+v, serve %+v", rep.ClickDLQ, rep.Journal, rep.Serve)
	}
}
