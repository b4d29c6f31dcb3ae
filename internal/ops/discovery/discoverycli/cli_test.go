package discoverycli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/ops/discovery"
	"github.com/linoone/linoone/internal/ops/discovery/discoverytest"
	"github.com/linoone/linoone/internal/ops/discovery/dnscheck"
)

const testdata = "../awsfacts/testdata"

// Route 53's name servers for example.com, as the recorded NS record set
// lists them.
var route53NS = []string{"ns-1536.awsdns-00.co.uk", "ns-0.awsdns-00.com", "ns-1024.awsdns-00.org", "ns-512.awsdns-00.net"}

// scenario is an account (recorded AWS answers) and public DNS.
type scenario struct {
	aws map[string]string
	dns discoverytest.DNSConfig
}

// account answers shared by the scenarios: the resolver API, the shared bus,
// certificates.
func account(extra map[string]string) map[string]string {
	m := map[string]string{
		"apigateway GetApi id=a1b2c3d4e5":                     "apigatewayv2/get-api.http",
		"eventbridge DescribeEventBus name=shared-engagement": "eventbridge/describe-event-bus.http",
		"acm ListCertificates region=us-east-1":               "acm/list-certificates-us-east-1.http",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// route53Alias: example.com is a delegated Route 53 zone with an alias from
// go.example.com to the API Gateway domain name mapped to the resolver.
func route53Alias() scenario {
	return scenario{
		aws: account(map[string]string{
			"route53 ListHostedZonesByName dnsname=go.example.com":                        "route53/list-hosted-zones-by-name-go.example.com.http",
			"route53 ListHostedZonesByName dnsname=example.com":                           "route53/list-hosted-zones-by-name-example.com.http",
			"route53 ListResourceRecordSets zone=Z0EXAMPLE4KQ2T name=example.com type=NS": "route53/list-resource-record-sets-example.com-ns.http",
			"route53 ListResourceRecordSets zone=Z0EXAMPLE4KQ2T name=go.example.com":      "route53/list-resource-record-sets-go.example.com-alias-apigw.http",
			"cloudfront ListDistributions":                                                "cloudfront/list-distributions.http",
			"apigateway GetDomainNames":                                                   "apigatewayv2/get-domain-names.http",
			"apigateway GetApiMappings domain=go.example.com":                             "apigatewayv2/get-api-mappings-go.example.com.http",
		}),
		dns: discoverytest.DNSConfig{
			Zones: []discoverytest.Zone{{Name: "example.com", NameServers: route53NS}},
			Records: []string{
				"go.example.com. 60 IN A 192.0.2.10",
				"go.example.com. 60 IN A 192.0.2.11",
				"d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com. 60 IN A 192.0.2.10",
				"d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com. 60 IN A 192.0.2.11",
			},
		},
	}
}

// cloudFrontSite: example.com's DNS is elsewhere; go.example.com is a CNAME
// to a CloudFront distribution of the account.
func cloudFrontSite(distributions string) scenario {
	return scenario{
		aws: account(map[string]string{"cloudfront ListDistributions": distributions}),
		dns: discoverytest.DNSConfig{
			Zones: []discoverytest.Zone{
				{Name: "example.com", NameServers: []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}},
				{Name: "cloudfront.net", NameServers: []string{"ns-130.awsdns-16.org"}},
			},
			Records: []string{
				"go.example.com. 300 IN CNAME d111111abcdef8.cloudfront.net.",
				"d111111abcdef8.cloudfront.net. 60 IN A 198.51.100.10",
			},
		},
	}
}

// externalDNS: example.com's DNS is elsewhere, go.example.com does not exist
// yet, the API Gateway domain name does.
func externalDNS() scenario {
	return scenario{
		aws: account(map[string]string{
			"cloudfront ListDistributions":                    "cloudfront/list-distributions-empty.http",
			"apigateway GetDomainNames":                       "apigatewayv2/get-domain-names.http",
			"apigateway GetApiMappings domain=go.example.com": "apigatewayv2/get-api-mappings-go.example.com.http",
		}),
		dns: discoverytest.DNSConfig{
			Zones:   []discoverytest.Zone{{Name: "example.com", NameServers: []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}}},
			Records: []string{"www.example.com. 300 IN A 203.0.113.7", "d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com. 60 IN A 192.0.2.10"},
		},
	}
}

