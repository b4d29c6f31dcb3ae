package localpersist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

const (
	authRegion  = "eu-west-1"
	authService = "execute-api"
)

var authCreds = sigv4.Credentials{AccessKeyID: "LNKPERSISTTEST00001", SecretAccessKey: "persist-test-secret-0123456789abcdefghij"}

// newSignedEnv is a store that requires SigV4 with authCreds, logging into logs.
func newSignedEnv(t *testing.T, maxBody int64, logs io.Writer) *testEnv {
	t.Helper()
	v, err := sigv4.New(authCreds, authRegion, authService, sigv4.WithMaxBodyBytes(DefaultMaxBodyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, Options{Authenticator: v, MaxBodyBytes: maxBody, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
}

// signedClient signs every request with creds for region and service.
func signedClient(e *testEnv, creds sigv4.Credentials, region, service string) *http.Client {
	return &http.Client{Transport: creds.Transport(e.srv.Client().Transport, region, service)}
}

// send posts body to path with client and returns status and body.
func send(t *testing.T, client *http.Client, method, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// rogueDocument is issue 9's reproduction: a short_url vertex nobody issued, with
// a javascript: target, and a forged click on it.
func rogueDocument(t *testing.T) []byte {
	t.Helper()
	v, err := graphson.NewVertex("short_url", graphson.Properties{
		"short_url_token": "EvilEvil01",
		"short_url_path":  "http://127.0.0.1:8080/EvilEvil01",
		"target_url":      "javascript:alert(document.cookie)",
	})
	if err != nil {
		t.Fatal(err)
	}
	return docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(t, v, "ev_forged")}})
}

// TestSignatureRequired: with an Authenticator, every route but /healthz refuses an
// unsigned or mis-signed request with 403 in the {"error": …} shape, before reading
// or writing anything.
func TestSignatureRequired(t *testing.T) {
	logs := &syncbuf.Buffer{}
	e := newSignedEnv(t, 4096, logs)
	rogue := rogueDocument(t)
	gremlin := []byte(`{"gremlin":"g.V().hasLabel('short_url').outE('short_url_visited').count()"}`)
	unsigned := e.srv.Client()
	wrongSecret := signedClient(e, sigv4.Credentials{AccessKeyID: authCreds.AccessKeyID, SecretAccessKey: "not-the-secret"}, authRegion, authService)
	otherKey := signedClient(e, sigv4.Credentials{AccessKeyID: "LNKSOMEONEELSE000001", SecretAccessKey: authCreds.SecretAccessKey}, authRegion, authService)
	wrongRegion := signedClient(e, authCreds, "us-east-1", authService)
	wrongService := signedClient(e, authCreds, authRegion, "s3")
	signed := signedClient(e, authCreds, authRegion, authService)

	tests := []struct {
		name   string
		client *http.Client
		method string
		path   string
		body   []byte
		status int
	}{
		{"unsigned ingest", unsigned, http.MethodPost, "/persist/ingest", rogue, http.StatusForbidden},
		{"ingest with the wrong secret", wrongSecret, http.MethodPost, "/persist/ingest", rogue, http.StatusForbidden},
		{"ingest with another key", otherKey, http.MethodPost, "/persist/ingest", rogue, http.StatusForbidden},
		{"ingest for another region", wrongRegion, http.MethodPost, "/persist/ingest", rogue, http.StatusForbidden},
		{"ingest for another service", wrongService, http.MethodPost, "/persist/ingest", rogue, http.StatusForbidden},
		{"unsigned gremlin", unsigned, http.MethodPost, "/persist/gremlin", gremlin, http.StatusForbidden},
		{"gremlin with the wrong secret", wrongSecret, http.MethodPost, "/persist/gremlin", gremlin, http.StatusForbidden},
		{"unsigned GET ingest", unsigned, http.MethodGet, "/persist/ingest", nil, http.StatusForbidden},
		{"unsigned unknown path", unsigned, http.MethodPost, "/persist/other", nil, http.StatusForbidden},
		{"signed too large", signed, http.MethodPost, "/persist/ingest", bytes.Repeat([]byte(" "), 5000), http.StatusRequestEntityTooLarge},
		{"unsigned healthz", unsigned, http.MethodGet, "/healthz", nil, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := send(t, tc.client, tc.method, e.srv.URL+tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if status == http.StatusOK {
				return
			}
			var r struct {
				Error string `json:"error"`
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil || r.Error == "" {
				t.Fatalf("body %q is not local Persist's {\"error\": …} shape: %v", body, err)
			}
			if status == http.StatusForbidden && r.Error != rejectedMessage {
				t.Errorf("403 detail %q, want %q (no hint at which check failed)", r.Error, rejectedMessage)
			}
		})
	}

	if n := countRows(t, e, "vertices") + countRows(t, e, "edges"); n != 0 {
		t.Fatalf("refused requests stored %d elements", n)
	}
	for _, secret := range []string{authCreds.SecretAccessKey, "not-the-secret", "Signature=", "AWS4-HMAC-SHA256 Credential"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
	if !strings.Contains(logs.String(), "local persist request refused") {
		t.Error("refusals are not logged")
	}
}

// TestSignedRequestsServed: the same requests, signed with the store's pair, are
// served as without an Authenticator.
func TestSignedRequestsServed(t *testing.T) {
	e := newSignedEnv(t, 0, io.Discard)
	signed := signedClient(e, authCreds, authRegion, authService)
	status, body := send(t, signed, http.MethodPost, e.srv.URL+"/persist/ingest", rogueDocument(t))
	if status != http.StatusOK {
		t.Fatalf("signed ingest: %d %s", status, body)
	}
	status, body = send(t, signed, http.MethodPost, e.srv.URL+"/persist/gremlin",
		[]byte(`{"gremlin":"g.V().hasLabel('short_url').has('short_url_token', token).values('target_url')","bindings":{"token":"EvilEvil01"}}`))
	if status != http.StatusOK || !strings.Contains(string(body), "javascript:alert") {
		t.Fatalf("signed gremlin: %d %s", status, body)
	}
	if n := countRows(t, e, "vertices"); n != 1 {
		t.Errorf("%d vertices, want 1", n)
	}
}

// TestSignatureNotReusable: a signature made for one body or one moment does not
// carry another.
func TestSignatureNotReusable(t *testing.T) {
	e := newSignedEnv(t, 0, io.Discard)
	body := rogueDocument(t)
	sign := func(at time.Time) *http.Request {
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/persist/ingest", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if err := sigv4.SignRequest(context.Background(), req, []byte(`{"vertices":[],"edges":[]}`), authCreds, authRegion, authService, at); err != nil {
			t.Fatal(err)
		}
		return req
	}
	for name, req := range map[string]*http.Request{"old": sign(time.Now().Add(-time.Hour)), "other body": sign(time.Now())} {
		t.Run(name, func(t *testing.T) {
			if name == "other body" {
				req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				req.Header.Del("X-Amz-Content-Sha256")
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("status %d, want 403", resp.StatusCode)
			}
		})
	}
	if n := countRows(t, e, "vertices"); n != 0 {
		t.Errorf("%d vertices stored, want 0", n)
	}
}

// countRows counts a table's rows straight from the file.
func countRows(t *testing.T, e *testEnv, table string) int {
	t.Helper()
	var n int
	if err := e.store.rdb.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// handedOver is what an Authenticator that read the body whole leaves in r.Body:
// reading it fails, so a route that still copies it instead of taking Unread's
// bytes answers 400.
type handedOver struct {
	body    []byte
	unreads int
}

func (h *handedOver) Read([]byte) (int, error) {
	return 0, errors.New("read after the body was handed over")
}
func (h *handedOver) Close() error   { return nil }
func (h *handedOver) Unread() []byte { h.unreads++; return h.body }

// handOver is an Authenticator that takes the whole body and leaves a handedOver
// of it, followed by pad.
type handOver struct {
	pad  []byte
	last *handedOver
}

func (a *handOver) Verify(r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	a.last = &handedOver{body: append(b, a.pad...)}
	r.Body = a.last
	return nil
}

// TestRoutesTakeAReadBody: when the Authenticator leaves a ReadBody, ingest and
// gremlin take its bytes with Unread rather than reading them again, and the
// store's own body limit still applies to them.
func TestRoutesTakeAReadBody(t *testing.T) {
	auth := &handOver{}
	e := newEnv(t, Options{Authenticator: auth})
	status, body := send(t, e.srv.Client(), http.MethodPost, e.srv.URL+"/persist/ingest", rogueDocument(t))
	if status != http.StatusOK || auth.last.unreads != 1 {
		t.Fatalf("ingest: %d %s, Unread called %d times", status, body, auth.last.unreads)
	}
	if n := countRows(t, e, "edges"); n != 1 {
		t.Errorf("%d edges, want 1", n)
	}
	status, body = send(t, e.srv.Client(), http.MethodPost, e.srv.URL+"/persist/gremlin",
		[]byte(`{"gremlin":"g.V().has('short_url_token', token).values('target_url')","bindings":{"token":"EvilEvil01"}}`))
	if status != http.StatusOK || !strings.Contains(string(body), "javascript:alert") {
		t.Fatalf("gremlin: %d %s", status, body)
	}

	// The request is within the store's limit; what the Authenticator hands over
	// is not.
	pad := &handOver{pad: bytes.Repeat([]byte(" "), 64)}
	small := newEnv(t, Options{Authenticator: pad, MaxBodyBytes: 64})
	status, body = send(t, small.srv.Client(), http.MethodPost, small.srv.URL+"/persist/ingest", []byte(`{"vertices":[],"edges":[]}`))
	if status != http.StatusRequestEntityTooLarge || pad.last.unreads != 1 {
		t.Errorf("handed a body over the limit: %d %s, Unread called %d times; want 413", status, body, pad.last.unreads)
	}
}
