//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitExit waits up to d for serve to exit and returns its exit code.
func (in *instance) waitExit(d time.Duration) int {
	in.t.Helper()
	select {
	case <-in.exited:
		return in.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		_ = in.cmd.Process.Kill()
		<-in.exited
		in.t.Fatalf("serve did not exit within %s:\n%s", d, in.logs)
		return 0
	}
}

// waitLog waits until serve's log holds s.
func (in *instance) waitLog(s string) {
	in.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(in.logs.String(), s) {
		if time.Now().After(deadline) {
			in.t.Fatalf("serve's log never said %q:\n%s", s, in.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHangupStopsServeAsCtrlCDoes: the terminal or SSH session closing sends SIGHUP;
// serve stops as on Ctrl-C, delivering every click it acknowledged, and exits 0.
// Killed by the signal instead, it would lose whatever its click buffer held.
func TestHangupStopsServeAsCtrlCDoes(t *testing.T) {
	// serve leaves SIGHUP ignored when it starts with it ignored (next test), and it
	// would, if this test's process had been started under nohup. A signal this
	// process handles is reset to its default in the processes it starts.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	in := newInstance(t)
	in.start()
	tok := in.shorten("https://example.com/hangup")
	for range 3 {
		if res := in.resolve(tok); res.StatusCode != 302 {
			t.Fatalf("resolve: %d", res.StatusCode)
		}
	}
	if err := in.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := in.waitExit(30 * time.Second); code != 0 {
		t.Fatalf("serve exited %d on SIGHUP, want 0:\n%s", code, in.logs)
	}
	for _, want := range []string{`"msg":"shutting down"`, `"msg":"bus delivered"`} {
		if !strings.Contains(in.logs.String(), want) {
			t.Errorf("serve's log lacks %s:\n%s", want, in.logs)
		}
	}
	if n := len(readFacts(t, filepath.Join(in.dataDir, "facts.jsonl"))); n != 3 {
		t.Errorf("%d clicks in facts.jsonl after SIGHUP, want 3", n)
	}
}

// TestHangupUnderNohupIsIgnored: started under nohup, serve leaves SIGHUP ignored,
// as nohup asked, and goes on serving; Ctrl-C still stops it cleanly (stop checks
// the exit status).
func TestHangupUnderNohupIsIgnored(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup on this machine")
	}
	in := newInstance(t)
	in.startCommand([]string{nohup, binary, "serve"})
	tok := in.shorten("https://example.com/nohup")
	if err := in.cmd.Process.Signal(syscall.SIGHUP); err != nil { // nohup exec'd serve: same process
		t.Fatal(err)
	}
	select {
	case <-in.exited:
		t.Fatalf("serve under nohup exited on SIGHUP (%v):\n%s", in.cmd.ProcessState, in.logs)
	case <-time.After(time.Second):
	}
	if res := in.resolve(tok); res.StatusCode != 302 {
		t.Fatalf("resolve after SIGHUP under nohup: %d", res.StatusCode)
	}
	if strings.Contains(in.logs.String(), `"msg":"shutting down"`) {
		t.Errorf("serve under nohup began to shut down on SIGHUP:\n%s", in.logs)
	}
	in.stop()
}

// TestSecondStopSignalStopsAtOnce: with local Persist hung, serve's delivery of its
// journal at shutdown cannot end; a second Ctrl-C stops serve at once. It exits 1
// and says how much of the bus the next start delivers, so that an operator (or a
// script about to move the data dir) can tell such a stop from a drained one.
func TestSecondStopSignalStopsAtOnce(t *testing.T) {
	in := newInstance(t)
	in.start()
	tok := in.shorten("https://example.com/second-signal")
	in.resolve(tok) // the hot set holds it: redirects need no Persist from here
	in.waitClicks(tok, 1)
	child := in.persistChild(0)
	if err := syscall.Kill(child, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGCONT) })
	for range 3 {
		if res := in.resolve(tok); res.StatusCode != 302 {
			t.Fatalf("resolve: %d", res.StatusCode)
		}
	}
	if err := in.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	in.waitLog(`"msg":"shutting down"`)
	time.Sleep(time.Second) // into the delivery, which the hung Persist holds up
	start := time.Now()
	if err := in.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := in.waitExit(10 * time.Second); code != 1 {
		t.Fatalf("serve exited %d after a second Ctrl-C, want 1:\n%s", code, in.logs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("serve took %s to stop after the second Ctrl-C", d)
	}
	for _, want := range []string{"stop signal repeated", "bytes of the bus were not delivered into persist at shutdown", "the next start delivers them"} {
		if !strings.Contains(in.logs.String(), want) {
			t.Errorf("serve's output lacks %q:\n%s", want, in.logs)
		}
	}
}

// TestStopWhileStartingIsNoFailure: a stop signal that arrives while serve starts
// (local Persist's start waits out a migration of its file, however long) stops
// serve; that is not a failure a service manager should record.
func TestStopWhileStartingIsNoFailure(t *testing.T) {
	in := newInstance(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := map[string]string{}
	for _, kv := range in.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var out, errOut strings.Builder
	if code := run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &out, &errOut); code != 0 {
		t.Fatalf("serve stopped while starting: exit %d, want 0:\n%s", code, &errOut)
	}
	if !strings.Contains(errOut.String(), "stopped before serving") {
		t.Errorf("serve's log does not say it stopped before serving:\n%s", &errOut)
	}
	if strings.Contains(errOut.String(), "local persist did not stop in time") {
		t.Errorf("serve started local Persist after the stop, and had to kill it:\n%s", &errOut)
	}
}
