package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// FuzzManagementRequest sends the management API what a producer chooses beyond the
// body FuzzStrictBody covers — a target, an Idempotency-Key, a path's token, a stats
// query — each request signed with the AWS SDK's signer, as a producer's client
// signs it. No request is refused as unsigned, none fails (5xx) with Persist up, and
// every refusal is a problem of its own status. A short URL issued goes where it was
// asked to (GET /links reads the target back), its target is one the core takes, and
// its key, which CheckIdempotencyKey takes, replays it; a key it refuses is never
// issued with. A stats answer covers the window ParseWindow reads from the query,
// one entry a day.
func FuzzManagementRequest(f *testing.F) {
	h := newFuzzManagementAPI(f)
	f.Add("https://example.com/landing?message_id=msg_123", "order-4711", true, "7BTadEDkJ8", "from=2026-11-01&to=2026-11-30")
	f.Add("https://example.com/"+strings.Repeat("é", 2000), "", false, "7BTadEDkJ8", "")
	f.Add("http://127.0.0.1:8080/7BTadEDkJ8", "order  4711", true, "7BTadEDk-8", "from=2026-11-30&to=2026-11-01")
	f.Add("javascript:alert(1)", "a,b", true, "AAAAAAAAAA", "from=2025-01-01&to=2026-11-30")
	f.Add("https://bücher.example/\u202e", " k", true, "%37BTadEDkJ8", "from=2026-02-30&from=2026-02-01")
	f.Add("", strings.Repeat("~", 255), true, "7BTadEDkJ8/x", "to=9998-12-31&from=9998-12-01&x=1")
	f.Fuzz(func(t *testing.T, target, key string, withKey bool, token, query string) {
		if withKey && !httpguts.ValidHeaderFieldValue(key) {
			return // net/http's server refuses the request before any handler
		}
		body, _ := json.Marshal(map[string]string{"target_url": target})
		var sent struct {
			TargetURL string `json:"target_url"`
		}
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatal(err)
		}
		target = sent.TargetURL // invalid UTF-8 made valid, as json.Marshal sent it
		var headers []string
		if withKey {
			headers = []string{"Idempotency-Key", key}
		}
		res, out := fuzzDo(t, h, http.MethodPost, "/shorten", body, headers...)
		checkAnswer(t, "POST /shorten", res, out)
		keyOK := withKey && shorturl.CheckIdempotencyKey(key) == nil
		switch {
		case withKey && !keyOK && res.StatusCode < 300:
			t.Fatalf("Idempotency-Key %q is invalid, yet %d %s", key, res.StatusCode, out)
		case res.StatusCode == http.StatusOK && (!keyOK || res.Header.Get("Idempotent-Replayed") != "true"):
			t.Fatalf("200 to a request that is no replay: %v %s", res.Header, out)
		case res.StatusCode < 300:
			var su struct {
				Token    string `json:"token"`
				ShortURL string `json:"short_url"`
			}
			if err := json.Unmarshal(out, &su); err != nil || !shorturl.IsToken(su.Token) || su.ShortURL != "https://s.example.com/"+su.Token {
				t.Fatalf("issued %s (%v)", out, err)
			}
			if err := shorturl.CheckTarget(target, shorturl.HostRules{}); err != nil {
				t.Fatalf("issued %q, which the core refuses: %v", target, err)
			}
			lres, lout := fuzzDo(t, h, http.MethodGet, "/links/"+su.Token, nil)
			var link struct {
				TargetURL string `json:"target_url"`
			}
			if lres.StatusCode != http.StatusOK || json.Unmarshal(lout, &link) != nil || link.TargetURL != target {
				t.Fatalf("issued %q as %s, read back %d %s", target, su.Token, lres.StatusCode, lout)
			}
			if keyOK {
				again, aout := fuzzDo(t, h, http.MethodPost, "/shorten", body, headers...)
				if again.StatusCode != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(aout, out) {
					t.Fatalf("the retry of %s: %d %v %s", out, again.StatusCode, again.Header, aout)
				}
			}
		}

		path := "/links/" + token + "/stats"
		if query != "" {
			path += "?" + query
		}
		if res, out = fuzzDo(t, h, http.MethodGet, path, nil); res == nil {
			return // net/http's server refuses the request target before any handler
		}
		checkAnswer(t, "GET "+path, res, out)
		if res.StatusCode != http.StatusOK {
			return
		}
		u, _ := url.ParseRequestURI(path)
		q := u.Query()
		w, err := shorturl.ParseWindow(q.Get("from"), q.Get("to"), time.Now())
		var stats statsBody
		if err != nil || json.Unmarshal(out, &stats) != nil || len(stats.ByDay) != w.Days() || w.Days() > shorturl.MaxWindowDays ||
			stats.ByDay[0].Date != w.From.Format("2006-01-02") || stats.ByDay[len(stats.ByDay)-1].Date != w.To.Format("2006-01-02") {
			t.Fatalf("GET %s: 200 %s; the window of its query: %+v, %v", path, out, w, err)
		}
	})
}

// newFuzzManagementAPI is the management API over an in-memory store holding
// known, which issues idempotent short URLs too.
func newFuzzManagementAPI(f *testing.F) http.Handler {
	st := newStore()
	st.m[known.Token] = known
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st, ResolverBaseURL: "https://s.example.com", Rand: rand.Reader,
		IdempotencySecret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		f.Fatal(err)
	}
	v, err := sigv4.New(creds, "us-east-1", "execute-api")
	if err != nil {
		f.Fatal(err)
	}
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: st, Authenticator: v, Caller: sigv4.Caller})
	if err != nil {
		f.Fatal(err)
	}
	return h
}

// fuzzDo signs a request with the AWS SDK's signer and serves it; headers are name,
// value pairs set before signing. The request target is read as net/http's server
// reads it; a nil answer is a request target it refuses before any handler.
func fuzzDo(t *testing.T, h http.Handler, method, target string, body []byte, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n")))
	if err != nil {
		return nil, nil
	}
	req = req.WithContext(context.Background())
	req.RemoteAddr = "192.0.2.1:1234"
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	if err := sigv4.SignRequest(context.Background(), req, body, creds, "us-east-1", "execute-api", time.Now()); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	out, _ := io.ReadAll(res.Body)
	return res, out
}

// checkAnswer checks what every answer of a signed request to a store that is up
// holds: no 403 nor 5xx, JSON, and a refusal a problem of its own status. A path
// with dot segments or doubled slashes is redirected to its clean form by net/http's
// ServeMux, before anything else.
func checkAnswer(t *testing.T, what string, res *http.Response, body []byte) {
	t.Helper()
	if res.StatusCode == http.StatusTemporaryRedirect || res.StatusCode == http.StatusMovedPermanently {
		if res.Header.Get("Location") == "" {
			t.Fatalf("%s: %d without a Location", what, res.StatusCode)
		}
		return
	}
	if res.StatusCode == http.StatusForbidden || res.StatusCode >= 500 || !json.Valid(body) {
		t.Fatalf("%s: %d %s", what, res.StatusCode, body)
	}
	if res.StatusCode < 300 {
		return
	}
	var p problem
	if res.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(body, &p) != nil || p.Status != res.StatusCode ||
		p.Title == "" || p.Detail == "" || !strings.HasPrefix(p.Type, httpapi.ProblemTypePrefix) || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s: %d %v %s is not a problem of its status", what, res.StatusCode, res.Header, body)
	}
}