type harness struct {
	aws    *discoverytest.AWS
	dns    *discoverytest.DNSServer
	env    map[string]string
	prober prober
}

func start(t *testing.T, s scenario) *harness {
	t.Helper()
	h := &harness{aws: discoverytest.StartAWS(t, testdata, s.aws), dns: discoverytest.StartDNS(t, s.dns)}
	h.env = map[string]string{
		EndpointEnv:             h.aws.URL,
		"AWS_ACCESS_KEY_ID":     "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"AWS_MAX_ATTEMPTS":      "1",
	}
	return h
}

// run calls Main (or run with an injected prober) and returns exit code,
// stdout and stderr.
func (h *harness) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return h.env[k] }
	var code int
	if h.prober != nil {
		code = run(context.Background(), args, getenv, &stdout, &stderr, h.prober)
	} else {
		code = Main(context.Background(), args, getenv, &stdout, &stderr)
	}
	return code, stdout.String(), stderr.String()
}

func (h *harness) args(extra ...string) []string {
	return append([]string{"--region", "us-east-1", "--dns-server", h.dns.Addr, "--json"}, extra...)
}

// output is the JSON output, loosely typed to check exact key sets.
type output struct {
	Decision        string         `json:"decision"`
	ResolverBaseURL string         `json:"resolver_base_url"`
	APIEndpoint     string         `json:"api_endpoint"`
	ActionRequired  bool           `json:"action_required"`
	Actions         []string       `json:"actions"`
	Evidence        []string       `json:"evidence"`
	Record          map[string]any `json:"record"`
	CloudFront      map[string]any `json:"cloudfront"`
	Bus             map[string]any `json:"bus"`
	TerraformVars   map[string]any `json:"terraform_vars"`
}

func decode(t *testing.T, stdout string) output {
	t.Helper()
	var o output
	if err := json.Unmarshal([]byte(stdout), &o); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	return o
}

const goCertARN = "arn:aws:acm:us-east-1:123456789012:certificate/0b3e7a52-6c1d-4d8e-9f2a-5b7c8d9e0f1a"

