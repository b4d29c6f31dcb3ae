package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	testRegion  = "us-east-1"
	testService = "execute-api"
)

var (
	testCreds  = Credentials{AccessKeyID: "LNKTESTTESTTESTTEST1", SecretAccessKey: "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3"}
	testNow    = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	testBody   = []byte(`{"target_url":"https://example.com/a"}`)
	otherBody  = []byte(`{"target_url":"https://evil.example/a"}`)
	fixedClock = func() time.Time { return testNow }
)

// recorder is a test server's view of what the middleware did.
type recorder struct {
	mu       sync.Mutex
	served   int
	rejected int
	err      error
	body     []byte
}

func (r *recorder) snapshot() (served, rejected int, body []byte, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served, r.rejected, r.body, r.err
}

// newServer serves v's middleware in front of a handler that records the
// body it reads; onReject records the error and answers 403.
func newServer(t *testing.T, v *Verifier) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.served++
		rec.body = b
		rec.mu.Unlock()
		if err != nil {
			http.Error(w, "read body", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
	})
	onReject := func(w http.ResponseWriter, _ *http.Request, err error) {
		rec.mu.Lock()
		rec.rejected++
		rec.err = err
		rec.mu.Unlock()
		http.Error(w, "forbidden", http.StatusForbidden)
	}
	srv := httptest.NewServer(v.Middleware(onReject)(next))
	t.Cleanup(srv.Close)
	return srv, rec
}

func mustNew(t *testing.T, creds Credentials, opts ...Option) *Verifier {
	t.Helper()
	v, err := New(creds, testRegion, testService, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	return req
}

// assertNoLeak fails when an error message reveals a secret, a signature or
// the Authorization header.
func assertNoLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, s := range append(secrets, testCreds.SecretAccessKey) {
		if s != "" && strings.Contains(msg, s) {
			t.Errorf("error %q leaks %q", msg, s)
		}
	}
}

func signatureOf(authz string) string {
	_, sig, _ := strings.Cut(authz, "Signature=")
	return sig
}

