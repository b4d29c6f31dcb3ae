package persist_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/core/shorturl/storetest"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/persist/hotset"
)

// testPair is local Persist's SigV4 pair in these tests; every client signs with it.
var testPair = sigv4.Credentials{AccessKeyID: "LNKPERSISTCLIENT0001", SecretAccessKey: "persist-client-test-secret-0123456789ab"}

const testRegion = "us-east-1"

// startLocalPersist serves local Persist, requiring testPair's signature as serve
// does, on a real loopback HTTP server.
func startLocalPersist(t testing.TB) string {
	t.Helper()
	base, _ := startLocalPersistFile(t)
	return base
}

// startLocalPersistFile is startLocalPersist that also returns its database file's
// path, for a test that looks at the files as an operator would.
func startLocalPersistFile(t testing.TB) (base, path string) {
	t.Helper()
	v, err := sigv4.New(testPair, testRegion, "execute-api", sigv4.WithMaxBodyBytes(localpersist.DefaultMaxBodyBytes))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "persist.db")
	st, err := localpersist.Open(context.Background(), path, localpersist.Options{Authenticator: v})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(st.Handler())
	t.Cleanup(func() { srv.Close(); _ = st.Close() })
	return srv.URL, path
}

// newClient signs with testPair, as serve's client does (harmless for the fake
// servers, which check no signature).
func newClient(t testing.TB, base string, inline bool) *persist.Client {
	t.Helper()
	c, err := persist.New(persist.Config{BaseURL: base, InlineLiterals: inline, Timeout: 2 * time.Second, SigV4: &persist.SigV4{
		Credentials: credentials.NewStaticCredentialsProvider(testPair.AccessKeyID, testPair.SecretAccessKey, ""), Region: testRegion}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStoreContractAgainstLocalPersist(t *testing.T) {
	t.Run("bindings", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) shorturl.Store { return newClient(t, startLocalPersist(t), false) })
	})
	t.Run("inline literals", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) shorturl.Store { return newClient(t, startLocalPersist(t), true) })
	})
	t.Run("behind the hot set", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) shorturl.Store { return hotset.New(newClient(t, startLocalPersist(t), false), 1000) })
	})
}

