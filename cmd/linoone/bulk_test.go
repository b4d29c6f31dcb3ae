package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// issued answers a batch as the API does when every item is issued.
func issued(t *testing.T, w http.ResponseWriter, r *http.Request) {
	t.Helper()
	var req management.BatchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		t.Errorf("batch body: %v", err)
	}
	res := management.BatchResponse{Results: make([]management.BatchResult, len(req.Items))}
	for i := range req.Items {
		tok := fmt.Sprintf("%010d", i)
		u := "http://s.example/" + tok
		res.Results[i] = management.BatchResult{Token: &tok, ShortURL: &u}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// importFile runs linoone shorten --file with n lines against the management API at
// url, with the extra arguments given, and returns its exit code and output.
func importFile(t *testing.T, ctx context.Context, url string, n int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, "https://example.com/%d\n", i)
	}
	file := filepath.Join(t.TempDir(), "links.txt")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"LINOONE_DATA_DIR": t.TempDir(), "LINOONE_MANAGEMENT_URL": url,
		sigv4.EnvAccessKeyID: "LNKBULKTEST000000001", sigv4.EnvSecretAccessKey: "bulk-test-secret-bulk-test-secret-bulk",
	}
	var out, errOut bytes.Buffer
	code = run(ctx, append([]string{"shorten", "--file", file}, args...), func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestBulkStopsWhenTheRequestIsRefusedWhole: a batch refused as a whole request
// (credentials, a wrong URL, a proxy's limits) is no refusal of its lines: the
// import stops at once with one message that says what to check and to run the
// same file again, where it listed every line as refused and advised a new file,
// which would issue every line anew.
func TestBulkStopsWhenTheRequestIsRefusedWhole(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
		check  string
	}{
		{http.StatusForbidden, `{"type":"urn:linoone:problem:signature-invalid","title":"Forbidden","status":403,"detail":"the signature does not match"}`,
			"the API refused the credentials: check LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY"},
		{http.StatusUnauthorized, `{"message":"Unauthorized"}`, "the API refused the credentials"},
		{http.StatusNotFound, `{"message":"Not Found"}`, "(--management-url or LINOONE_MANAGEMENT_URL) is the management API"},
		{http.StatusMethodNotAllowed, ``, "(--management-url or LINOONE_MANAGEMENT_URL) is the management API"},
		{http.StatusRequestEntityTooLarge, `<html>413</html>`, "no proxy between that changes or bounds the request"},
		{http.StatusUnsupportedMediaType, `{"type":"urn:linoone:problem:unsupported-media-type","title":"Unsupported Media Type","status":415,"detail":"not json"}`,
			"no proxy between"},
		{http.StatusOK, `{"foo":1}`, "unexpected answer from POST "},
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			code, stdout, stderr := importFile(t, context.Background(), srv.URL, 2500, "--concurrency", "1")
			if code != 1 || !strings.Contains(stderr, "stopped after 0 of 2500 lines: ") || !strings.Contains(stderr, "POST "+srv.URL+"/shorten/batch: ") ||
				!strings.Contains(stderr, tt.check) || strings.Count(stderr, "run the same file again") != 1 ||
				strings.Contains(stderr, "line 1:") || strings.Contains(stderr, "new file") {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
			if strings.Count(stdout, "\n") > 1 {
				t.Errorf("short URLs on stdout:\n%s", stdout)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want the one that stopped the import", n)
			}
		})
	}
}

// TestBulkRetriesAThrottledBatch: API Gateway answers a throttled request 429
// {"message":"Too Many Requests"}; the batch is sent again like after a 5xx, after
// the Retry-After the answer gives.
func TestBulkRetriesAThrottledBatch(t *testing.T) {
	for _, header := range []string{"", "1"} {
		t.Run("Retry-After "+header, func(t *testing.T) {
			var requests atomic.Int32
			var first, again atomic.Int64 // when the two requests came, in UnixNano
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if requests.Add(1) == 1 {
					first.Store(time.Now().UnixNano())
					if header != "" {
						w.Header().Set("Retry-After", header)
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write([]byte(`{"message":"Too Many Requests"}`))
					return
				}
				again.Store(time.Now().UnixNano())
				issued(t, w, r)
			}))
			defer srv.Close()
			code, stdout, stderr := importFile(t, context.Background(), srv.URL, 3)
			if code != 0 || strings.Count(stdout, "http://s.example/") != 3 || requests.Load() != 2 {
				t.Fatalf("exit %d after %d requests\nstdout:\n%s\nstderr:\n%s", code, requests.Load(), stdout, stderr)
			}
			if gap := time.Duration(again.Load() - first.Load()); header != "" && gap < time.Second {
				t.Errorf("sent again %v after a Retry-After of 1 s", gap)
			}
		})
	}
}

