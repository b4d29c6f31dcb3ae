package datadir_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/linoone/linoone/internal/app/datadir"
)

// TestListeningRecord: the record serve leaves reads back as written, replaces an
// earlier one, and is removed only by the serve it names; no record, or one that
// cannot be read, is none.
func TestListeningRecord(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := datadir.ReadListening(dir); ok || err != nil {
		t.Fatalf("no record: ok %v, %v", ok, err)
	}
	old := datadir.Listening{PID: 7, Resolver: "127.0.0.1:1", Management: "127.0.0.1:2", Persist: "127.0.0.1:3"}
	want := datadir.Listening{PID: 8, Resolver: "127.0.0.1:4", Management: "[::1]:5"}
	for _, l := range []datadir.Listening{old, want} {
		if err := datadir.RecordListening(dir, l); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok, err := datadir.ReadListening(dir); !ok || err != nil || got != want {
		t.Fatalf("read %+v (ok %v, %v), want %+v", got, ok, err, want)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Errorf("the data dir holds %v (%v), want the record alone: no temporary file left", entries, err)
	}
	datadir.RemoveListening(dir, old.PID) // not its record
	if _, ok, _ := datadir.ReadListening(dir); !ok {
		t.Fatal("another serve's shutdown removed the record")
	}
	datadir.RemoveListening(dir, want.PID)
	if _, ok, err := datadir.ReadListening(dir); ok || err != nil {
		t.Fatalf("after its serve's shutdown: ok %v, %v", ok, err)
	}

	for _, bad := range []string{"", "{", `{"pid":0,"resolver":"127.0.0.1:1","management":"127.0.0.1:2"}`, `{"pid":9,"management":"127.0.0.1:2"}`} {
		if err := os.WriteFile(filepath.Join(dir, datadir.ListeningFile), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if l, ok, err := datadir.ReadListening(dir); ok || err == nil {
			t.Errorf("record %q: %+v, ok %v, %v; want an error", bad, l, ok, err)
		}
	}
}

// TestDialable: a listener on every interface is reached on the loopback; any other
// keeps its address.
func TestDialable(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:8080":     "127.0.0.1:8080",
		"[::]:8080":        "127.0.0.1:8080",
		"127.0.0.1:8080":   "127.0.0.1:8080",
		"[::1]:8081":       "[::1]:8081",
		"192.0.2.10:80":    "192.0.2.10:80",
		"[2001:db8::1]:80": "[2001:db8::1]:80",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := datadir.Dialable(a); got != want {
			t.Errorf("dialable(%s) = %s, want %s", addr, got, want)
		}
	}
}