func TestVerifyThroughServer(t *testing.T) {
	type request struct {
		method  string
		path    string // with query
		body    []byte
		headers map[string]string
	}
	post := request{method: http.MethodPost, path: "/v1/urls", body: testBody, headers: map[string]string{"Content-Type": "application/json"}}
	tests := []struct {
		name     string
		req      request
		creds    Credentials // signing credentials; zero means testCreds
		region   string      // signing region; "" means testRegion
		service  string      // signing service; "" means testService
		signedAt time.Time   // zero means testNow
		maxBody  int64       // verifier limit; 0 means default
		tamper   func(t *testing.T, r *http.Request)
		wantErr  error
	}{
		{name: "sdk post json", req: post},
		{name: "sdk get with query", req: request{method: http.MethodGet, path: "/v1/urls?b=2&a=1&a=0&q=x%20y"}},
		{name: "sdk delete no body", req: request{method: http.MethodDelete, path: "/v1/urls/Ab3dE"}},
		{name: "sdk escaped path", req: request{method: http.MethodGet, path: "/v1/urls/a%20b/%E2%9C%93"}},
		{name: "sdk custom signed header", req: request{method: http.MethodGet, path: "/v1/urls", headers: map[string]string{"X-Request-Id": "r-1", "Accept": "application/json"}}},
		{name: "signed 4m ago within skew", req: post, signedAt: testNow.Add(-4 * time.Minute)},
		{name: "signed 4m ahead within skew", req: post, signedAt: testNow.Add(4 * time.Minute)},
		{
			name: "unsigned header added after signing",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Set("X-Forwarded-For", "203.0.113.9")
			},
		},
		{
			name:    "unsigned",
			req:     post,
			tamper:  func(_ *testing.T, r *http.Request) { r.Header.Del("Authorization") },
			wantErr: ErrMissingSignature,
		},
		{name: "wrong secret", req: post, creds: Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: "wrong-secret"}, wantErr: ErrSignatureMismatch},
		{name: "wrong access key", req: post, creds: Credentials{AccessKeyID: "LNKOTHEROTHEROTHER12", SecretAccessKey: testCreds.SecretAccessKey}, wantErr: ErrUnknownAccessKey},
		{name: "wrong region in scope", req: post, region: "eu-west-1", wantErr: ErrScope},
		{name: "wrong service in scope", req: post, service: "s3", wantErr: ErrScope},
		{name: "expired", req: post, signedAt: testNow.Add(-6 * time.Minute), wantErr: ErrClockSkew},
		{name: "from the future", req: post, signedAt: testNow.Add(6 * time.Minute), wantErr: ErrClockSkew},
		{
			name: "scope date differs from x-amz-date",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/20261129/", "/20261128/", 1))
			},
			wantErr: ErrScope,
		},
		{
			name: "body tampered same length",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				b := bytes.Replace(testBody, []byte("example.com"), []byte("exbmple.com"), 1)
				r.Body = io.NopCloser(bytes.NewReader(b))
				r.GetBody = nil
			},
			wantErr: ErrBodyHashMismatch,
		},
		{
			name: "body tampered and content hash header recomputed",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				sum := sha256.Sum256(otherBody)
				r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
				r.Body = io.NopCloser(bytes.NewReader(otherBody))
				r.ContentLength = int64(len(otherBody))
				r.GetBody = nil
			},
			wantErr: ErrSignatureMismatch,
		},
		{
			name: "body tampered and content hash header removed",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Del("X-Amz-Content-Sha256")
				r.Body = io.NopCloser(bytes.NewReader(otherBody))
				r.ContentLength = int64(len(otherBody))
				r.GetBody = nil
			},
			wantErr: ErrSignatureMismatch,
		},
		{
			name: "signed header changed",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Set("Content-Type", "text/plain")
			},
			wantErr: ErrSignatureMismatch,
		},
		{
			name: "signed header removed",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Del("Content-Type")
			},
			wantErr: ErrSignatureMismatch,
		},
		{
			name: "x-amz-date changed by a second",
			req:  post,
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Set("X-Amz-Date", testNow.Add(time.Second).Format(amzDateLayout))
			},
			wantErr: ErrSignatureMismatch,
		},
		{
			name:    "query value changed",
			req:     request{method: http.MethodGet, path: "/v1/urls?limit=10"},
			tamper:  func(_ *testing.T, r *http.Request) { r.URL.RawQuery = "limit=11" },
			wantErr: ErrSignatureMismatch,
		},
		{
			name:    "query parameter added",
			req:     request{method: http.MethodGet, path: "/v1/urls?limit=10"},
			tamper:  func(_ *testing.T, r *http.Request) { r.URL.RawQuery = "limit=10&admin=true" },
			wantErr: ErrSignatureMismatch,
		},
		{
			name:    "undecodable query parameter added",
			req:     request{method: http.MethodGet, path: "/v1/urls?limit=10"},
			tamper:  func(_ *testing.T, r *http.Request) { r.URL.RawQuery = "limit=10&x=%zz" },
			wantErr: ErrMalformedAuthorization,
		},
		{
			name:    "path changed",
			req:     request{method: http.MethodDelete, path: "/v1/urls/abc"},
			tamper:  func(_ *testing.T, r *http.Request) { r.URL.Path = "/v1/urls/abd" },
			wantErr: ErrSignatureMismatch,
		},
		{
			name:    "method changed",
			req:     request{method: http.MethodGet, path: "/v1/urls/abc"},
			tamper:  func(_ *testing.T, r *http.Request) { r.Method = http.MethodDelete },
			wantErr: ErrSignatureMismatch,
		},
		{
			name:    "host changed",
			req:     post,
			tamper:  func(_ *testing.T, r *http.Request) { r.Host = "other.example" },
			wantErr: ErrSignatureMismatch,
		},
		{
			name: "presigned query",
			req:  request{method: http.MethodGet, path: "/v1/urls"},
			tamper: func(_ *testing.T, r *http.Request) {
				r.Header.Del("Authorization")
				r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=" + strings.Repeat("a", 64)
			},
			wantErr: ErrPresignUnsupported,
		},
		{name: "body over limit", req: post, maxBody: 16, wantErr: ErrBodyTooLarge},
		{
			name:    "chunked body over limit",
			req:     post,
			maxBody: 16,
			tamper: func(_ *testing.T, r *http.Request) {
				r.ContentLength = -1 // sent chunked: no Content-Length to reject early
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(testBody)))
				r.GetBody = nil
				// Without a declared hash the body is read before the signature
				// (which the signed content-length fails) is checked.
				r.Header.Del("X-Amz-Content-Sha256")
			},
			wantErr: ErrBodyTooLarge,
		},
		{name: "body at limit", req: post, maxBody: int64(len(testBody))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := []Option{WithClock(fixedClock)}
			if tc.maxBody > 0 {
				opts = append(opts, WithMaxBodyBytes(tc.maxBody))
			}
			srv, rec := newServer(t, mustNew(t, testCreds, opts...))

			creds, region, service, at := tc.creds, tc.region, tc.service, tc.signedAt
			if creds == (Credentials{}) {
				creds = testCreds
			}
			if region == "" {
				region = testRegion
			}
			if service == "" {
				service = testService
			}
			if at.IsZero() {
				at = testNow
			}
			req := mustRequest(t, tc.req.method, srv.URL+tc.req.path)
			for k, v := range tc.req.headers {
				req.Header.Set(k, v)
			}
			if err := SignRequest(context.Background(), req, tc.req.body, creds, region, service, at); err != nil {
				t.Fatalf("SignRequest: %v", err)
			}
			authz := req.Header.Get("Authorization")
			if tc.tamper != nil {
				tc.tamper(t, req)
			}

			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("do: %v", err)
			}
			respBody, _ := io.ReadAll(resp.Body)
			resp.Body.Close()

			served, rejected, seen, gotErr := rec.snapshot()
			if tc.wantErr == nil {
				if gotErr != nil || resp.StatusCode != http.StatusOK || served != 1 {
					t.Fatalf("status %d, served %d, err %v; want 200, served once, no error", resp.StatusCode, served, gotErr)
				}
				if !bytes.Equal(seen, tc.req.body) || !bytes.Equal(respBody, tc.req.body) {
					t.Errorf("handler read body %q, want %q", seen, tc.req.body)
				}
				return
			}
			t.Logf("rejected: %v", gotErr)
			if !errors.Is(gotErr, tc.wantErr) {
				t.Fatalf("err = %v, want %v", gotErr, tc.wantErr)
			}
			if served != 0 || rejected != 1 || resp.StatusCode != http.StatusForbidden {
				t.Errorf("served %d, rejected %d, status %d; want handler never run and one 403", served, rejected, resp.StatusCode)
			}
			assertNoLeak(t, gotErr, authz, signatureOf(authz), creds.SecretAccessKey)
		})
	}
}

