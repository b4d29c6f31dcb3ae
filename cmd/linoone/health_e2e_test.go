package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
)

// healthBody is the resolver's (or another port's) GET /healthz, which must be 200.
func healthBody(t *testing.T, addr string) string {
	t.Helper()
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz = %d %s", res.StatusCode, b)
	}
	return string(b)
}

// TestHealthNamesWhatFails: while Persist fails the inline consumer's ingests, the
// resolver's /healthz names click-delivery degraded, and the click waits in the
// journal; once Persist takes ingests again the click is delivered and health is ok.
// While Persist fails the resolver's lookups, a visitor gets 503 and /healthz names
// persist. Persist is another serve's local Persist, behind a proxy that answers 503
// while told to.
func TestHealthNamesWhatFails(t *testing.T) {
	store := newInstance(t)
	store.start()
	upstream, err := url.Parse("http://" + store.persist)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(upstream) // keeps the Host the client signed
	var refuse, refuseGremlin atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && r.URL.Path == "/persist/ingest" || refuseGremlin.Load() && r.URL.Path == "/persist/gremlin" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"unavailable"}`))
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close) // after the serve behind it stopped (cleanups run last first)

	pc := store.persistCredentials()
	in := newInstance(t, "LINOONE_PERSIST_URL="+proxy.URL,
		"LINOONE_PERSIST_ACCESS_KEY_ID="+pc.AccessKeyID, "LINOONE_PERSIST_SECRET_ACCESS_KEY="+pc.SecretAccessKey)
	in.persist = store.persist // start() waits for its /healthz too
	in.start()
	t.Cleanup(func() { refuse.Store(false); refuseGremlin.Store(false) }) // so that a failed test's serve stops at once
	health := func() string { return strings.TrimSpace(healthBody(t, in.resolver)) }
	// waitHealth polls /healthz until want holds of it, for up to 15 s.
	waitHealth := func(want func(string) bool, while string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for h := health(); !want(h); h = health() {
			if time.Now().After(deadline) {
				t.Fatalf("healthz %s: %s", while, h)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	const ok = `{"bus_lag_bytes":0,"status":"ok"}`
	tok := in.shorten("https://example.com/delivery-fails")
	if h := health(); h != ok {
		t.Fatalf("healthz before any click = %s", h)
	}

	refuse.Store(true)
	if r := in.resolve(tok); r.StatusCode != http.StatusFound {
		t.Fatalf("GET /%s = %d, want 302", tok, r.StatusCode)
	}
	facts := filepath.Join(in.dataDir, datadir.Facts)
	waitHealth(func(h string) bool { return strings.Contains(h, `"degraded":["click-delivery"]`) },
		"while Persist refuses ingests (want click-delivery degraded)")
	if n := len(readFacts(t, facts)); n != 0 {
		t.Fatalf("%d facts delivered while Persist refuses ingests", n)
	}

	refuse.Store(false)
	waitFacts(t, facts, 1)
	waitHealth(func(h string) bool { return h == ok }, "once the click is delivered (want ok)")
	in.waitClicks(tok, 1)

	refuseGremlin.Store(true)
	const unknown = "zZ9yY8xX7w" // not in the hot set: the lookup goes to Persist
	if r := in.resolve(unknown); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("GET /%s while Persist refuses lookups = %d, want 503", unknown, r.StatusCode)
	}
	if h := health(); h != `{"bus_lag_bytes":0,"degraded":["persist"],"status":"degraded"}` {
		t.Fatalf("healthz while Persist refuses lookups = %s, want persist degraded", h)
	}
	// The management API reports its own calls: the resolver's failed lookup is
	// not one of them.
	mgmtHealth := func() string { return strings.TrimSpace(healthBody(t, in.management)) }
	if h := mgmtHealth(); h != `{"deny_list_malformed":0,"status":"ok"}` {
		t.Fatalf("management healthz before any management call failed = %s, want ok", h)
	}
	if r, err := in.client().GetLinkWithResponse(context.Background(), unknown); err != nil || r.StatusCode() != http.StatusServiceUnavailable {
		t.Fatalf("GET /links/%s while Persist refuses lookups: %v %d, want 503", unknown, err, r.StatusCode())
	}
	if h := mgmtHealth(); h != `{"degraded":["persist"],"deny_list_malformed":0,"status":"degraded"}` {
		t.Fatalf("management healthz while Persist refuses lookups = %s, want persist degraded", h)
	}
	refuseGremlin.Store(false)
	if r := in.resolve(unknown); r.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /%s once Persist answers = %d, want 404", unknown, r.StatusCode)
	}
	if h := health(); h != ok {
		t.Fatalf("healthz once Persist answers lookups = %s, want ok", h)
	}
	if r, err := in.client().GetLinkWithResponse(context.Background(), unknown); err != nil || r.StatusCode() != http.StatusNotFound {
		t.Fatalf("GET /links/%s once Persist answers: %v %d, want 404", unknown, err, r.StatusCode())
	}
	if h := mgmtHealth(); h != `{"deny_list_malformed":0,"status":"ok"}` {
		t.Fatalf("management healthz once Persist answers = %s, want ok", h)
	}
}