func TestMainScenarios(t *testing.T) {
	tests := []struct {
		name     string
		scenario scenario
		args     []string
		code     int
		decision string
		baseURL  string
		vars     map[string]any
		check    func(t *testing.T, o output)
	}{
		{
			name:     "use-custom-domain: route 53 alias to the api gateway domain",
			scenario: route53Alias(),
			args:     []string{"--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5", "--bus", "shared-engagement"},
			code:     ExitReady,
			decision: "use-custom-domain",
			baseURL:  "https://go.example.com",
			vars: map[string]any{
				"custom_domain_name": "go.example.com", "custom_domain_routable": true, "custom_domain_certificate_arn": goCertARN,
				"event_bus_name": "shared-engagement", "create_bus": false,
			},
		},
		{
			name:     "add-cloudfront-behavior: cname to a distribution of the account",
			scenario: cloudFrontSite("cloudfront/list-distributions.http"),
			args:     []string{"--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5"},
			code:     ExitActionRequired,
			decision: "add-cloudfront-behavior",
			baseURL:  "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
			vars:     map[string]any{"custom_domain_name": "go.example.com", "custom_domain_routable": false, "custom_domain_certificate_arn": ""},
			check: func(t *testing.T, o output) {
				if o.CloudFront["distribution_id"] != "E2QWRUHAPOMQZL" || o.CloudFront["path_pattern"] != "/??????????" || o.CloudFront["origin_domain"] != "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com" {
					t.Errorf("cloudfront = %v", o.CloudFront)
				}
			},
		},
		{
			name:     "use-custom-domain: the distribution already routes short links to the resolver",
			scenario: cloudFrontSite("cloudfront/list-distributions-with-resolver-behavior.http"),
			args:     []string{"--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5"},
			code:     ExitReady,
			decision: "use-custom-domain",
			baseURL:  "https://go.example.com",
			vars:     map[string]any{"custom_domain_name": "go.example.com", "custom_domain_routable": true, "custom_domain_certificate_arn": ""},
		},
		{
			name:     "external-dns-action-required: dns outside the account",
			scenario: externalDNS(),
			args:     []string{"--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5", "--bus", "arn:aws:events:us-east-1:123456789012:event-bus/shared-engagement"},
			code:     ExitActionRequired,
			decision: "external-dns-action-required",
			baseURL:  "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
			vars: map[string]any{
				"custom_domain_name": "go.example.com", "custom_domain_routable": false, "custom_domain_certificate_arn": goCertARN,
			},
			check: func(t *testing.T, o output) {
				want := map[string]any{"zone": "example.com", "name": "go.example.com", "type": "CNAME", "value": "d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com", "ttl": float64(300)}
				if diff := cmp.Diff(want, o.Record); diff != "" {
					t.Errorf("record (-want +got):\n%s", diff)
				}
				// The bus ARN was not answered by the fake: it is missing,
				// which is a second action and leaves the bus variables out.
				if o.Bus["status"] != "missing" || len(o.Actions) != 2 {
					t.Errorf("bus = %v, actions = %q", o.Bus, o.Actions)
				}
			},
		},
		{
			name:     "use-api-endpoint: no custom domain",
			scenario: externalDNS(),
			args:     []string{"--resolver-api-id", "a1b2c3d4e5", "--bus", "shared-engagement"},
			code:     ExitReady,
			decision: "use-api-endpoint",
			baseURL:  "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
			vars: map[string]any{
				"custom_domain_name": "", "custom_domain_routable": false, "custom_domain_certificate_arn": "",
				"event_bus_name": "shared-engagement", "create_bus": false,
			},
		},
		{
			name:     "bus missing: action required",
			scenario: scenario{aws: account(map[string]string{"eventbridge DescribeEventBus name=shared-engagement": "eventbridge/describe-event-bus-not-found.http"})},
			args:     []string{"--resolver-api-id", "a1b2c3d4e5", "--bus", "shared-engagement"},
			code:     ExitActionRequired,
			decision: "use-api-endpoint",
			baseURL:  "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
			vars:     map[string]any{"custom_domain_name": "", "custom_domain_routable": false, "custom_domain_certificate_arn": ""},
		},
		{
			name:     "bus missing in a sandbox: the stack creates it",
			scenario: scenario{aws: account(nil)},
			args:     []string{"--bus", "linoone-sandbox", "--sandbox"},
			code:     ExitReady,
			decision: "use-api-endpoint",
			baseURL:  "",
			vars: map[string]any{
				"custom_domain_name": "", "custom_domain_routable": false, "custom_domain_certificate_arn": "",
				"event_bus_name": "linoone-sandbox", "create_bus": true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, tt.scenario)
			code, stdout, stderr := h.run(t, h.args(tt.args...)...)
			if code != tt.code || stderr != "" {
				t.Fatalf("exit %d (stderr %q), want %d\n%s", code, stderr, tt.code, stdout)
			}
			o := decode(t, stdout)
			if o.Decision != tt.decision || o.ResolverBaseURL != tt.baseURL || o.ActionRequired != (tt.code == ExitActionRequired) {
				t.Errorf("decision %s, base URL %q, action_required %v; want %s, %q\nevidence: %q\nactions: %q", o.Decision, o.ResolverBaseURL, o.ActionRequired, tt.decision, tt.baseURL, o.Evidence, o.Actions)
			}
			if diff := cmp.Diff(tt.vars, o.TerraformVars); diff != "" {
				t.Errorf("terraform_vars (-want +got):\n%s", diff)
			}
			if tt.check != nil {
				tt.check(t, o)
			}
			for _, r := range h.aws.Requests() {
				if f := strings.Fields(r.Operation); len(f) != 2 || !(strings.HasPrefix(f[1], "List") || strings.HasPrefix(f[1], "Get") || strings.HasPrefix(f[1], "Describe")) {
					t.Errorf("discovery sent a non-read request %q", r.Key)
				}
			}
		})
	}
}

