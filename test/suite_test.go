package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/api/management"
)

// Deployment is one running Linoone that the suite drives: `linoone serve` on
// loopback (local_test.go) or a sandbox stack on AWS (aws_test.go).
type Deployment interface {
	// ManagementURL is the base URL of the management API (POST /shorten).
	ManagementURL() string
	// ResolverURL is the resolver base URL that every short URL starts with.
	ResolverURL() string
	// Signer signs management requests the way the deployment verifies them.
	Signer() Signer
	// PollFacts returns the GraphFactProduced events that arrived since the previous
	// call, each event once. It waits a few seconds at most.
	PollFacts(t *testing.T) []Fact
	// WaitDeadLettered waits until exactly n click facts wait in the click DLQ and
	// returns their idempotency keys. It fails the test when that does not happen.
	WaitDeadLettered(t *testing.T, n int) []string
	// BreakBus makes every publish of the resolver fail until HealBus. Facts
	// dead-lettered meanwhile stay in the click DLQ until Replay.
	BreakBus(t *testing.T)
	// HealBus lets the resolver publish again.
	HealBus(t *testing.T)
	// Replay republishes what waits in the click DLQ (locally `linoone replay`; on
	// AWS the replay function's event source mapping consumes the DLQ).
	Replay(t *testing.T)
	// Patience says how long the suite waits for what happens asynchronously.
	Patience() Patience
}

// Patience bounds the suite's waits for one deployment.
type Patience struct {
	Fact  time.Duration // for a click's fact to arrive
	Quiet time.Duration // watching for a duplicate before calling a fact unique
	Poll  time.Duration // pause after a PollFacts that returned nothing
}

// Fact is one GraphFactProduced event as EventBridge delivers it (the local bus
// writes the same shape to facts.jsonl).
type Fact struct {
	ID         string          `json:"id"`
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
}

const (
	userAgent    = "linoone-e2e/1.0"
	cacheControl = "private, max-age=0"
)

var (
	tokenPattern = regexp.MustCompile(`^[0-9A-Za-z]{10}$`)
	keyPattern   = regexp.MustCompile(`^shorturl:ev_[0-9A-HJKMNP-TV-Z]{26}$`)
)

// runSuite is every end-to-end assertion, in the order a producer and a visitor
// meet them. A failed step stops the suite: later steps build on earlier ones.
func runSuite(t *testing.T, d Deployment) {
	resolverURL := strings.TrimRight(d.ResolverURL(), "/")
	managementURL := strings.TrimRight(d.ManagementURL(), "/")
	client, err := management.NewClientWithResponses(managementURL, management.WithHTTPClient(d.Signer().Client()))
	if err != nil {
		t.Fatalf("management client: %v", err)
	}
	facts := &factWatch{d: d, p: d.Patience()}
	run := randomBase62(8)
	target := "https://example.com/linoone-e2e/" + run + "?utm_source=e2e&step=click"
	brokenTarget := "https://example.com/linoone-e2e/" + run + "?utm_source=e2e&step=bus-broken"
	var link, brokenLink management.ShortURL
	var deadKey string

	step(t, "shorten_signed_201", func(t *testing.T) {
		link = shorten(t, client, target, resolverURL)
	})
	step(t, "shorten_unsigned_403", func(t *testing.T) {
		req, err := management.NewShortenRequest(managementURL, nil, management.ShortenJSONRequestBody{TargetURL: target + "&unsigned=1"})
		if err != nil {
			t.Fatal(err)
		}
		expectStatus(t, plainClient, req, http.StatusForbidden)
	})
	step(t, "shorten_wrong_secret_403", func(t *testing.T) {
		s := d.Signer()
		s.Credentials = wrongSecret(s.Credentials)
		req, err := management.NewShortenRequest(managementURL, nil, management.ShortenJSONRequestBody{TargetURL: target + "&badly-signed=1"})
		if err != nil {
			t.Fatal(err)
		}
		expectStatus(t, s.Client(), req, http.StatusForbidden)
	})
	step(t, "resolve_302", func(t *testing.T) {
		expectRedirect(t, resolverURL, link.Token, target)
	})
	step(t, "click_fact_arrives", func(t *testing.T) {
		f, det := facts.waitFor(t, "for token "+link.Token, forToken(link.Token))
		checkFact(t, f, det, link, target)
	})
	step(t, "unknown_token_404", func(t *testing.T) {
		for _, tok := range []string{randomBase62(10), "not-a-token"} {
			res := get(t, resolverURL+"/"+tok)
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("GET /%s: %d, want 404 (Location %q)", tok, res.StatusCode, res.Header.Get("Location"))
			}
		}
	})
	step(t, "bus_broken_click_dead_lettered", func(t *testing.T) {
		brokenLink = shorten(t, client, brokenTarget, resolverURL)
		if keys := d.WaitDeadLettered(t, 0); len(keys) != 0 {
			t.Fatalf("click DLQ not empty before the bus broke: %v", keys)
		}
		d.BreakBus(t)
		expectRedirect(t, resolverURL, brokenLink.Token, brokenTarget)
		keys := d.WaitDeadLettered(t, 1)
		deadKey = keys[0]
		if !keyPattern.MatchString(deadKey) {
			t.Fatalf("dead-lettered idempotency key %q does not match %s", deadKey, keyPattern)
		}
		facts.poll(t)
		if n := facts.count(forKey(deadKey)) + facts.count(forToken(brokenLink.Token)); n != 0 {
			t.Fatalf("%d facts of the dead-lettered click were published while the bus was broken", n)
		}
	})
	step(t, "replay_publishes_once_same_key", func(t *testing.T) {
		d.HealBus(t)
		d.Replay(t)
		f, det := facts.waitFor(t, "with the dead-lettered idempotency key "+deadKey, forKey(deadKey))
		checkFact(t, f, det, brokenLink, brokenTarget)
		facts.quiet(t)
		if n := facts.count(forKey(deadKey)); n != 1 {
			t.Errorf("fact %s published %d times after replay, want exactly once", deadKey, n)
		}
		if n := facts.count(forToken(brokenLink.Token)); n != 1 {
			t.Errorf("%d facts for the dead-lettered click's token %s, want 1", n, brokenLink.Token)
		}
		if n := facts.count(forToken(link.Token)); n != 1 {
			t.Errorf("%d facts for the first click's token %s, want 1", n, link.Token)
		}
		d.WaitDeadLettered(t, 0)
	})
}

