package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/smoke"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// runSmoke runs the linoone binary with env and returns its output and exit code.
func runSmoke(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// smokeReport decodes a smoke's --json output.
func smokeReport(t *testing.T, stdout, stderr string) smoke.Report {
	t.Helper()
	var r smoke.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("smoke --json: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	return r
}

// TestSmokeAgainstServe: against a local serve, signed with the pair serve wrote,
// every check passes, the links it lists are real, and capacity reads its JSON.
func TestSmokeAgainstServe(t *testing.T) {
	in := newInstance(t)
	in.start()
	args := []string{"smoke", "--resolver", "http://" + in.resolver, "--management", "http://" + in.management, "--redirects", "40", "--issuances", "4"}
	stdout, stderr, code := runSmoke(t, in.env, append(args, "--json")...)
	r := smokeReport(t, stdout, stderr)
	if code != 0 || !r.OK || r.Failed() != nil {
		t.Fatalf("smoke against serve: exit %d, failed %v\n%s\n%s", code, r.Failed(), stdout, stderr)
	}
	if !strings.Contains(r.Signer, sigv4.CredentialsFile) {
		t.Errorf("signed with %q, want the data dir's pair", r.Signer)
	}
	k := r.Timings.RedirectKeptAlive
	if k == nil || k.N != 40 || k.Reused < 39 || r.Timings.RedirectFresh.Reused != 0 || r.Timings.Issuance.N != 4 || !(k.P50 <= k.P90 && k.P90 <= k.P99) {
		t.Fatalf("timings %+v %+v", k, r.Timings.RedirectFresh)
	}
	if len(r.Created) != 5 { // the checked link and four timed issuances
		t.Fatalf("created %+v, want 5 links", r.Created)
	}
	for _, l := range r.Created {
		if !strings.HasPrefix(l.TargetURL, "https://example.com/linoone-smoke/") {
			t.Errorf("created %+v outside example.com", l)
		}
		if res := in.resolve(l.Token); res.StatusCode != http.StatusFound || res.Header.Get("Location") != l.TargetURL {
			t.Errorf("listed link %+v: GET answers %d %q", l, res.StatusCode, res.Header.Get("Location"))
		}
	}

	// The text report names the checks, the percentiles and the links.
	stdout, stderr, code = runSmoke(t, in.env, args...)
	for _, want := range []string{`(?m)^  ok +unsigned write refused +403$`, "redirect, one kept-alive connection", "p99", "OK: 9 checks passed", "created 5 short URLs"} {
		if code != 0 || !regexp.MustCompile(want).MatchString(stdout) {
			t.Fatalf("text report lacks %q (exit %d):\n%s\n%s", want, code, stdout, stderr)
		}
	}

	// linoone capacity --from-smoke: the latencies are no longer unknown.
	file := filepath.Join(t.TempDir(), "smoke.json")
	if err := os.WriteFile(file, []byte(smokeJSON(t, r)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runSmoke(t, in.env, "capacity", "--from-smoke", file, "--json")
	var cr struct {
		Unknown []string `json:"unknown_figures"`
	}
	if err := json.Unmarshal([]byte(out), &cr); code != 0 || err != nil {
		t.Fatalf("capacity --from-smoke: exit %d %v\n%.300s\n%s", code, err, out, errOut)
	}
	for _, u := range cr.Unknown {
		if strings.HasPrefix(u, "apigw_overhead") || strings.HasPrefix(u, "putevents_p") || strings.HasPrefix(u, "lambda_invoke") {
			t.Errorf("%s still unknown after --from-smoke: %v", u, cr.Unknown)
		}
	}
	if !strings.Contains(errOut, "putevents_p50_ms=") {
		t.Errorf("capacity does not say what it set: %s", errOut)
	}
}

func smokeJSON(t *testing.T, r smoke.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := smoke.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// gateway stands in for API Gateway in front of serve: the management API checks
// SigV4 against its own pair (AWS_IAM) and calls serve signed with serve's, the
// resolver passes through; fault plants a broken endpoint and delay a slow one.
type gateway struct {
	resolver, management *httptest.Server
	fault                atomic.Value // string: "", "wrong-location", "500", "open"
	delay                atomic.Int64 // added to each resolver request, ns
}

// gatewayCreds is the caller's pair, which the smoke finds in the AWS default
// credential chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
var gatewayCreds = sigv4.Credentials{AccessKeyID: "AKIAGATEWAYSTANDIN01", SecretAccessKey: "gateway-stand-in-secret"}

func newGateway(t *testing.T, in *instance) *gateway {
	t.Helper()
	g := &gateway{}
	g.fault.Store("")
	verifier, err := sigv4.New(gatewayCreds, "us-east-1", "execute-api")
	if err != nil {
		t.Fatal(err)
	}
	proxy := func(addr string, transport http.RoundTripper) *httputil.ReverseProxy {
		u := &url.URL{Scheme: "http", Host: addr}
		return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, Transport: transport}
	}
	resolver := proxy(in.resolver, nil)
	resolver.ModifyResponse = func(res *http.Response) error {
		if g.fault.Load() == "wrong-location" && res.StatusCode == http.StatusFound {
			res.Header.Set("Location", "https://example.org/somewhere-else")
		}
		return nil
	}
	g.resolver = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(g.delay.Load()))
		if g.fault.Load() == "500" {
			http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
			return
		}
		resolver.ServeHTTP(w, r)
	}))
	// Lazy: serve writes its pair when it starts, after the gateway exists.
	management := proxy(in.management, roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return in.credentials().Transport(nil, "us-east-1", "execute-api").RoundTrip(r)
	}))
	unsigned := proxy(in.management, nil)
	g.management = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && (r.URL.Path == "/docs" || r.URL.Path == "/openapi.yaml") {
			unsigned.ServeHTTP(w, r)
			return
		}
		if g.fault.Load() != "open" {
			if err := verifier.Verify(r); err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"message":"Forbidden"}`))
				return
			}
		}
		management.ServeHTTP(w, r)
	}))
	t.Cleanup(g.resolver.Close)
	t.Cleanup(g.management.Close)
	return g
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// awsEnv is the environment of a caller with AWS credentials and no Linoone pair:
// an empty data dir, no shared config, no instance metadata service.
func awsEnv(t *testing.T, in *instance) []string {
	return append(append([]string{}, in.env...),
		"LINOONE_DATA_DIR="+t.TempDir(),
		"AWS_ACCESS_KEY_ID="+gatewayCreds.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+gatewayCreds.SecretAccessKey,
		"AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true")
}

// terraformDir is an applied environment's directory as far as `terraform output`
// reads it: a state holding the two outputs.
func terraformDir(t *testing.T, g *gateway) string {
	t.Helper()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH: --from-terraform runs it")
	}
	dir := t.TempDir()
	state := map[string]any{"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "smoke-test", "resources": []any{},
		"outputs": map[string]any{
			"resolver_url":   map[string]string{"type": "string", "value": g.resolver.URL},
			"management_url": map[string]string{"type": "string", "value": g.management.URL},
		}}
	b, _ := json.Marshal(state)
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfstate"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSmokeThroughSigV4Gateway: behind a SigV4-checking stand-in for API Gateway,
// found through terraform outputs and signed by the AWS default credential chain,
// the smoke passes; a slow resolver moves its percentiles by the delay.
func TestSmokeThroughSigV4Gateway(t *testing.T) {
	in := newInstance(t)
	g := newGateway(t, in)
	in.start("LINOONE_RESOLVER_BASE_URL=" + g.resolver.URL)
	env := awsEnv(t, in)
	args := []string{"smoke", "--from-terraform", terraformDir(t, g), "--redirects", "30", "--issuances", "3", "--json"}

	stdout, stderr, code := runSmoke(t, env, args...)
	fast := smokeReport(t, stdout, stderr)
	if code != 0 || !fast.OK || !strings.Contains(fast.Signer, "AWS default credential chain") || fast.Target.Resolver != g.resolver.URL {
		t.Fatalf("smoke through the gateway: exit %d signer %q failed %v\n%s\n%s", code, fast.Signer, fast.Failed(), stdout, stderr)
	}

	const delay = 40 * time.Millisecond
	g.delay.Store(int64(delay))
	stdout, stderr, code = runSmoke(t, env, args...)
	slow := smokeReport(t, stdout, stderr)
	if code != 0 || !slow.OK {
		t.Fatalf("slow gateway: exit %d failed %v\n%s", code, slow.Failed(), stderr)
	}
	d := float64(delay.Milliseconds())
	for name, pair := range map[string][2]*smoke.Latency{
		"kept alive": {fast.Timings.RedirectKeptAlive, slow.Timings.RedirectKeptAlive},
		"fresh":      {fast.Timings.RedirectFresh, slow.Timings.RedirectFresh},
	} {
		f, s := pair[0], pair[1]
		if s.P50 < d || s.P99 < d || s.P50-f.P50 < d/2 {
			t.Errorf("redirects %s: p50 %.1f → %.1f, p99 %.1f → %.1f ms with %v added: the delay does not show", name, f.P50, s.P50, f.P99, s.P99, delay)
		}
	}
	if i := slow.Timings.Issuance; i.P50 >= d { // the management API was not slowed
		t.Errorf("issuance p50 %.1f ms: the resolver's delay leaked into it", i.P50)
	}
}

// TestSmokePlantedFaults: each broken endpoint exits 1 naming the check that saw it.
func TestSmokePlantedFaults(t *testing.T) {
	in := newInstance(t)
	g := newGateway(t, in)
	in.start("LINOONE_RESOLVER_BASE_URL=" + g.resolver.URL)
	env := awsEnv(t, in)
	for _, tt := range []struct {
		fault string
		want  []string
	}{
		{"wrong-location", []string{"redirect: GET " + g.resolver.URL, "302 to the wrong place", `Location "https://example.org/somewhere-else"`}},
		{"500", []string{"redirect: want 302", ": 500 "}},
		{"open", []string{"unsigned write refused: an unsigned POST " + g.management.URL + "/shorten was accepted", "must require SigV4"}},
	} {
		t.Run(tt.fault, func(t *testing.T) {
			g.fault.Store(tt.fault)
			defer g.fault.Store("")
			stdout, stderr, code := runSmoke(t, env, "smoke", "--resolver", g.resolver.URL, "--management", g.management.URL, "--redirects", "5", "--issuances", "1")
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(stdout, "FAILED:") || !strings.Contains(stdout, "FAIL  ") {
				t.Errorf("report does not say it failed:\n%s", stdout)
			}
		})
	}
}
