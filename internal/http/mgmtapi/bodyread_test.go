package mgmtapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

// countedBody counts what is read of it; with a gate, its first Read reports that it
// started and waits for the gate to open.
type countedBody struct {
	r       io.Reader
	read    atomic.Int64
	started chan<- struct{}
	gate    <-chan struct{}
	once    sync.Once
}

func (b *countedBody) Read(p []byte) (int, error) {
	if b.gate != nil {
		b.once.Do(func() { b.started <- struct{}{} })
		<-b.gate
	}
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

// batchRequest is a POST /shorten/batch of a 1 MiB body, signed (with the body's hash
// declared) when signed is true.
func batchRequest(t *testing.T, body *countedBody, signed bool) *http.Request {
	t.Helper()
	payload := bytes.Repeat([]byte("x"), 1<<20)
	body.r = bytes.NewReader(payload)
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/shorten/batch", body)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = int64(len(payload))
	if signed {
		if err := sigv4.SignRequest(context.Background(), req, payload, creds, "us-east-1", "execute-api", time.Now()); err != nil {
			t.Fatal(err)
		}
		req.Body, req.GetBody = io.NopCloser(body), nil // the signer set a body of its own
	}
	return req
}

// TestNoBodyReadForARequestNobodySigned: the management API reads a body (up to 4
// MiB for a batch) only for a request whose signature can still be right; an
// anonymous client reserved that much per connection before the signature was
// looked at.
func TestNoBodyReadForARequestNobodySigned(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		mangle func(*http.Request)
		status int
	}{
		{"unsigned", func(*http.Request) {}, http.StatusForbidden},
		{"another key", func(r *http.Request) {
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=LNKSOMEONEELSE000001/"+time.Now().UTC().Format("20060102")+
				"/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature="+string(bytes.Repeat([]byte("0"), 64)))
			r.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
		}, http.StatusForbidden},
		{"declared hash, forged signature", func(r *http.Request) {
			body := r.Body
			if err := sigv4.SignRequest(context.Background(), r, bytes.Repeat([]byte("x"), 1<<20), creds, "us-east-1", "execute-api", time.Now()); err != nil {
				t.Fatal(err)
			}
			a := r.Header.Get("Authorization")
			last := byte('0')
			if a[len(a)-1] == '0' {
				last = '1'
			}
			r.Header.Set("Authorization", a[:len(a)-1]+string(last))
			r.Body, r.GetBody = body, nil
		}, http.StatusForbidden},
		{"over the bound", func(r *http.Request) { r.ContentLength = mgmtapi.MaxBatchBodyBytes + 1 }, http.StatusRequestEntityTooLarge},
	} {
		body := &countedBody{}
		req := batchRequest(t, body, false)
		tc.mangle(req)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != tc.status || body.read.Load() != 0 {
			t.Errorf("%s: %d, %d bytes of the body read; want %d and none read", tc.name, rec.Code, body.read.Load(), tc.status)
		}
	}
}

// TestUnverifiedBodiesAreReadFewAtOnce: a request that names the right key, scope
// and date but declares no body hash can only be checked after its body is read;
// few such bodies are read at once, and the others wait without a buffer.
func TestUnverifiedBodiesAreReadFewAtOnce(t *testing.T) {
	e := newEnv(t)
	const sent = 12
	started := make(chan struct{}, sent)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	codes := make([]int, sent)
	for i := range sent {
		body := &countedBody{started: started, gate: gate}
		req := batchRequest(t, body, true)
		req.Header.Del("X-Amz-Content-Sha256") // signed with it: the signature now fails, once the body is read
		req.Header.Set("X-Trace", strconv.Itoa(i))
		wg.Go(func() {
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			codes[i] = rec.Code
		})
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
	if reading == 0 || reading > sigv4.MaxUnverifiedReads {
		t.Errorf("%d of %d unverified bodies read at once, want 1 to %d", reading, sent, sigv4.MaxUnverifiedReads)
	}
	for i, c := range codes {
		if c != http.StatusForbidden {
			t.Errorf("request %d: %d, want 403", i, c)
		}
	}
}

// TestDeclaredHashMustMatchTheBody: a request whose signature covers the body hash
// it declares is checked before its body is read; the body read must then have that
// hash.
func TestDeclaredHashMustMatchTheBody(t *testing.T) {
	e := newEnv(t)
	signed := targetBody("https://example.com/signed")
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/shorten", bytes.NewReader(signed))
	req.Header.Set("Content-Type", "application/json")
	if err := sigv4.SignRequest(context.Background(), req, signed, creds, "us-east-1", "execute-api", time.Now()); err != nil {
		t.Fatal(err)
	}
	sent := targetBody("https://example.com/sIgned") // as long: Content-Length is signed too
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(sent)), int64(len(sent))
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a body other than the one signed: %d %s, want 403", rec.Code, rec.Body)
	}
	if n := e.ingests.Load(); n != 0 {
		t.Errorf("%d ingests for a refused request", n)
	}
}

// TestRefusalsLogFewLines: anyone can send unsigned requests as fast as they like;
// the log takes a few lines a second of them, not one each.
func TestRefusalsLogFewLines(t *testing.T) {
	e := newEnv(t)
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: e.pc, ResolverBaseURL: "http://127.0.0.1:8080", Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sigv4.New(creds, "us-east-1", "execute-api")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: e.pc, Authenticator: v,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	const sent = 100
	for range sent {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/shorten", bytes.NewReader(targetBody("https://example.com/"))))
		if rec.Code != http.StatusForbidden {
			t.Fatalf("unsigned: %d, want 403", rec.Code)
		}
	}
	if n := strings.Count(logs.String(), "request refused: signature"); n == 0 || n > sent/4 {
		t.Errorf("%d refusal lines for %d unsigned requests, want a few", n, sent)
	}
}
