package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/app/signing"
	"github.com/linoone/linoone/internal/ops/capacity"
)

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	want := &Latency{N: 100, P50: 50, P90: 90, P99: 99, Max: 100}
	if diff := cmp.Diff(want, summarize(ds)); diff != "" {
		t.Errorf("1..100 ms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&Latency{N: 1, P50: 7, P90: 7, P99: 7, Max: 7}, summarize([]time.Duration{7 * time.Millisecond})); diff != "" {
		t.Errorf("one sample (-want +got):\n%s", diff)
	}
	if summarize(nil) != nil {
		t.Error("no samples: want nil")
	}
}

func TestParseOutputs(t *testing.T) {
	good := `{"management_url":{"sensitive":false,"type":"string","value":"https://m.execute-api.eu-west-1.amazonaws.com"},
		"resolver_url":{"sensitive":false,"type":"string","value":"https://go.example.com"},"click_dlq_url":{"value":"x"}}`
	got, err := ParseOutputs([]byte(good))
	want := Target{Resolver: "https://go.example.com", Management: "https://m.execute-api.eu-west-1.amazonaws.com"}
	if err != nil || got != want {
		t.Fatalf("ParseOutputs = %+v, %v; want %+v", got, err, want)
	}
	for name, tt := range map[string]struct{ in, err string }{
		"not applied":  {`{}`, "no output resolver_url (has the environment been applied?)"},
		"not a string": {`{"resolver_url":{"value":1},"management_url":{"value":"https://m.example"}}`, "output resolver_url is not a non-empty string"},
		"not a URL":    {`{"resolver_url":{"value":"ftp://x"},"management_url":{"value":"https://m.example"}}`, "resolver URL"},
		"not JSON":     {`Warning: no outputs`, "not the JSON of terraform output -json"},
	} {
		if _, err := ParseOutputs([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want one saying %q", name, err, tt.err)
		}
	}
}

// TestReportFeedsCapacity: what WriteJSON writes is what capacity --from-smoke
// reads, member for member.
func TestReportFeedsCapacity(t *testing.T) {
	r := Report{Target: Target{Resolver: "https://go.example.com"}, At: "2026-12-06T18:00:00Z", Timings: Timings{
		RedirectKeptAlive: &Latency{N: 200, P50: 30, P99: 80},
		NotAToken:         &Latency{N: 200, P50: 22, P99: 50},
		Connect:           &Latency{N: 200, P50: 2, P99: 9},
	}}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	s, err := capacity.ParseSmoke(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.Resolver != r.Target.Resolver || s.At != r.At || s.Latency.RedirectKeptAlive.P99 != 80 || s.Latency.NotAToken.P50 != 22 || s.Latency.Connect.P50 != 2 {
		t.Fatalf("capacity read %+v from\n%s", s, b.String())
	}
}

// fakeAPI is a correct Linoone in one handler (both APIs on one host), with a
// planted fault.
type fakeAPI struct {
	mu    sync.Mutex
	links map[string]string
	fault string
	url   string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	problem := func(status int) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":404,"title":"Not Found"}`))
	}
	signed := r.Header.Get("Authorization") != ""
	switch p := r.URL.Path; {
	case p == "/shorten" && r.Method == http.MethodPost:
		if !signed && f.fault != "open" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		var req struct {
			TargetURL string `json:"target_url"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		tok := fmt.Sprintf("Tok%07d", len(f.links))
		f.links[tok] = req.TargetURL
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"token": tok, "short_url": f.url + "/" + tok})
	case strings.HasPrefix(p, "/links/") && signed:
		tok := strings.TrimPrefix(p, "/links/")
		_ = json.NewEncoder(w).Encode(map[string]string{"token": tok, "short_url": f.url + "/" + tok, "target_url": f.links[tok]})
	case p == "/docs":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>docs</html>"))
	case p == "/openapi.yaml":
		_, _ = w.Write([]byte("openapi: 3.0.3\n"))
	case f.links[p[1:]] != "":
		switch f.fault {
		case "500":
			w.WriteHeader(http.StatusInternalServerError)
		case "wrong-location":
			http.Redirect(w, r, "https://example.org/", http.StatusFound)
		default:
			w.Header().Set("Cache-Control", cacheControl)
			http.Redirect(w, r, f.links[p[1:]], http.StatusFound)
		}
	case strings.Contains(r.Header.Get("Accept"), "text/html"):
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html>not found</html>"))
	default:
		problem(http.StatusNotFound)
	}
}

// TestRunFindsPlantedFaults: Run passes a correct API and names the check that
// each planted fault breaks.
func TestRunFindsPlantedFaults(t *testing.T) {
	signer := signing.Signing{Provider: staticProvider(), Region: "us-east-1"}
	for _, tt := range []struct {
		fault, failed, detail string
	}{
		{"", "", ""},
		{"500", "redirect", "want 302"},
		{"wrong-location", "redirect", `302 to the wrong place: Location "https://example.org/"`},
		{"open", "unsigned write refused", "anyone can issue short URLs"},
	} {
		t.Run("fault="+tt.fault, func(t *testing.T) {
			api := &fakeAPI{links: map[string]string{}, fault: tt.fault}
			srv := httptest.NewServer(api)
			defer srv.Close()
			api.url = srv.URL
			r, err := Run(context.Background(), Options{Target: Target{Resolver: srv.URL, Management: srv.URL}, Redirects: 5, Issuances: 2,
				Timeout: 5 * time.Second, Signer: signer.Transport(http.DefaultTransport)}, "test")
			if err != nil {
				t.Fatal(err)
			}
			if tt.failed == "" {
				if !r.OK || r.Timings.Issuance == nil || r.Timings.RedirectKeptAlive.N != 5 || len(r.Created) != 3 {
					t.Fatalf("correct API: %+v", r)
				}
				return
			}
			if r.OK || !contains(r.Failed(), tt.failed) || !strings.HasPrefix(r.Verdict, "FAILED") {
				t.Fatalf("failed %v, want %q: %+v", r.Failed(), tt.failed, r.Checks)
			}
			for _, c := range r.Checks {
				if c.Name == tt.failed && !strings.Contains(c.Detail, tt.detail) {
					t.Errorf("%s: %q lacks %q", c.Name, c.Detail, tt.detail)
				}
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func staticProvider() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("AKIDSMOKETEST", "smoke-test-secret", "")
}