// tlsResolver is an HTTPS server answering like the resolver, and a prober
// that reaches it for any host.
func tlsResolver(t *testing.T, status int) prober {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Apigw-Requestid", "Qx1YzFkLoAMEb0w=")
		switch status {
		case http.StatusFound:
			w.Header().Set("Location", "https://target.example.org/landing")
		case http.StatusNotFound: // the resolver's unknown token
			w.Header().Set("Content-Type", "application/problem+json")
		case http.StatusGone: // stands for API Gateway's own 404: a route missed
			w.Header().Set("Content-Type", "application/json")
			status = http.StatusNotFound
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	return dnscheck.NewProber(&http.Client{Transport: tr})
}

func TestMainProbe(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		code     int
		decision string
		evidence string
	}{
		{"resolver redirect proves the domain", http.StatusFound, ExitReady, "use-custom-domain", "answered 302 Location https://target.example.org/landing, apigw-requestid Qx1YzFkLoAMEb0w=: the resolver"},
		{"resolver 404 proves the domain", http.StatusNotFound, ExitReady, "use-custom-domain", "answered 404"},
		{"forbidden is not the resolver", http.StatusForbidden, ExitActionRequired, "use-api-endpoint", "answered 403"},
		{"a route's 404 is not the resolver", http.StatusGone, ExitActionRequired, "use-api-endpoint", "not the resolver's problem+json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, route53Alias())
			h.prober = tlsResolver(t, tt.status)
			code, stdout, stderr := h.run(t, h.args("--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5", "--probe-token", "7BTadEDkJ8")...)
			if code != tt.code || stderr != "" {
				t.Fatalf("exit %d (stderr %q), want %d\n%s", code, stderr, tt.code, stdout)
			}
			o := decode(t, stdout)
			if o.Decision != tt.decision || !containsPart(o.Evidence, tt.evidence) || !containsPart(o.Evidence, "GET https://go.example.com/7BTadEDkJ8") {
				t.Errorf("decision %s, evidence %q; want %s with %q", o.Decision, o.Evidence, tt.decision, tt.evidence)
			}
		})
	}
}