// TestUnsignedRefusedByLocalPersist: a client without local Persist's pair, or with
// another secret, is refused (403, a rejection the consumer retries rather than
// drops) and stores nothing.
func TestUnsignedRefusedByLocalPersist(t *testing.T) {
	ctx := context.Background()
	base := startLocalPersist(t)
	u := shorturl.ShortURL{Token: "EvilEvil01", Path: "http://127.0.0.1:8080/EvilEvil01", Target: "https://example.com/"}
	unsigned, err := persist.New(persist.Config{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := persist.New(persist.Config{BaseURL: base, SigV4: &persist.SigV4{
		Credentials: credentials.NewStaticCredentialsProvider(testPair.AccessKeyID, "not-the-secret", ""), Region: testRegion}})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*persist.Client{"unsigned": unsigned, "wrong secret": wrong} {
		t.Run(name, func(t *testing.T) {
			var pe *persist.Error
			if err := c.Save(ctx, u); !errors.As(err, &pe) || pe.Status != http.StatusForbidden || pe.Kind != persist.KindRejected || errors.Is(err, persist.ErrInvalidDocument) {
				t.Fatalf("Save: %v; want a 403 rejection that is not an invalid document", err)
			}
			if _, err := c.Lookup(ctx, u.Token); !errors.As(err, &pe) || pe.Status != http.StatusForbidden {
				t.Fatalf("Lookup: %v; want 403", err)
			}
		})
	}
	if _, err := newClient(t, base, false).Lookup(ctx, u.Token); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("signed Lookup after refused saves: %v; want not found", err)
	}
}

func TestClicksAgainstLocalPersist(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, startLocalPersist(t), false)
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://example.com/"}
	window, err := shorturl.ParseWindow("", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Visits(ctx, u.Token, window); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("unknown token: err = %v", err)
	}
	if err := c.Save(ctx, u); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Visits(ctx, u.Token, window); err != nil || v.Total != 0 {
		t.Fatalf("clicks = %d, %v", v.Total, err)
	}
	ids := []string{"ev_01JZ8Q6W3C4V5B6N7M8K9J0H1A", "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1B", "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1A"}
	for _, id := range ids { // the third is a replay of the first: the same edge
		f, err := clickfact.Build(clickfact.Click{Token: string(u.Token), Path: u.Path, Target: u.Target, IP: "192.0.2.1", UserAgent: "ua", At: time.Unix(1700000000, 0)}, id)
		if err != nil {
			t.Fatal(err)
		}
		var detail struct {
			GraphSON graphson.Document `json:"graphson"`
		}
		if err := json.Unmarshal(f.Detail, &detail); err != nil {
			t.Fatal(err)
		}
		if err := c.Ingest(ctx, detail.GraphSON); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := c.Visits(ctx, u.Token, window); err != nil || v.Total != 2 {
		t.Fatalf("clicks = %d, %v; want 2 (a replayed fact is the same edge)", v.Total, err)
	}
}

func TestUnavailable(t *testing.T) {
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://example.com/"}
	gremlinOK := func(data string) string {
		return `{"requestId":"x","status":{"message":"","code":200,"attributes":{"@type":"g:Map","@value":[]}},"result":{"data":` + data + `,"meta":{"@type":"g:Map","@value":[]}}}`
	}
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		rejected   bool
		ingestOnly bool // the failure concerns Gremlin answers; an ingest with a JSON 200 succeeds
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }, false, false},
		{"503", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }, false, false},
		{"429", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "slow down", http.StatusTooManyRequests) }, false, false},
		{"400", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad", http.StatusBadRequest) }, true, false},
		{"422", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "invalid", http.StatusUnprocessableEntity) }, true, false},
		{"403", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "denied", http.StatusForbidden) }, true, false},
		{"garbage", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>") }, true, false},
		{"gremlin error status", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"status":{"code":597,"message":"No such property"},"result":{"data":null}}`)
		}, true, true},
		{"untyped data", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, gremlinOK(`[1,2]`)) }, true, true},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second): // longer than any call's timeout, visits' 5 × 300 ms too
			}
		}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c, err := persist.New(persist.Config{BaseURL: srv.URL, Timeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, lerr := c.Lookup(context.Background(), u.Token)
			window, _ := shorturl.ParseWindow("", "", time.Now())
			_, verr := c.Visits(context.Background(), u.Token, window)
			results := map[string]error{"lookup": lerr, "visits": verr}
			if !tt.ingestOnly {
				results["save"] = c.Save(context.Background(), u)
			}
			for name, err := range results {
				if !errors.Is(err, shorturl.ErrUnavailable) || errors.Is(err, shorturl.ErrNotFound) {
					t.Errorf("%s: err = %v, want ErrUnavailable", name, err)
				}
				// The consumer skips an event Persist calls invalid, and retries the rest.
				if invalid := errors.Is(err, persist.ErrInvalidDocument); invalid != (tt.name == "400" || tt.name == "422") {
					t.Errorf("%s: ErrInvalidDocument = %v (%v)", name, invalid, err)
				}
				if tt.rejected != errors.Is(err, persist.ErrRejected) {
					t.Errorf("%s: ErrRejected = %v, want %v (%v)", name, errors.Is(err, persist.ErrRejected), tt.rejected, err)
				}
			}
		})
	}
	t.Run("clicks not a count", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, gremlinOK(`{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks","many"]}]}`))
		}))
		defer srv.Close()
		c, _ := persist.New(persist.Config{BaseURL: srv.URL})
		window, _ := shorturl.ParseWindow("", "", time.Now())
		_, err := c.Visits(context.Background(), u.Token, window)
		var perr *persist.Error
		if !errors.Is(err, shorturl.ErrUnavailable) || !errors.Is(err, persist.ErrRejected) || !errors.As(err, &perr) ||
			perr.Op != "visits" || perr.Kind != persist.KindMalformed {
			t.Fatalf("err = %#v, want a malformed-answer *persist.Error matching ErrUnavailable", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL
		srv.Close()
		c, _ := persist.New(persist.Config{BaseURL: base})
		if _, err := c.Lookup(context.Background(), u.Token); !errors.Is(err, shorturl.ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestNeverAWrongPlace: an answer about another token is not a short URL of ours.
func TestNeverAWrongPlace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","ZZZZZZZZZZ","short_url_path","https://s.example.com/ZZZZZZZZZZ","target_url","https://evil.example/"]}]}}}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, false)
	if u, err := c.Lookup(context.Background(), "7BTadEDkJ8"); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("Lookup = %+v, %v", u, err)
	}
}

// TestRequestsCarryInputOnlyAsBindings inspects what goes over the wire.
func TestRequestsCarryInputOnlyAsBindings(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(struct {
			body   string
			accept string
		}{string(b), r.Header.Get("Accept")})
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[]}}}`)
	}))
	defer srv.Close()
	for _, inline := range []bool{false, true} {
		c := newClient(t, srv.URL, inline)
		if _, err := c.Lookup(context.Background(), "7BTadEDkJ8"); !errors.Is(err, shorturl.ErrNotFound) {
			t.Fatal(err)
		}
		req := got.Load().(struct {
			body   string
			accept string
		})
		if req.accept != "application/vnd.gremlin-v3.0+json" {
			t.Errorf("Accept %q", req.accept)
		}
		var body struct {
			Gremlin  string            `json:"gremlin"`
			Bindings map[string]string `json:"bindings"`
		}
		if err := json.Unmarshal([]byte(req.body), &body); err != nil {
			t.Fatal(err)
		}
		if inline {
			if !strings.Contains(body.Gremlin, "'7BTadEDkJ8'") || body.Bindings != nil {
				t.Errorf("inline: %s", req.body)
			}
		} else if strings.Contains(body.Gremlin, "7BTadEDkJ8") || body.Bindings["token"] != "7BTadEDkJ8" {
			t.Errorf("bindings: %s", req.body)
		}
	}
	c := newClient(t, srv.URL, true)
	if _, err := c.Lookup(context.Background(), "7BTadEDk'8"); !errors.Is(err, shorturl.ErrInvalidToken) {
		t.Fatalf("a quote reached the inline query path: %v", err)
	}
}

func TestSignsWithSigV4(t *testing.T) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Amz-Content-Sha256") + "|" + r.Header.Get("X-Amz-Security-Token"))
		_, _ = io.WriteString(w, `{"vertices":{"received":1,"created":1},"edges":{"received":0,"created":0}}`)
	}))
	defer srv.Close()
	c, err := persist.New(persist.Config{BaseURL: srv.URL, SigV4: &persist.SigV4{
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "session-token"), Region: "eu-west-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Save(context.Background(), shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(auth.Load().(string), "|")
	if !strings.HasPrefix(parts[0], "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(parts[0], "/eu-west-1/execute-api/aws4_request") || len(parts[1]) != 64 || parts[2] != "session-token" {
		t.Fatalf("signature headers %q", parts)
	}
}

// TestTwoVerticesForOneToken: a Persist that holds two short_url vertices with
// different targets for one token gets no guess; two with the same target redirect.
func TestTwoVerticesForOneToken(t *testing.T) {
	row := func(target string) string {
		return `{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","short_url_path","https://s.example.com/7BTadEDkJ8","target_url","` + target + `"]}`
	}
	for name, tc := range map[string]struct {
		rows string
		ok   bool
	}{
		"different targets": {row("https://example.com/") + "," + row("https://evil.example/"), false},
		"same target":       {row("https://example.com/") + "," + row("https://example.com/"), true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[`+tc.rows+`]}}}`)
			}))
			defer srv.Close()
			c := newClient(t, srv.URL, false)
			u, err := c.Lookup(context.Background(), "7BTadEDkJ8")
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, shorturl.ErrInvalidStored) {
				t.Fatalf("Lookup = %+v, %v", u, err)
			}
			if tc.ok && u.Target != "https://example.com/" {
				t.Fatalf("Lookup = %+v", u)
			}
		})
	}
}

// TestDeeplyNestedAnswerRefused: an answer whose collections nest past graphson's
// bound is refused as malformed, not decoded level by level: each level reread the
// rest of the answer, after the call and its timeout were over (a 1.2 MB answer held
// a core for 75 s).
func TestDeeplyNestedAnswerRefused(t *testing.T) {
	const depth = 1000
	data := strings.Repeat(`{"@type":"g:List","@value":[`, depth) + `"x"` + strings.Repeat(`]}`, depth)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":`+data+`}}`)
	}))
	defer srv.Close()
	_, err := newClient(t, srv.URL, false).Lookup(context.Background(), "7BTadEDkJ8")
	var perr *persist.Error
	if !errors.As(err, &perr) || perr.Kind != persist.KindMalformed || !errors.Is(err, shorturl.ErrUnavailable) || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("err = %v, want a malformed answer refused for its nesting", err)
	}
}