// step runs one named part of the suite and stops the suite when it fails.
func step(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, fn) {
		t.FailNow()
	}
}

func shorten(t *testing.T, client *management.ClientWithResponses, target, resolverURL string) management.ShortURL {
	t.Helper()
	res, err := client.ShortenWithResponse(t.Context(), nil, management.ShortenJSONRequestBody{TargetURL: target})
	if err != nil {
		t.Fatalf("POST /shorten: %v", err)
	}
	if res.StatusCode() != http.StatusCreated || res.JSON201 == nil {
		t.Fatalf("POST /shorten: %d %s, want 201", res.StatusCode(), res.Body)
	}
	got := *res.JSON201
	if !tokenPattern.MatchString(got.Token) {
		t.Fatalf("token %q does not match %s", got.Token, tokenPattern)
	}
	if want := resolverURL + "/" + got.Token; got.ShortURL != want {
		t.Fatalf("short_url %q, want %q", got.ShortURL, want)
	}
	return got
}

// expectStatus sends req with c and checks the status code only (API Gateway and
// the local server word their refusals differently).
func expectStatus(t *testing.T, c *http.Client, req *http.Request, want int) {
	t.Helper()
	res, err := c.Do(req.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	res.Body.Close()
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", req.Method, req.URL.Path, res.StatusCode, body, want)
	}
}

func expectRedirect(t *testing.T, resolverURL, token, target string) {
	t.Helper()
	res := get(t, resolverURL+"/"+token)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("GET /%s: %d, want 302", token, res.StatusCode)
	}
	if got := res.Header.Get("Location"); got != target {
		t.Errorf("GET /%s: Location %q, want %q", token, got, target)
	}
	if got := res.Header.Get("Cache-Control"); got != cacheControl {
		t.Errorf("GET /%s: Cache-Control %q, want %q", token, got, cacheControl)
	}
}

var (
	plainClient = &http.Client{Timeout: 30 * time.Second}
	// noRedirect is a visitor that does not follow the redirect, so its 302 is seen.
	noRedirect = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
)

// get fetches url as a visitor without following redirects; the body is drained.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", userAgent)
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// --- facts --------------------------------------------------------------------------

// factWatch accumulates what a deployment's PollFacts returns.
type factWatch struct {
	d    Deployment
	p    Patience
	seen []Fact
}

func (w *factWatch) poll(t *testing.T) int {
	t.Helper()
	got := w.d.PollFacts(t)
	w.seen = append(w.seen, got...)
	return len(got)
}

