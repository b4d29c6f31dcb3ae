//go:build linux

package main

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/serve"
)

// procStat is what /proc/PID/stat says of a process: its state and process group.
// ok is false once the process is gone.
func procStat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces, so split after its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgid, _ = strconv.Atoi(f[2])
	return f[0][0], pgid, true
}

// alive reports whether pid runs: neither gone nor a zombie nobody reaped yet.
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z'
}

// persistChildren are the live children of serve's process pid running local Persist.
func persistChildren(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			c, _ := strconv.Atoi(s)
			cmdline, _ := os.ReadFile(filepath.Join("/proc", s, "cmdline"))
			if alive(c) && strings.Contains(string(cmdline), serve.ChildCommand) {
				kids = append(kids, c)
			}
		}
	}
	return kids
}

// persistChild waits until serve has exactly one local Persist child that is not
// old, and its port answers.
func (in *instance) persistChild(old int) int {
	in.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if kids := persistChildren(in.t, in.cmd.Process.Pid); len(kids) == 1 && kids[0] != old {
			if res, err := http.Get("http://" + in.persist + "/healthz"); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return kids[0]
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	in.t.Fatalf("no local Persist child (other than %d) answers:\n%s", old, in.logs)
	return 0
}

// TestLocalPersistRunsInAChildThatServeRestarts: serve runs local Persist in a
// process of its own, in a process group of its own (a terminal's Ctrl-C reaches
// serve alone, which then delivers its journal into Persist before it stops it), and
// starts it again when it dies, on the same port, with the same database.
func TestLocalPersistRunsInAChildThatServeRestarts(t *testing.T) {
	in := newInstance(t)
	in.start()
	first := in.persistChild(0)
	if _, pgid, _ := procStat(first); pgid != first {
		t.Errorf("local Persist's process group is %d, want its own (%d)", pgid, first)
	}
	token := in.shorten("https://example.com/before-the-crash")
	if res := in.resolve(token); res.StatusCode != http.StatusFound {
		t.Fatalf("redirect: %d", res.StatusCode)
	}
	in.waitClicks(token, 1)

	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := in.persistChild(first)
	// The child may answer a moment before serve has read that it is ready.
	for _, want := range []string{"local persist exited; restarting it", "local persist restarted"} {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(in.logs.String(), want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.Contains(in.logs.String(), want) {
			t.Errorf("serve did not log %q:\n%s", want, in.logs)
		}
	}
	// The new child has the first one's graph, and takes new links and clicks.
	in.waitClicks(token, 1)
	after := in.shorten("https://example.com/after-the-crash")
	if res := in.resolve(after); res.StatusCode != http.StatusFound {
		t.Fatalf("redirect after the restart: %d", res.StatusCode)
	}
	in.waitClicks(after, 1)

	// Its life is serve's: the signals a terminal or a service manager sends a
	// whole group do not stop it while serve may still deliver into it.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if err := syscall.Kill(second, sig); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if got := in.persistChild(0); got != second {
		t.Fatalf("local Persist %d did not outlive SIGINT and SIGTERM (now %d):\n%s", second, got, in.logs)
	}
	in.stop() // closes its stdin: it exits, and serve with it, cleanly
	if alive(second) {
		t.Errorf("local Persist %d still runs after serve stopped", second)
	}
}

// TestLocalPersistEndsWithServe: kill -9 of serve ends its local Persist too, so
// that the next serve on the same data dir and ports starts.
func TestLocalPersistEndsWithServe(t *testing.T) {
	in := newInstance(t)
	in.start()
	child := in.persistChild(0)
	if err := in.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-in.exited
	deadline := time.Now().Add(5 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(child) {
		t.Fatalf("local Persist %d outlived serve's kill -9", child)
	}
	in.start()
	in.persistChild(child)
}

// TestServeSaysWhyLocalPersistDidNotStart: a database local Persist must not open
// (one written by a newer Linoone) stops serve, exit 1, with Persist's reason on
// stderr.
func TestServeSaysWhyLocalPersistDidNotStart(t *testing.T) {
	in := newInstance(t)
	db, err := sql.Open("sqlite", filepath.Join(in.dataDir, "persist.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Env = in.env
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("serve exited %d (%v), want 1:\n%s", code, err, out)
	}
	for _, want := range []string{"database schema version 99 is newer than this program's", "linoone serve: local persist: did not start"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("serve's output does not say %q:\n%s", want, out)
		}
	}
}
