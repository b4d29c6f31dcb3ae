package mgmtapi_test

import (
	"testing"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

// TestHealthCountsMalformedDenyListLines is issue 44's finding 1: the lines of the
// deny list left out as malformed are counted in /healthz, which names deny-list
// degraded meanwhile.
func TestHealthCountsMalformedDenyListLines(t *testing.T) {
	var h denylist.Holder
	e := newEnv(t, func(d *mgmtapi.ManagementDeps) {
		d.DenyList = func() interface{ Malformed() int } { return h.List() }
	})
	if got, want := e.health(t), `{"deny_list_malformed":0,"status":"ok"}`; got != want {
		t.Errorf("no list: %s, want %s", got, want)
	}
	l, _ := denylist.ParseString("*.ok.example\n.evil.example\nevil..example\n")
	h.Set(l)
	if got, want := e.health(t), `{"degraded":["deny-list"],"deny_list_malformed":2,"status":"degraded"}`; got != want {
		t.Errorf("two malformed lines: %s, want %s", got, want)
	}
}