// waitFor polls until a fact matches, and fails after Patience.Fact.
func (w *factWatch) waitFor(t *testing.T, what string, match func(factDetail) bool) (Fact, factDetail) {
	t.Helper()
	deadline := time.Now().Add(w.p.Fact)
	for {
		for _, f := range w.seen {
			if det, err := parseDetail(f); err == nil && match(det) {
				return f, det
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no GraphFactProduced %s within %s; %d facts observed:\n%s", what, w.p.Fact, len(w.seen), w.summary())
		}
		if w.poll(t) == 0 {
			time.Sleep(w.p.Poll)
		}
	}
}

// quiet keeps polling for Patience.Quiet, so that a duplicate would be seen.
func (w *factWatch) quiet(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(w.p.Quiet); time.Now().Before(end); {
		if w.poll(t) == 0 {
			time.Sleep(w.p.Poll)
		}
	}
}

func (w *factWatch) count(match func(factDetail) bool) int {
	n := 0
	for _, f := range w.seen {
		if det, err := parseDetail(f); err == nil && match(det) {
			n++
		}
	}
	return n
}

func (w *factWatch) summary() string {
	var b strings.Builder
	for _, f := range w.seen {
		fmt.Fprintf(&b, "  %s %s %.300s\n", f.Source, f.DetailType, f.Detail)
	}
	return b.String()
}

func forToken(token string) func(factDetail) bool {
	return func(d factDetail) bool { return d.vertexProperty("short_url", "short_url_token") == token }
}

func forKey(key string) func(factDetail) bool {
	return func(d factDetail) bool { return d.IdempotencyKey == key }
}

// factDetail is the GraphFactProduced detail (schemas/graph-fact.schema.json), read
// only as far as the suite checks it.
type factDetail struct {
	SchemaVersion  string   `json:"schema_version"`
	GraphSONFormat string   `json:"graphson_format"`
	FactType       string   `json:"fact_type"`
	EntityTypes    []string `json:"entity_types"`
	IdempotencyKey string   `json:"idempotency_key"`
	GraphSON       struct {
		Vertices []struct {
			Type  string `json:"@type"`
			Value struct {
				ID         string `json:"id"`
				Label      string `json:"label"`
				Properties map[string][]struct {
					Value struct {
						Value json.RawMessage `json:"value"`
					} `json:"@value"`
				} `json:"properties"`
			} `json:"@value"`
		} `json:"vertices"`
		Edges []struct {
			Type  string `json:"@type"`
			Value struct {
				Label      string `json:"label"`
				InV        string `json:"inV"`
				Properties map[string]struct {
					Value struct {
						Value json.RawMessage `json:"value"`
					} `json:"@value"`
				} `json:"properties"`
			} `json:"@value"`
		} `json:"edges"`
	} `json:"graphson"`
}

func parseDetail(f Fact) (factDetail, error) {
	var d factDetail
	if len(f.Detail) == 0 {
		return d, errors.New("no detail")
	}
	err := json.Unmarshal(f.Detail, &d)
	return d, err
}

// vertexProperty is the first value of a vertex property, "" when absent.
func (d factDetail) vertexProperty(label, key string) string {
	props := d.vertexProperties(label)
	return props[key]
}

func (d factDetail) vertexProperties(label string) map[string]string {
	for _, v := range d.GraphSON.Vertices {
		if v.Value.Label != label {
			continue
		}
		out := map[string]string{}
		for k, vals := range v.Value.Properties {
			if len(vals) > 0 {
				out[k] = scalar(vals[0].Value.Value)
			}
		}
		return out
	}
	return nil
}

// scalar is a GraphSON value as text: a JSON string unquoted, a typed value
// ({"@type","@value"}) by its @value, anything else as its JSON.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var typed struct {
		Value json.RawMessage `json:"@value"`
	}
	if json.Unmarshal(raw, &typed) == nil && typed.Value != nil {
		return scalar(typed.Value)
	}
	return string(raw)
}