// TestBulkBatchFailureIsOneLine: a batch that fails whole on the network's side
// (nothing listens) is one line naming its lines, not one line per input line, and
// the advice is to run the same file again.
func TestBulkBatchFailureIsOneLine(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	code, _, stderr := importFile(t, context.Background(), srv.URL, 2500)
	want := []string{"lines 1-1000: POST " + srv.URL + "/shorten/batch: ", "lines 1001-2000: ", "lines 2001-2500: ",
		"2500 of 2500 lines failed (listed above): 2500 failed on the server's side or the network's: run the same file again"}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q", w)
		}
	}
	if code != 1 || strings.Contains(stderr, "line 1:") || strings.Count(stderr, "\n") > 10 {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestBulkInterrupted: Ctrl-C during an import stops it with one line that says how
// far it got and to run the same file again, where every line left printed the
// signal; the rate counts the links issued, and the exit status is 130.
func TestBulkInterrupted(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			issued(t, w, r)
			return
		}
		// Ctrl-C while the second batch is in flight; the body read, the server
		// sees the client go.
		interrupt()
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	code, stdout, stderr := importFile(t, ctx, srv.URL, 2500, "--concurrency", "1")
	want := "linoone shorten: 1000 links in "
	if !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr,
		"\nlinoone shorten: interrupted after 1000 of 2500 lines; run the same file again to finish (lines already issued replay)\n") ||
		strings.Count(stderr, "\n") != 2 || code != 130 {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stdout, "http://s.example/"); n != 1000 {
		t.Errorf("%d short URLs on stdout, want the first batch's 1000", n)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d batches sent, want 2: none after the interruption", n)
	}
}

// TestEchoedInputAndProblemsArePrintable: a failed line and the server's problem
// are echoed on the terminal; a carriage return or an escape sequence in either
// would overwrite what was printed or be run by the terminal, so they are quoted.
func TestEchoedInputAndProblemsArePrintable(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/shorten" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(management.Problem{Type: "urn:linoone:problem:x" + evil, Title: "Bad Request" + evil, Status: 400, Detail: "no" + evil})
			return
		}
		var req management.BatchRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("batch body: %v", err)
		}
		res := management.BatchResponse{Results: make([]management.BatchResult, len(req.Items))}
		for i := range res.Results {
			res.Results[i].Problem = &management.Problem{Type: "urn:linoone:problem:target-url-characters", Title: "Bad Request", Status: 400, Detail: "refused\r" + evil}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "links.txt")
	if err := os.WriteFile(file, []byte("https://example.com/a\rFAKE"+evil+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"LINOONE_DATA_DIR": t.TempDir(), "LINOONE_MANAGEMENT_URL": srv.URL,
		sigv4.EnvAccessKeyID: "LNKBULKTEST000000001", sigv4.EnvSecretAccessKey: "bulk-test-secret-bulk-test-secret-bulk",
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"shorten", "--file", file}, `line 1: "https://example.com/a\rFAKE\x1b]0;pwned\a\x1b[2J": "refused\r\x1b]0;pwned\a\x1b[2J" (urn:linoone:problem:target-url-characters)`},
		{[]string{"shorten", "https://example.com/"}, `400 "Bad Request\x1b]0;pwned\a\x1b[2J": "no\x1b]0;pwned\a\x1b[2J" ("urn:linoone:problem:x\x1b]0;pwned\a\x1b[2J")`},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, func(k string) string { return env[k] }, &out, &errOut)
		if code != 1 || strings.ContainsAny(errOut.String(), "\r\x1b\a") || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want it to hold %s", tt.args, code, &errOut, tt.want)
		}
	}
}
