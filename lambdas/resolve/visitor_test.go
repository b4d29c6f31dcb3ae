package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
)

// TestVisitorIP: the visitor_ip_address of the click fact the resolve function
// publishes. Behind CloudFront (LINOONE_VISITOR_IP_FROM=cloudfront) it is the
// CloudFront-Viewer-Address of a request carrying the origin secret, and API
// Gateway's source IP otherwise: a client calling API Gateway directly cannot
// choose it, and a malformed header never fails the redirect. Without the cdn
// option the header is not read at all.
func TestVisitorIP(t *testing.T) {
	const (
		secret = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"
		source = "198.51.100.23" // requestContext.http.sourceIp of testdata/resolve.json
	)
	token, persistURL := seedPersist(t)
	bus := &factBus{}
	busSrv := httptest.NewServer(bus)
	t.Cleanup(busSrv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", busSrv.URL)
	handler := func(extra map[string]string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		env := map[string]string{
			"AWS_REGION":              "us-east-1",
			"LINOONE_PERSIST_URL":     persistURL,
			"LINOONE_EVENT_BUS":       "linoone-test-bus",
			"LINOONE_CLICK_DLQ_URL":   "https://sqs.us-east-1.amazonaws.com/000000000000/linoone-click-dlq",
			"LINOONE_PUBLISH_TIMEOUT": "10s", // a loaded test machine must not dead-letter the fact
		}
		for k, v := range extra {
			env[k] = v
		}
		h, err := setup(context.Background(), func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	cloudFront := handler(map[string]string{"LINOONE_VISITOR_IP_FROM": "cloudfront", "LINOONE_ORIGIN_VERIFY_SECRET": secret})
	direct := handler(nil)

	for _, tt := range []struct {
		name    string
		h       func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
		headers map[string]string
		want    string
	}{
		{"through cloudfront", cloudFront, map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "203.0.113.9:51234"}, "203.0.113.9"},
		{"through cloudfront over ipv6", cloudFront, map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "2001:db8:a0b:12f0::1:443"}, "2001:db8:a0b:12f0::1"},
		{"spoofed, no secret", cloudFront, map[string]string{"cloudfront-viewer-address": "192.0.2.1:443"}, source},
		{"spoofed, wrong secret", cloudFront, map[string]string{"x-linoone-origin-verify": strings.Repeat("x", len(secret)), "cloudfront-viewer-address": "192.0.2.1:443"}, source},
		{"malformed viewer address", cloudFront, map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "999.1.1.1:443"}, source},
		{"no cdn option: the header is not read", direct, map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "203.0.113.9:51234"}, source},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := resolveEvent(t, token)
			for k, v := range tt.headers {
				ev.Headers[k] = v
			}
			before := bus.count()
			resp, err := tt.h(context.Background(), ev)
			if err != nil || resp.StatusCode != http.StatusFound {
				t.Fatalf("GET /%s: %d %s, %v; want a redirect", token, resp.StatusCode, resp.Body, err)
			}
			facts := bus.since(before)
			if len(facts) != 1 {
				t.Fatalf("%d facts published, want 1", len(facts))
			}
			if got := visitorIP(t, facts[0]); got != tt.want {
				t.Errorf("visitor_ip_address %q, want %q", got, tt.want)
			}
			if strings.Contains(facts[0], secret) {
				t.Error("the origin secret is in the click fact")
			}
		})
	}
}

// seedPersist starts local Persist over HTTP with one short URL in it.
func seedPersist(t *testing.T) (shorturl.Token, string) {
	t.Helper()
	store, err := localpersist.Open(context.Background(), filepath.Join(t.TempDir(), "persist.db"), localpersist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(store.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = store.Close()
	})
	pc, err := persist.New(persist.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: pc, ResolverBaseURL: "https://abc123defg.execute-api.us-east-1.amazonaws.com", Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	u, err := iss.Shorten(context.Background(), "https://example.com/landing")
	if err != nil {
		t.Fatal(err)
	}
	return u.Token, srv.URL
}

// resolveEvent is testdata/resolve.json for token.
func resolveEvent(t *testing.T, token shorturl.Token) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "resolve.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "7BTadEDkJ8", string(token))), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// factBus is an EventBridge PutEvents endpoint (AWS JSON 1.1) keeping each
// entry's Detail.
type factBus struct {
	mu      sync.Mutex
	details []string
}

func (b *factBus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ Entries []struct{ Detail string } }
	if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, `{"__type":"SerializationException"}`, http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := struct {
		FailedEntryCount int
		Entries          []map[string]string
	}{}
	for _, e := range in.Entries {
		b.details = append(b.details, e.Detail)
		out.Entries = append(out.Entries, map[string]string{"EventId": "test"})
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func (b *factBus) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.details)
}

func (b *factBus) since(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.details[n:]...)
}

// visitorIP reads the visitor_ip_address property of the short_url_visited edge in
// a GraphFactProduced detail (a g:Property: {"key": …, "value": …}).
func visitorIP(t *testing.T, detail string) string {
	t.Helper()
	var fact struct {
		GraphSON struct {
			Edges []struct {
				Value struct {
					Properties map[string]struct {
						Value struct {
							Key   string `json:"key"`
							Value string `json:"value"`
						} `json:"@value"`
					} `json:"properties"`
				} `json:"@value"`
			} `json:"edges"`
		} `json:"graphson"`
	}
	if err := json.Unmarshal([]byte(detail), &fact); err != nil || len(fact.GraphSON.Edges) != 1 {
		t.Fatalf("detail %s: %v", detail, err)
	}
	p := fact.GraphSON.Edges[0].Value.Properties["visitor_ip_address"].Value
	if p.Key != "visitor_ip_address" {
		t.Fatalf("no visitor_ip_address property in %s", detail)
	}
	return p.Value
}