// checkFact checks one click fact against schemas/graph-fact.schema.json and the
// rules the JSON Schema cannot state (docs/architecture.md, "Click facts").
func checkFact(t *testing.T, f Fact, d factDetail, link management.ShortURL, target string) {
	t.Helper()
	if f.Source != "shorturl" || f.DetailType != "GraphFactProduced" {
		t.Errorf("event source %q detail-type %q, want shorturl GraphFactProduced", f.Source, f.DetailType)
	}
	if d.SchemaVersion != "1.0" || d.GraphSONFormat != "graphson-v3" || d.FactType != "short_url.visited" {
		t.Errorf("detail schema_version %q graphson_format %q fact_type %q, want 1.0 graphson-v3 short_url.visited",
			d.SchemaVersion, d.GraphSONFormat, d.FactType)
	}
	if diff := cmp.Diff([]string{"short_url"}, d.EntityTypes); diff != "" {
		t.Errorf("entity_types (-want +got):\n%s", diff)
	}
	validateSchema(t, graphFactSchema, f.Detail)
	if !keyPattern.MatchString(d.IdempotencyKey) {
		t.Errorf("idempotency_key %q does not match %s", d.IdempotencyKey, keyPattern)
	}
	if len(d.GraphSON.Vertices) != 1 || len(d.GraphSON.Edges) != 1 {
		t.Fatalf("graphson has %d vertices and %d edges, want 1 and 1: %s", len(d.GraphSON.Vertices), len(d.GraphSON.Edges), f.Detail)
	}
	want := map[string]string{"short_url_token": link.Token, "short_url_path": link.ShortURL, "target_url": target}
	if diff := cmp.Diff(want, d.vertexProperties("short_url")); diff != "" {
		t.Errorf("short_url vertex properties (-want +got):\n%s", diff)
	}
	e := d.GraphSON.Edges[0].Value
	if e.Label != "short_url_visited" || e.InV != d.GraphSON.Vertices[0].Value.ID {
		t.Errorf("edge label %q inV %q, want short_url_visited into the short_url vertex %q", e.Label, e.InV, d.GraphSON.Vertices[0].Value.ID)
	}
	props := map[string]string{}
	for k, p := range e.Properties {
		props[k] = scalar(p.Value.Value)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"effective_at", "event_identifier", "user_agent", "visitor_ip_address"}, keys); diff != "" {
		t.Errorf("short_url_visited edge property keys (-want +got):\n%s", diff)
	}
	if got := "shorturl:" + props["event_identifier"]; got != d.IdempotencyKey {
		t.Errorf("event_identifier %q does not make idempotency_key %q", props["event_identifier"], d.IdempotencyKey)
	}
	if props["user_agent"] != userAgent {
		t.Errorf("user_agent %q, want %q", props["user_agent"], userAgent)
	}
	if props["visitor_ip_address"] == "" {
		t.Errorf("visitor_ip_address is empty")
	}
	if _, err := time.Parse(time.RFC3339Nano, props["effective_at"]); err != nil {
		t.Errorf("effective_at %q is not an RFC 3339 time: %v", props["effective_at"], err)
	}
}

// --- SigV4 ----------------------------------------------------------------------------

// Signer signs requests with SigV4 for service execute-api: what API Gateway's
// AWS_IAM routes and the local management API verify.
type Signer struct {
	Credentials aws.CredentialsProvider
	Region      string
}

// Client returns an HTTP client that signs every request it sends.
func (s Signer) Client() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &signingTransport{s: s, v4: v4.NewSigner(), base: http.DefaultTransport}}
}

type signingTransport struct {
	s    Signer
	v4   *v4.Signer
	base http.RoundTripper
}

var _ http.RoundTripper = (*signingTransport)(nil)

// RoundTrip signs a copy of req (body hashed into X-Amz-Content-Sha256) and sends it.
func (rt *signingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		if err = errors.Join(err, req.Body.Close()); err != nil {
			return nil, fmt.Errorf("sign: read body: %w", err)
		}
		body = b
	}
	signed := req.Clone(req.Context())
	signed.ContentLength = int64(len(body))
	signed.Body, signed.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
	if len(body) > 0 {
		signed.Body = io.NopCloser(bytes.NewReader(body))
		signed.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	signed.Header.Set("X-Amz-Content-Sha256", hash)
	creds, err := rt.s.Credentials.Retrieve(req.Context())
	if err != nil {
		return nil, fmt.Errorf("sign: credentials: %w", err)
	}
	if err := rt.v4.SignHTTP(req.Context(), creds, signed, hash, "execute-api", rt.s.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return rt.base.RoundTrip(signed)
}

// wrongSecret is p with a secret that cannot verify.
func wrongSecret(p aws.CredentialsProvider) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		c, err := p.Retrieve(ctx)
		c.SecretAccessKey = "e2e-wrong-secret-" + randomBase62(24)
		return c, err
	})
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 draws n base62 characters without bias (rejection sampling).
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		_, _ = rand.Read(buf) // never fails since Go 1.24
		for _, c := range buf {
			if c < 248 && len(out) < n { // 248 = 4 × 62
				out = append(out, base62[c%62])
			}
		}
	}
	return string(out)
}