func TestMainProbeSkippedWhenTheDomainDoesNotResolve(t *testing.T) {
	h := start(t, externalDNS())
	h.prober = proberFunc(func(context.Context, string) discovery.Probe {
		t.Error("probe sent to a domain without an address")
		return discovery.Probe{}
	})
	code, stdout, _ := h.run(t, h.args("--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5", "--probe-token", "7BTadEDkJ8")...)
	if code != ExitActionRequired || decode(t, stdout).Decision != "external-dns-action-required" {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// TestMainProbeNotSentToAPrivateAddress: a domain whose public DNS answers a
// loopback or private address is not probed: what answers there proves nothing
// about the public, and discover sends no request into private networks.
func TestMainProbeNotSentToAPrivateAddress(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "10.1.2.3", "169.254.169.254"} {
		sc := route53Alias()
		sc.dns.Records = []string{"go.example.com. 60 IN A " + addr,
			"d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com. 60 IN A " + addr}
		h := start(t, sc)
		h.prober = proberFunc(func(context.Context, string) discovery.Probe {
			t.Errorf("probe sent to %s", addr)
			return discovery.Probe{}
		})
		code, stdout, _ := h.run(t, h.args("--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5", "--probe-token", "7BTadEDkJ8")...)
		if o := decode(t, stdout); code != ExitActionRequired || !containsPart(o.Evidence, "which is not a public address") {
			t.Errorf("%s: exit %d, evidence %q", addr, code, o.Evidence)
		}
	}
}

type proberFunc func(context.Context, string) discovery.Probe

func (f proberFunc) Probe(ctx context.Context, url, _ string) discovery.Probe { return f(ctx, url) }

func TestMainHumanReport(t *testing.T) {
	h := start(t, externalDNS())
	args := []string{"--region", "us-east-1", "--dns-server", h.dns.Addr, "--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5"}
	code, stdout, stderr := h.run(t, args...)
	if code != ExitActionRequired || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"decision: external-dns-action-required",
		"resolver base URL: https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
		"DNS record needed in zone example.com:",
		"go.example.com. 300 IN CNAME d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com.",
		"ACTION REQUIRED",
		`custom_domain_name            = "go.example.com"`,
		"custom_domain_routable        = false",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

// TestMainReportWriteFails: a report that cannot be written (a full disk under
// `> report.txt`) is no verdict, so the exit is ExitError, not ready or action
// required.
func TestMainReportWriteFails(t *testing.T) {
	h := start(t, externalDNS())
	args := []string{"--region", "us-east-1", "--dns-server", h.dns.Addr, "--domain", "go.example.com", "--resolver-api-id", "a1b2c3d4e5"}
	var stderr bytes.Buffer
	code := Main(context.Background(), args, func(k string) string { return h.env[k] }, failingWriter{}, &stderr)
	if code != ExitError || !strings.Contains(stderr.String(), "write report: no space left on device") {
		t.Errorf("exit %d, stderr %q; want %d and the write error", code, stderr.String(), ExitError)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func TestMainErrors(t *testing.T) {
	tests := []struct {
		name     string
		scenario scenario
		env      map[string]string
		args     []string
		stderr   string
	}{
		{
			name:     "route 53 access denied",
			scenario: scenario{aws: account(map[string]string{"route53 ListHostedZonesByName": "route53/error-access-denied.http"})},
			args:     []string{"--domain", "go.example.com"},
			stderr:   "linoone discover: route53 ListHostedZonesByName: access denied: AccessDenied: User: arn:aws:iam::123456789012:user/discover is not authorized",
		},
		{
			name:     "eventbridge access denied",
			scenario: scenario{aws: account(map[string]string{"eventbridge DescribeEventBus name=shared-engagement": "eventbridge/error-access-denied.http"})},
			args:     []string{"--bus", "shared-engagement"},
			stderr:   "linoone discover: eventbridge DescribeEventBus: access denied: AccessDeniedException:",
		},
		{
			name:     "resolver api not found",
			scenario: scenario{aws: map[string]string{}},
			args:     []string{"--resolver-api-id", "a1b2c3d4e5"},
			stderr:   "linoone discover: apigateway GetApi: resolver api not found: no API a1b2c3d4e5 in us-east-1",
		},
		{
			name:     "aws endpoint unreachable",
			scenario: scenario{aws: account(nil)},
			env:      map[string]string{EndpointEnv: "closed"},
			args:     []string{"--resolver-api-id", "a1b2c3d4e5"},
			stderr:   "linoone discover: apigateway GetApi: endpoint unreachable: dial tcp 127.0.0.1:",
		},
		{
			name:     "dns server unreachable",
			scenario: scenario{aws: account(nil)},
			args:     []string{"--domain", "go.example.com", "--dns-server", "closed"},
			stderr:   "linoone discover: public dns: query go.example.com A at 127.0.0.1:",
		},
		{
			name:     "dns server failure",
			scenario: scenario{aws: account(nil), dns: discoverytest.DNSConfig{ServFail: []string{"go.example.com"}}},
			args:     []string{"--domain", "go.example.com"},
			stderr:   ": dns server failure: SERVFAIL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, tt.scenario)
			for k, v := range tt.env {
				if v == "closed" {
					v = discoverytest.ClosedURL(t)
				}
				h.env[k] = v
			}
			args := h.args(tt.args...)
			for i, a := range args {
				if a == "closed" {
					args[i] = discoverytest.ClosedUDPAddr(t)
				}
			}
			code, stdout, stderr := h.run(t, args...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("stderr = %q, want one line containing %q; stdout %q", stderr, tt.stderr, stdout)
			}
		})
	}
}

func TestMainBadInput(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		stderr []string
	}{
		{name: "malformed domain", args: []string{"--region", "us-east-1", "--domain", "go_x.example.com"}, stderr: []string{`invalid domain "go_x.example.com": label "go_x"`}},
		{name: "domain with scheme", args: []string{"--region", "us-east-1", "--domain", "https://go.example.com/"}, stderr: []string{"host name only"}},
		{name: "single label domain", args: []string{"--region", "us-east-1", "--domain", "localhost"}, stderr: []string{"needs at least two labels"}},
		{name: "unknown region", args: []string{"--region", "us-central-7"}, stderr: []string{`unknown aws region "us-central-7"`}},
		{name: "missing region", args: []string{"--domain", "go.example.com"}, stderr: []string{"--region is required"}},
		{name: "bad bus arn", args: []string{"--region", "us-east-1", "--bus", "arn:aws:events:us-east-1:42:event-bus/x"}, stderr: []string{"invalid event bus"}},
		{name: "bus in another region", args: []string{"--region", "us-east-1", "--bus", "arn:aws:events:eu-west-1:123456789012:event-bus/x"}, stderr: []string{"the bus is in eu-west-1, the resolver in us-east-1"}},
		{name: "bad api id", args: []string{"--region", "us-east-1", "--resolver-api-id", "ABC"}, stderr: []string{`invalid resolver api id "ABC"`}},
		{name: "bad token", args: []string{"--region", "us-east-1", "--domain", "go.example.com", "--probe-token", "short"}, stderr: []string{`invalid probe token "short"`}},
		{name: "token without domain", args: []string{"--region", "us-east-1", "--probe-token", "7BTadEDkJ8"}, stderr: []string{"--probe-token needs --domain"}},
		{name: "bad prefix", args: []string{"--region", "us-east-1", "--path-prefix", "a/b"}, stderr: []string{"invalid path prefix"}},
		{name: "sandbox without bus", args: []string{"--region", "us-east-1", "--sandbox"}, stderr: []string{"--sandbox needs --bus"}},
		{name: "bad dns server", args: []string{"--region", "us-east-1", "--dns-server", "localhost"}, stderr: []string{`invalid dns server "localhost"`}},
		{name: "unknown flag", args: []string{"--region", "us-east-1", "--zone", "x"}, stderr: []string{"usage: flag provided but not defined: -zone (see --help)"}},
		{name: "positional argument", args: []string{"--region", "us-east-1", "go.example.com"}, stderr: []string{`unexpected argument "go.example.com"`}},
		{name: "bad endpoint url", args: []string{"--region", "us-east-1"}, env: map[string]string{EndpointEnv: "localhost:4566"}, stderr: []string{EndpointEnv + `="localhost:4566" is not an http(s) URL`}},
		{name: "bad max attempts", args: []string{"--region", "us-east-1"}, env: map[string]string{"AWS_MAX_ATTEMPTS": "many"}, stderr: []string{`AWS_MAX_ATTEMPTS="many"`}},
		{
			name:   "every problem at once",
			args:   []string{"--region", "mars-1", "--domain", "-x.example.com", "--resolver-api-id", "x"},
			stderr: []string{"unknown aws region", "invalid domain", "invalid resolver api id"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, scenario{})
			for k, v := range tt.env {
				h.env[k] = v
			}
			code, stdout, stderr := h.run(t, tt.args...)
			if code != ExitError || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want %d and no output", code, stdout, ExitError)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != len(tt.stderr) {
				t.Errorf("stderr has %d lines, want %d:\n%s", len(lines), len(tt.stderr), stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not contain %q", stderr, want)
				}
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "linoone discover: ") {
					t.Errorf("stderr line %q lacks the command prefix", l)
				}
			}
			if n := len(h.aws.Requests()); n != 0 {
				t.Errorf("%d AWS requests made with bad input", n)
			}
		})
	}
}

func TestMainHelp(t *testing.T) {
	h := start(t, scenario{})
	for _, args := range [][]string{{"--help"}, {"discover", "-h"}} {
		code, stdout, stderr := h.run(t, args...)
		if code != ExitReady || !strings.HasPrefix(stdout, "usage: linoone discover") || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

func containsPart(lines []string, part string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, part) })
}