// TestVerifySDKSignerWithoutContentHash signs with the SDK signer directly,
// as most SigV4 clients do, without an X-Amz-Content-Sha256 header: the body
// is still bound to the signature.
func TestVerifySDKSignerWithoutContentHash(t *testing.T) {
	tests := []struct {
		name    string
		send    []byte
		wantErr error
	}{
		{name: "untouched", send: testBody},
		{name: "body tampered", send: bytes.Replace(testBody, []byte("example"), []byte("exbmple"), 1), wantErr: ErrSignatureMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := newServer(t, mustNew(t, testCreds, WithClock(fixedClock)))
			req := mustRequest(t, http.MethodPost, srv.URL+"/v1/urls")
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = int64(len(testBody))
			sum := sha256.Sum256(testBody)
			awsCreds := aws.Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: testCreds.SecretAccessKey}
			if err := v4.NewSigner().SignHTTP(context.Background(), awsCreds, req, hex.EncodeToString(sum[:]), testService, testRegion, testNow); err != nil {
				t.Fatalf("SignHTTP: %v", err)
			}
			req.Body = io.NopCloser(bytes.NewReader(tc.send))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("do: %v", err)
			}
			resp.Body.Close()
			served, _, _, gotErr := rec.snapshot()
			if !errors.Is(gotErr, tc.wantErr) || (tc.wantErr == nil) != (served == 1) {
				t.Fatalf("err = %v, served %d; want err %v", gotErr, served, tc.wantErr)
			}
		})
	}
}

