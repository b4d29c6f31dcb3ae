package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStatus runs linoone status beside a real serve: with the consumer external, the
// clicks of its redirects wait in the journal, since the time of the first, until
// linoone consume delivers them; with the bus failing, they wait in the click DLQ;
// with serve stopped, every listener is down (exit 1) and the data dir still tells
// what waits.
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
	j := rep.Journal
	if j.Consumer != "external" || j.WaitingBytes < clicks*1000 || j.OldestWaiting == nil ||
		j.OldestWaiting.Before(first) || j.OldestWaiting.After(time.Now()) {
		t.Errorf("journal after %d clicks with the consumer external, the first at %v: %+v (oldest %v)", clicks, first, j, j.OldestWaiting)
	}
	if out, _, _ := in.cli("status"); !strings.Contains(out, "waiting for the consumer; the oldest click from") ||
		!strings.Contains(out, "linoone consume delivers it") {
		t.Errorf("status does not say what waits and who delivers it:\n%s", out)
	}

	if out, errOut, err := in.cli("consume", "--drain"); err != nil {
		t.Fatalf("consume --drain: %v\n%s%s", err, out, errOut)
	}
	if rep, _, _ := status(); rep.Journal.WaitingBytes != 0 || rep.Journal.OldestWaiting != nil {
		t.Errorf("journal after consume --drain: %+v", rep.Journal)
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
	rep, errOut, err := status()
	if err == nil || !strings.Contains(errOut, "resolver down, management down, persist down") {
		t.Errorf("status of a stopped serve: %v, %q; want exit 1 naming every listener", err, errOut)
	}
	if rep.ClickDLQ.Waiting != 1 || rep.Journal.Consumer != "unknown" {
		t.Errorf("status of a stopped serve: click DLQ %+v, journal %+v", rep.ClickDLQ, rep.Journal)
	}
}
