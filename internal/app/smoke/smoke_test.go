package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/http/sigv4"
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

func TestRegionOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://abc123.execute-api.eu-west-1.amazonaws.com":     "eu-west-1",
		"https://abc123.execute-api.cn-north-1.amazonaws.com.cn": "cn-north-1",
		"https://go.example.com":                                 "",
		"http://127.0.0.1:8081":                                  "",
	} {
		if got := RegionOf(in); got != want {
			t.Errorf("RegionOf(%q) = %q, want %q", in, got, want)
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
	signer := Signing{Provider: staticProvider(), Region: "us-east-1"}
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

// TestResolveSigning: the Linoone pair of the environment first, then serve's pair
// for a management API on this machine, then the AWS default chain.
func TestResolveSigning(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFROMTHECHAIN")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
	t.Setenv("AWS_SESSION_TOKEN", "chain-session")
	t.Setenv("AWS_REGION", "ap-south-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	served := t.TempDir()
	if _, _, _, err := sigv4.LoadOrCreate(served, sigv4.Credentials{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		cfg        config.Shorten
		management string
		keyID      string
		region     string
	}{
		{"env pair", config.Shorten{DataDir: served, Region: "us-east-1", Credentials: sigv4.Credentials{AccessKeyID: "AKIDLINOONE", SecretAccessKey: "s"}},
			"https://m.execute-api.eu-west-1.amazonaws.com", "AKIDLINOONE", "eu-west-1"},
		{"serve's pair", config.Shorten{DataDir: served, Region: "us-east-1"}, "http://127.0.0.1:8081", "", "us-east-1"},
		{"the chain, remote", config.Shorten{DataDir: served, Region: "us-east-1"}, "https://m.example.com", "AKIDFROMTHECHAIN", "ap-south-1"},
		{"the chain, no pair served", config.Shorten{DataDir: t.TempDir(), Region: "us-east-1"}, "http://127.0.0.1:8081", "AKIDFROMTHECHAIN", "ap-south-1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ResolveSigning(ctx, tt.cfg, tt.management, "")
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.Provider.Retrieve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.keyID == "" {
				if !strings.Contains(s.Source, served) || strings.HasPrefix(c.AccessKeyID, "AKIDFROM") {
					t.Errorf("source %q key %s, want serve's pair", s.Source, c.AccessKeyID)
				}
			} else if c.AccessKeyID != tt.keyID {
				t.Errorf("key %s, want %s (source %q)", c.AccessKeyID, tt.keyID, s.Source)
			}
			if s.Region != tt.region || strings.Contains(s.Source, "secret") {
				t.Errorf("region %q source %q, want region %q", s.Region, s.Source, tt.region)
			}
			if tt.keyID == "AKIDFROMTHECHAIN" && c.SessionToken != "chain-session" {
				t.Errorf("session token %q not kept", c.SessionToken)
			}
		})
	}
}
