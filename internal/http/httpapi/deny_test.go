package httpapi_test

import (
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/persist/hotset"
)

func holding(t testing.TB, rules string) *denylist.Holder {
	t.Helper()
	l, bad := denylist.ParseString(rules)
	if len(bad) > 0 {
		t.Fatalf("malformed rules: %v", bad)
	}
	h := &denylist.Holder{}
	h.Set(l)
	return h
}

// TestShortenRefusesBlockedTargets: issue 11 item 2, every spelling the host
// normaliser knows, before a token is drawn or the store touched.
func TestShortenRefusesBlockedTargets(t *testing.T) {
	st := newStore()
	counters := &shorturl.ScreenCounters{}
	deny := holding(t, "*.evil.example\n10.0.0.1\nhttps://docs.example.com/shared/\n127.0.0.1\n")
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st, ResolverBaseURL: "http://127.0.0.1:8080", Rand: rand.Reader,
		Screening: shorturl.Screening{Screen: deny, Counters: counters}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := sigv4.New(creds, "us-east-1", "execute-api")
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: st, Authenticator: v})
	if err != nil {
		t.Fatal(err)
	}
	blocked := map[string]string{
		"https://login.evil.example/x":          "domain",
		"https://LOGIN.EVIL.EXAMPLE./x":         "domain",
		"https://ｌｏｇｉｎ.evil.example/x":          "domain",
		"https://login.evil。example/x":          "domain",
		"http://0xa.0.0.1/":                     "host",
		"http://167772161/":                     "host",
		"http://012.0.0.1:8443/":                "host",
		"http://[::ffff:10.0.0.1]/":             "host",
		"https://Docs.Example.COM/shared/a?b=c": "prefix",
	}
	for target, kind := range blocked {
		status, code, out := shorten(t, h, `{"target_url":"`+target+`"}`)
		if status != http.StatusUnprocessableEntity || code != httpapi.CodeTargetBlocked {
			t.Errorf("%s: %d %s: %s", target, status, code, out)
		}
		if !strings.Contains(string(out), "a "+kind+" rule") || strings.Contains(string(out), "evil.example") {
			t.Errorf("%s: the problem must name the rule kind %q, never the rule: %s", target, kind, out)
		}
	}
	if st.lookups != 0 || st.saves != 0 {
		t.Errorf("blocked targets touched the store: %d lookups, %d saves", st.lookups, st.saves)
	}
	if n := counters.TargetsBlocked.Load(); n != int64(len(blocked)) {
		t.Errorf("TargetsBlocked = %d, want %d", n, len(blocked))
	}
	// A rule on the resolver's own host changes nothing there: the self rule answers first.
	if status, code, out := shorten(t, h, `{"target_url":"http://127.0.0.1:8080/7BTadEDkJ8"}`); status != http.StatusBadRequest || code != string(shorturl.RuleSelf) {
		t.Errorf("own host: %d %s: %s", status, code, out)
	}
	if status, _, out := shorten(t, h, `{"target_url":"https://docs.example.com/public/"}`); status != http.StatusCreated {
		t.Errorf("unblocked target: %d %s", status, out)
	}
}

// TestResolveBlockedLinkIsGone: issue 11 item 3. The hot set does not bypass the
// deny list, HEAD answers as GET, no click is recorded, unblocking restores the 302.
func TestResolveBlockedLinkIsGone(t *testing.T) {
	st := newStore()
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://login.evil.example/x"}
	st.m[u.Token] = u
	pub := &publisher{}
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: pub, DeadLetters: noDLQ{},
		EventIDs: func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", nil }})
	if err != nil {
		t.Fatal(err)
	}
	deny, counters := &denylist.Holder{}, &shorturl.ScreenCounters{}
	res, err := shorturl.NewResolver(hotset.New(st, 10), rec, shorturl.Screening{Screen: deny, Counters: counters})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res})
	get := func(method string) (*http.Response, []byte) {
		return do(t, h, httptest.NewRequest(method, "/7BTadEDkJ8", nil))
	}
	if r, _ := get(http.MethodGet); r.StatusCode != http.StatusFound { // now in the hot set
		t.Fatalf("before blocking: %d", r.StatusCode)
	}
	deny.Set(holding(t, "*.evil.example").List())
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		r, body := get(m)
		if r.StatusCode != http.StatusGone {
			t.Fatalf("%s blocked: %d %s", m, r.StatusCode, body)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "no-store" { // else a browser keeps the 410 past the unblock
			t.Errorf("%s blocked: Cache-Control %q, want no-store", m, cc)
		}
		if m == http.MethodGet {
			if p := decodeProblem(t, r, body); p.Type != httpapi.ProblemTypePrefix+httpapi.CodeLinkBlocked || strings.Contains(p.Detail, "evil") {
				t.Errorf("problem %+v", p)
			}
		}
	}
	if len(pub.facts) != 1 || counters.LinksBlockedServed.Load() != 2 {
		t.Errorf("facts %d (want 1: the click before blocking), LinksBlockedServed %d (want 2)", len(pub.facts), counters.LinksBlockedServed.Load())
	}
	deny.Set(holding(t, "").List())
	if r, _ := get(http.MethodGet); r.StatusCode != http.StatusFound {
		t.Errorf("after unblocking: %d", r.StatusCode)
	}
}