// TestObserveReportsEachCall: every call that reached the network is reported with
// its kind and a duration that includes the server's time, failed calls included.
func TestObserveReportsEachCall(t *testing.T) {
	ctx := context.Background()
	const delay = 30 * time.Millisecond
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/ingest") {
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		_, _ = io.WriteString(w, `{"status":{"code":204,"message":""},"result":{"data":null}}`)
	}))
	t.Cleanup(srv.Close)
	type call struct {
		kind string
		took time.Duration
	}
	var calls []call
	c, err := persist.New(persist.Config{BaseURL: srv.URL, Observe: func(k string, d time.Duration) { calls = append(calls, call{k, d}) }})
	if err != nil {
		t.Fatal(err)
	}
	u := shorturl.ShortURL{Token: "AbCdEfGh12", Path: "http://s/AbCdEfGh12", Target: "https://example.com/"}
	if _, err := c.Lookup(ctx, u.Token); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("lookup: %v", err)
	}
	if err := c.Save(ctx, u); err != nil {
		t.Fatalf("save: %v", err)
	}
	if _, err := c.Link(ctx, u.Token); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("link: %v", err)
	}
	fail.Store(true)
	if _, err := c.Lookup(ctx, u.Token); err == nil {
		t.Fatal("a 503 answered a lookup")
	}
	if _, err := c.Lookup(ctx, "not a token"); err == nil { // refused before any call
		t.Fatal("an invalid token was looked up")
	}
	want := []string{persist.CallLookup, persist.CallIngest, persist.CallQuery, persist.CallLookup}
	if len(calls) != len(want) {
		t.Fatalf("observed %v, want kinds %v", calls, want)
	}
	for i, c := range calls {
		if c.kind != want[i] || c.took < delay || c.took > delay+2*time.Second {
			t.Errorf("call %d: %s took %v, want %s taking at least %v", i, c.kind, c.took, want[i], delay)
		}
	}
}