func TestTransport(t *testing.T) {
	tests := []struct {
		name    string
		creds   Credentials
		method  string
		body    string
		wantErr error
	}{
		{name: "post", creds: testCreds, method: http.MethodPost, body: string(testBody)},
		{name: "get", creds: testCreds, method: http.MethodGet},
		{name: "wrong secret", creds: Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: "nope"}, method: http.MethodGet, wantErr: ErrSignatureMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := newServer(t, mustNew(t, testCreds))
			client := &http.Client{Transport: tc.creds.Transport(srv.Client().Transport, testRegion, testService)}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequestWithContext(context.Background(), tc.method, srv.URL+"/v1/urls?x=1", body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("do: %v", err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if req.Header.Get("Authorization") != "" {
				t.Error("Transport modified the caller's request")
			}
			served, _, _, gotErr := rec.snapshot()
			if !errors.Is(gotErr, tc.wantErr) {
				t.Fatalf("err = %v, want %v", gotErr, tc.wantErr)
			}
			if tc.wantErr == nil && (served != 1 || string(got) != tc.body) {
				t.Errorf("served %d, echoed %q; want 1, %q", served, got, tc.body)
			}
		})
	}
}

// TestProviderTransport: credentials from an SDK provider sign like a static pair,
// and a temporary pair's session token goes with them; a provider that fails sends
// nothing.
func TestProviderTransport(t *testing.T) {
	srv, rec := newServer(t, mustNew(t, testCreds))
	var token string
	echo := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		token = r.Header.Get("X-Amz-Security-Token")
		return srv.Client().Transport.RoundTrip(r)
	})
	p := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: testCreds.SecretAccessKey, SessionToken: "session"}, nil
	})
	client := &http.Client{Transport: ProviderTransport(echo, p, testRegion, testService)}
	resp, err := client.Post(srv.URL+"/v1/urls", "application/json", bytes.NewReader(testBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if served, _, _, gotErr := rec.snapshot(); served != 1 || gotErr != nil || token != "session" {
		t.Fatalf("served %d, err %v, session token %q; want 1, nil, \"session\"", served, gotErr, token)
	}

	failing := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return aws.Credentials{}, errors.New("no chain") })
	client = &http.Client{Transport: ProviderTransport(echo, failing, testRegion, testService)}
	if _, err := client.Get(srv.URL + "/v1/urls"); err == nil || !strings.Contains(err.Error(), "credentials: no chain") {
		t.Fatalf("a failing provider: %v", err)
	}
	if served, _, _, _ := rec.snapshot(); served != 1 {
		t.Fatalf("served %d after a failing provider, want still 1", served)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestVerifyMalformed drives Verify directly with hand-written headers.
func TestVerifyMalformed(t *testing.T) {
	const sig = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cred := "Credential=" + testCreds.AccessKeyID + "/20261129/us-east-1/execute-api/aws4_request"
	good := "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host;x-amz-date, Signature=" + sig
	tests := []struct {
		name    string
		authz   []string // Authorization header values
		amzDate []string // X-Amz-Date header values
		wantErr error
	}{
		{name: "well formed but wrong signature", authz: []string{good}, wantErr: ErrSignatureMismatch},
		{name: "empty header", authz: []string{""}, wantErr: ErrMissingSignature},
		{name: "other scheme", authz: []string{"Bearer abc"}, wantErr: ErrMalformedAuthorization},
		{name: "scheme only", authz: []string{"AWS4-HMAC-SHA256"}, wantErr: ErrMalformedAuthorization},
		{name: "lower-case scheme", authz: []string{strings.Replace(good, "AWS4-HMAC-SHA256", "aws4-hmac-sha256", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "sigv4a", authz: []string{strings.Replace(good, "AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "missing signature", authz: []string{"AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host;x-amz-date"}, wantErr: ErrMalformedAuthorization},
		{name: "missing credential", authz: []string{"AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date, Signature=" + sig}, wantErr: ErrMalformedAuthorization},
		{name: "duplicate signature", authz: []string{good + ", Signature=" + sig}, wantErr: ErrMalformedAuthorization},
		{name: "unknown component", authz: []string{good + ", Foo=bar"}, wantErr: ErrMalformedAuthorization},
		{name: "component without equals", authz: []string{good + ", junk"}, wantErr: ErrMalformedAuthorization},
		{name: "upper-case hex signature", authz: []string{strings.Replace(good, sig, strings.ToUpper(sig), 1)}, wantErr: ErrMalformedAuthorization},
		{name: "short signature", authz: []string{strings.Replace(good, sig, sig[:63], 1)}, wantErr: ErrMalformedAuthorization},
		{name: "credential with four parts", authz: []string{strings.Replace(good, "/execute-api/", "/", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "credential bad terminator", authz: []string{strings.Replace(good, "aws4_request", "aws4_reqest", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "credential bad date", authz: []string{strings.Replace(good, "/20261129/", "/2026-11-29/", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "credential empty access key", authz: []string{strings.Replace(good, testCreds.AccessKeyID, "", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "signed headers unsorted", authz: []string{strings.Replace(good, "host;x-amz-date", "x-amz-date;host", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "signed headers duplicated", authz: []string{strings.Replace(good, "host;x-amz-date", "host;host;x-amz-date", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "signed headers upper case", authz: []string{strings.Replace(good, "host;x-amz-date", "Host;x-amz-date", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "signed headers empty name", authz: []string{strings.Replace(good, "host;x-amz-date", "host;;x-amz-date", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "host not signed", authz: []string{strings.Replace(good, "host;x-amz-date", "x-amz-date", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "x-amz-date not signed", authz: []string{strings.Replace(good, "host;x-amz-date", "host", 1)}, wantErr: ErrMalformedAuthorization},
		{name: "signs an ignored header", authz: []string{strings.Replace(good, "host;x-amz-date", "host;user-agent;x-amz-date", 1)}, wantErr: ErrSignatureMismatch},
		{name: "two authorization headers", authz: []string{good, good}, wantErr: ErrMalformedAuthorization},
		{name: "oversized header", authz: []string{good + ", " + strings.Repeat("x", maxAuthorizationLen)}, wantErr: ErrMalformedAuthorization},
		{name: "missing x-amz-date", authz: []string{good}, amzDate: []string{}, wantErr: ErrMalformedAuthorization},
		{name: "two x-amz-date", authz: []string{good}, amzDate: []string{"20261129T120000Z", "20261129T120000Z"}, wantErr: ErrMalformedAuthorization},
		{name: "x-amz-date rfc3339", authz: []string{good}, amzDate: []string{"2026-11-29T12:00:00Z"}, wantErr: ErrMalformedAuthorization},
		{name: "x-amz-date without zone", authz: []string{good}, amzDate: []string{"20261129T120000"}, wantErr: ErrMalformedAuthorization},
	}
	v := mustNew(t, testCreds, WithClock(fixedClock))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "http://linoone.test/v1/urls", nil)
			r.Header["Authorization"] = tc.authz
			r.Header.Set("User-Agent", "linoone-test")
			if tc.amzDate == nil {
				tc.amzDate = []string{"20261129T120000Z"}
			}
			r.Header["X-Amz-Date"] = tc.amzDate
			err := v.Verify(r)
			t.Logf("rejected: %v", err)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			for _, a := range tc.authz {
				if len(a) > len(algorithm) { // the bare scheme may be named
					assertNoLeak(t, err, a)
				}
			}
			assertNoLeak(t, err, sig)
		})
	}
}

func TestMiddlewareDefaultReject(t *testing.T) {
	tests := []struct {
		name       string
		body       []byte
		wantStatus int
	}{
		{name: "unsigned", wantStatus: http.StatusForbidden},
		{name: "too large", body: bytes.Repeat([]byte("x"), 32), wantStatus: http.StatusRequestEntityTooLarge},
	}
	v := mustNew(t, testCreds, WithMaxBodyBytes(16))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			h := v.Middleware(nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "http://linoone.test/v1/urls", bytes.NewReader(tc.body))
			if tc.body != nil {
				if err := SignRequest(context.Background(), r, tc.body, testCreds, testRegion, testService, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			h.ServeHTTP(w, r)
			if ran || w.Code != tc.wantStatus {
				t.Errorf("handler ran %v, status %d; want false, %d", ran, w.Code, tc.wantStatus)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		creds   Credentials
		region  string
		service string
		opts    []Option
	}{
		{name: "empty secret", creds: Credentials{AccessKeyID: "AK"}, region: testRegion, service: testService},
		{name: "empty access key", creds: Credentials{SecretAccessKey: "x"}, region: testRegion, service: testService},
		{name: "access key with slash", creds: Credentials{AccessKeyID: "A/K", SecretAccessKey: "x"}, region: testRegion, service: testService},
		{name: "empty region", creds: testCreds, service: testService},
		{name: "upper-case service", creds: testCreds, region: testRegion, service: "Execute-API"},
		{name: "zero skew", creds: testCreds, region: testRegion, service: testService, opts: []Option{WithSkew(0)}},
		{name: "nil clock", creds: testCreds, region: testRegion, service: testService, opts: []Option{WithClock(nil)}},
		{name: "negative body limit", creds: testCreds, region: testRegion, service: testService, opts: []Option{WithMaxBodyBytes(-1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := New(tc.creds, tc.region, tc.service, tc.opts...)
			if err == nil || v != nil {
				t.Fatalf("New = %v, %v; want error", v, err)
			}
			assertNoLeak(t, err)
		})
	}
}

func TestCredentialsMaskSecret(t *testing.T) {
	for _, format := range []string{"%v", "%+v", "%s", "%#v"} {
		got := fmt.Sprintf(format, testCreds)
		if strings.Contains(got, testCreds.SecretAccessKey) || !strings.Contains(got, testCreds.AccessKeyID) {
			t.Errorf("%s formats as %q", format, got)
		}
	}
	if got := testCreds.LogValue().String(); strings.Contains(got, testCreds.SecretAccessKey) {
		t.Errorf("LogValue = %q", got)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	srv, rec := newServer(t, mustNew(t, testCreds))
	client := &http.Client{Transport: testCreds.Transport(srv.Client().Transport, testRegion, testService)}
	const n = 16
	errs := make(chan error, n)
	for range n {
		go func() {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/shorten", bytes.NewReader(testBody))
			if err != nil {
				errs <- err
				return
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if served, rejected, _, err := rec.snapshot(); served != n || rejected != 0 {
		t.Errorf("served %d, rejected %d (last error %v); want %d, 0", served, rejected, err, n)
	}
}

// BenchmarkVerifyBatchBody verifies a signed 4 MiB body, about the size of the
// consumer's click batches to Persist: reading and hashing the body is the cost.
// TestVerifiedBodyUnread: after Verify, r.Body reads as the body did, and Unread
// hands over what was not read yet, once, as reading it would have.
func TestVerifiedBodyUnread(t *testing.T) {
	v := mustNew(t, testCreds, WithClock(fixedClock))
	r := mustRequest(t, http.MethodPost, "http://api.test/v1/urls")
	if err := SignRequest(context.Background(), r, testBody, testCreds, testRegion, testService, testNow); err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(r); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	body, ok := r.Body.(*Body)
	if !ok {
		t.Fatalf("r.Body is %T after Verify, want *Body", r.Body)
	}
	head := make([]byte, 5)
	if _, err := io.ReadFull(body, head); err != nil {
		t.Fatal(err)
	}
	rest := body.Unread()
	if got := string(head) + string(rest); got != string(testBody) {
		t.Errorf("read %q then Unread %q, want the body %q", head, rest, testBody)
	}
	if n, err := body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after Unread: %d, %v; want 0, EOF", n, err)
	}
	if again := body.Unread(); len(again) != 0 {
		t.Errorf("second Unread returned %q", again)
	}
	if err := body.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func BenchmarkVerifyBatchBody(b *testing.B) {
	body := bytes.Repeat([]byte(`{"id":"0123456789abcdef","label":"short_url_visited"},`), 4<<20/54)
	v, err := New(testCreds, testRegion, testService, WithClock(fixedClock), WithMaxBodyBytes(8<<20))
	if err != nil {
		b.Fatal(err)
	}
	signed, err := http.NewRequest(http.MethodPost, "http://persist.test/persist/ingest", nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := SignRequest(context.Background(), signed, body, testCreds, testRegion, testService, testNow); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := signed.Clone(context.Background())
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := v.Verify(r); err != nil {
			b.Fatal(err)
		}
	}
}

// stalledBody is a body whose bytes never come.
type stalledBody struct{}

func (stalledBody) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
func (stalledBody) Close() error             { return nil }

// TestForgedRequestGetsNoBufferForItsContentLength: the access key id is no secret
// (serve logs it), so a request with it, a current date, a made-up signature and a
// Content-Length of 8 MiB must not make the verifier allocate 8 MiB before anything
// has arrived, whether or not it declares its body's hash.
func TestForgedRequestGetsNoBufferForItsContentLength(t *testing.T) {
	v := mustNew(t, testCreds, WithClock(fixedClock), WithMaxBodyBytes(8<<20))
	for _, declare := range []bool{true, false} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8082/persist/ingest", nil)
		req.Body, req.ContentLength = stalledBody{}, 8<<20
		req.Header.Set("X-Amz-Date", testNow.Format(amzDateLayout))
		signed := "host;x-amz-date"
		if declare {
			req.Header.Set("X-Amz-Content-Sha256", strings.Repeat("ab", 32))
			signed = "host;x-amz-content-sha256;x-amz-date"
		}
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testCreds.AccessKeyID+"/"+testNow.Format(scopeDateLayout)+
			"/"+testRegion+"/"+testService+"/aws4_request, SignedHeaders="+signed+", Signature="+strings.Repeat("0", 64))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := v.Verify(req)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("a forged request verified")
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("declared hash %t: %d bytes allocated for a body of which nothing came (%v)", declare, n, err)
		}
	}
}

// blockingBody reports its first Read on started and waits for gate.
type blockingBody struct {
	r       io.Reader
	started chan<- struct{}
	gate    <-chan struct{}
	once    sync.Once
}

func (b *blockingBody) Read(p []byte) (int, error) {
	b.once.Do(func() { b.started <- struct{}{} })
	<-b.gate
	return b.r.Read(p)
}

// TestUnverifiedReadsAreBounded: a request whose Authorization names the right key,
// scope and date but that declares no body hash has its body read before its
// signature can be checked; at most MaxUnverifiedReads are read at once (an
// auditor's 100 such requests of 8 MiB held 1.3 GB of local Persist), and the
// others wait holding no buffer.
func TestUnverifiedReadsAreBounded(t *testing.T) {
	const sent = MaxUnverifiedReads + 4
	if reading := readingAtOnce(t, sent, func(i int) string { return fmt.Sprintf("192.0.2.%d:1234", i+1) }); reading != MaxUnverifiedReads {
		t.Errorf("%d of %d unverified bodies from as many addresses read at once, want %d", reading, sent, MaxUnverifiedReads)
	}
	// One address (an IPv6 /64) holds only its own few turns (issue 44 finding 3).
	if reading := readingAtOnce(t, sent, func(i int) string { return fmt.Sprintf("[2001:db8::%x]:1234", i+1) }); reading != MaxUnverifiedPerAddress {
		t.Errorf("%d of %d unverified bodies from one /64 read at once, want %d", reading, sent, MaxUnverifiedPerAddress)
	}
}

// readingAtOnce sends sent signed requests without a body hash, from addr(i), and
// counts the bodies Verify starts to read within a second; it then lets them all
// through and checks that each verifies.
func readingAtOnce(t *testing.T, sent int, addr func(int) string) int {
	t.Helper()
	v := mustNew(t, testCreds, WithClock(fixedClock))
	started := make(chan struct{}, sent)
	gate := make(chan struct{})
	errs := make([]error, sent)
	var wg sync.WaitGroup
	for i := range sent {
		req := mustRequest(t, http.MethodPost, "http://127.0.0.1:8082/persist/ingest")
		sum := sha256.Sum256(testBody)
		awsCreds := aws.Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: testCreds.SecretAccessKey}
		if err := v4.NewSigner().SignHTTP(context.Background(), awsCreds, req, hex.EncodeToString(sum[:]), testService, testRegion, testNow); err != nil {
			t.Fatal(err)
		}
		req.Body = io.NopCloser(&blockingBody{r: bytes.NewReader(testBody), started: started, gate: gate})
		req.ContentLength = int64(len(testBody))
		req.RemoteAddr = addr(i)
		wg.Go(func() { errs[i] = v.Verify(req) })
	}
	reading := 0
	for deadline := time.After(time.Second); ; {
		select {
		case <-started:
			reading++
			continue
		case <-deadline:
		}
		break
	}
	close(gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v (signed: it must pass once its turn comes)", i, err)
		}
	}
	return reading
}
