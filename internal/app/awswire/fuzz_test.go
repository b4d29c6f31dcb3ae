package awswire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/linoone/linoone/internal/app/awswire"
	"github.com/linoone/linoone/internal/app/resolverstack"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
)

var known = shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://abc123defg.execute-api.us-east-1.amazonaws.com/7BTadEDkJ8",
	Target: "https://example.com/landing?message_id=msg_123"}

// store holds known; the token Down000000 finds Persist down.
type store struct{}

func (store) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	switch tok {
	case known.Token:
		return known, nil
	case "Down000000":
		return shorturl.ShortURL{}, fmt.Errorf("dial tcp: connection refused: %w", shorturl.ErrUnavailable)
	}
	return shorturl.ShortURL{}, shorturl.ErrNotFound
}

func (store) Save(context.Context, shorturl.ShortURL) error { return errors.New("read-only") }

// publisher keeps the facts of the clicks.
type publisher struct {
	mu    sync.Mutex
	facts []clickfact.Fact
}

func (p *publisher) Publish(_ context.Context, f clickfact.Fact) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f.Detail = append([]byte(nil), f.Detail...)
	p.facts = append(p.facts, f)
	return nil
}

func (p *publisher) take() []clickfact.Fact {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.facts
	p.facts = nil
	return out
}

type noDLQ struct{}

func (noDLQ) DeadLetter(context.Context, clickfact.DeadLetter) error {
	return errors.New("no dlq here")
}

// methods are those an event may name (API Gateway's routes take GET and HEAD).
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodOptions, http.MethodDelete}

// FuzzResolveEvent gives the resolve function's handler — EscapeRawPath, then the
// Lambda adapter and the resolver — an API Gateway v2 event whose path, query,
// method, User-Agent and cookie a visitor chose (API Gateway hands the path on
// decoded, some of it). The invocation never fails, which API Gateway would answer
// 500 and the error alarm count; no answer is a 500, nor a 503 with Persist up; a
// 302 goes to the stored target, for a path that is the token (or the token
// escaped, as serve redirects it), and only a GET's records one click, whose visitor
// is the event's source address.
func FuzzResolveEvent(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "lambdas", "resolve", "testdata", "resolve.json"))
	if err != nil {
		f.Fatal(err)
	}
	var base events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &base); err != nil {
		f.Fatal(err)
	}
	pub := &publisher{}
	rs, err := resolverstack.New(resolverstack.Deps{Store: store{}, Publisher: pub, DeadLetters: noDLQ{},
		Logger: slog.New(slog.DiscardHandler), MetricsOut: io.Discard, Environment: "test"})
	if err != nil {
		f.Fatal(err)
	}
	proxy := httpadapter.NewV2(rs.Handler)
	ua := base.Headers["user-agent"]
	for _, path := range []string{"/7BTadEDkJ8", "/%37BTadEDkJ8", "/%", "/%zz", "/a\nb", "/%4", "/\x7f", "/7BTadEDkJ8#x", "/healthz", "/Down000000", "/AAAAAAAAAA", "7BTadEDkJ8", ""} {
		f.Add(path, "", uint8(0), ua, "session=opaque")
	}
	f.Add("/7BTadEDkJ8", "utm_source=x&b=%20", uint8(1), "", "")
	f.Add("/7BTadEDkJ8", "a=%zz&\x7f", uint8(0), "\xff\"}]}", "a=b; c")
	f.Add("/7BTadEDkJ8/x", "", uint8(2), ua, "")
	f.Fuzz(func(t *testing.T, rawPath, query string, m uint8, userAgent, cookie string) {
		method := methods[int(m)%len(methods)]
		if !strings.HasPrefix(rawPath, "/") {
			rawPath = "/" + rawPath // as API Gateway writes every rawPath
		}
		ev := base
		ev.RawPath, ev.RawQueryString, ev.RequestContext.HTTP.Path = rawPath, query, rawPath
		ev.RequestContext.HTTP.Method = method
		ev.Headers = map[string]string{"host": base.Headers["host"], "user-agent": userAgent, "x-forwarded-for": base.Headers["x-forwarded-for"]}
		ev.Cookies = []string{cookie}
		awswire.EscapeRawPath(&ev)
		resp, err := proxy.ProxyWithContext(context.Background(), ev)
		facts := pub.take()
		if err != nil {
			t.Fatalf("path %q, query %q, method %q: the invocation failed: %v", rawPath, query, method, err)
		}
		switch code := resp.StatusCode; {
		case code == http.StatusInternalServerError || code > 500 && code != http.StatusServiceUnavailable:
			t.Fatalf("path %q, query %q, method %q: %d %s", rawPath, query, method, code, resp.Body)
		case code == http.StatusServiceUnavailable && !strings.Contains(rawPath, "Down000000"):
			t.Fatalf("path %q: 503 with Persist up: %s", rawPath, resp.Body)
		case code == http.StatusFound:
			unescaped, _ := url.PathUnescape(rawPath)
			if resp.Headers["Location"] != known.Target || (rawPath != "/"+string(known.Token) && unescaped != "/"+string(known.Token)) {
				t.Fatalf("path %q, query %q: 302 to %q", rawPath, query, resp.Headers["Location"])
			}
		}
		if len(facts) > 1 || len(facts) == 1 && (resp.StatusCode != http.StatusFound || method != http.MethodGet) {
			t.Fatalf("path %q, method %q: %d clicks for %d", rawPath, method, len(facts), resp.StatusCode)
		}
		for _, fact := range facts {
			if !strings.Contains(string(fact.Detail), `"value":"`+base.RequestContext.HTTP.SourceIP+`"`) {
				t.Fatalf("the click's visitor is not the source address %s: %s", base.RequestContext.HTTP.SourceIP, fact.Detail)
			}
		}
	})
}
