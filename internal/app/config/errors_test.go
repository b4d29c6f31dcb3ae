package config

import (
	"maps"
	"strings"
	"testing"
)

func TestReportsEveryBadVariable(t *testing.T) {
	tests := []struct {
		name string
		load func(func(string) string) (any, error)
		bad  map[string]string
	}{
		{"serve", loader(LoadServe), map[string]string{
			"LINOONE_RESOLVER_ADDR":              "nonsense",
			"LINOONE_MANAGEMENT_ADDR":            "127.0.0.1:99999",
			"LINOONE_PERSIST_ADDR":               "persist",
			"LINOONE_RESOLVER_BASE_URL":          "ftp://x",
			"LINOONE_PERSIST_URL":                "persist:8082",
			"LINOONE_PERSIST_INLINE_LITERALS":    "maybe",
			"LINOONE_PERSIST_TIMEOUT":            "2 hours",
			"LINOONE_PUBLISH_TIMEOUT":            "-1s",
			"LINOONE_REGION":                     "moon-1",
			"LINOONE_ENVIRONMENT":                "Prod!",
			"LINOONE_BUS_FAULT":                  "sometimes",
			"LINOONE_CONSUMER":                   "elsewhere",
			"LINOONE_BUS_SYNC":                   "never",
			"LINOONE_LOG_LEVEL":                  "loud",
			"LINOONE_RESOLVER_CACHE_SIZE":        "lots",
			"LINOONE_CLICK_BUFFER_BYTES":         "-1",
			"LINOONE_CLICK_LOG_FACTS_PER_SECOND": "many",
		}},
		{"consume", loader(LoadConsume), map[string]string{
			"LINOONE_PERSIST_URL": "persist:8082", "LINOONE_PERSIST_TIMEOUT": "0s", "LINOONE_LOG_LEVEL": "loud",
		}},
		{"replay", loader(LoadReplay), map[string]string{"LINOONE_REGION": "moon-1", "LINOONE_BUS_FAULT": "sometimes"}},
		{"shorten", loader(LoadShorten), map[string]string{"LINOONE_MANAGEMENT_ADDR": "nonsense", "LINOONE_REGION": "moon-1",
			"LINOONE_MANAGEMENT_URL": "http://producer:secret@127.0.0.1:8081"}},
		{"issue function", loader(LoadIssueFunction), map[string]string{
			"LINOONE_PERSIST_URL":       "persist:8082",
			"LINOONE_PERSIST_SIGV4":     "maybe",
			"LINOONE_RESOLVER_BASE_URL": "ftp://x",
			"LINOONE_LOG_LEVEL":         "loud",
		}},
		{"resolve function", loader(LoadResolveFunction), map[string]string{
			"LINOONE_EVENT_BUS":           "bus name with spaces",
			"LINOONE_CLICK_DLQ_URL":       "sqs://queue",
			"LINOONE_PERSIST_URL":         "persist:8082",
			"LINOONE_PUBLISH_TIMEOUT":     "2m",
			"LINOONE_DLQ_TIMEOUT":         "0s",
			"LINOONE_DENYLIST_REFRESH":    "1s",
			"LINOONE_RESOLVER_CACHE_SIZE": "10000001",
			"LINOONE_ENVIRONMENT":         "Prod!",
		}},
		{"replay function", loader(LoadReplayFunction), map[string]string{
			"LINOONE_EVENT_BUS": "bus name with spaces", "LINOONE_REGION": "moon-1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.load(env(tt.bad))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "configuration: ") {
				t.Errorf("error does not start with \"configuration: \": %v", err)
			}
			for name := range tt.bad {
				if !strings.Contains(err.Error(), name+":") {
					t.Errorf("error does not name %s:\n%v", name, err)
				}
			}
		})
	}
}

func TestFunctionRequirements(t *testing.T) {
	const (
		persistRequired = "LINOONE_PERSIST_URL: required"
		baseRequired    = "LINOONE_RESOLVER_BASE_URL: required"
		busRequired     = "LINOONE_EVENT_BUS: required"
		dlqRequired     = "LINOONE_CLICK_DLQ_URL: required"
	)
	tests := []struct {
		name    string
		load    func(func(string) string) (any, error)
		env     map[string]string
		want    []string // the requirements reported, all at once
		notWant []string
	}{
		// Issuing under a loopback placeholder would store short URLs no visitor can follow.
		{name: "issue needs persist and a base URL", load: loader(LoadIssueFunction), want: []string{persistRequired, baseRequired}, notWant: []string{busRequired, dlqRequired}},
		{name: "resolve needs persist, bus and dlq", load: loader(LoadResolveFunction), want: []string{persistRequired, busRequired, dlqRequired}, notWant: []string{baseRequired}},
		{name: "replay needs the bus only", load: loader(LoadReplayFunction), want: []string{busRequired}, notWant: []string{persistRequired, dlqRequired}},
		// A function reads nothing from SSM at start; a stack still naming the old
		// parameters is told what to do.
		{name: "SSM parameter names no longer satisfy persist and the base URL", load: loader(LoadIssueFunction),
			env:  map[string]string{"LINOONE_PERSIST_URL_PARAM": "/linoone/prod/persist-url", "LINOONE_RESOLVER_BASE_URL_PARAM": "/linoone/prod/base-url"},
			want: []string{persistRequired + "; LINOONE_PERSIST_URL_PARAM is no longer read", baseRequired + "; LINOONE_RESOLVER_BASE_URL_PARAM is no longer read"}},
		{name: "the variables satisfy them", load: loader(LoadIssueFunction),
			env: map[string]string{"LINOONE_PERSIST_URL": "https://persist.example", "LINOONE_RESOLVER_BASE_URL": "https://go.example"}},
		{name: "requirements and bad values together", load: loader(LoadResolveFunction),
			env:  map[string]string{"LINOONE_REGION": "moon-1", "LINOONE_PERSIST_URL": "http://persist"},
			want: []string{"LINOONE_REGION:", busRequired, dlqRequired}, notWant: []string{persistRequired}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.load(env(tt.env))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not report %q:\n%v", w, err)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error reports %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestNameBounds pins the lengths the patterns leave to code: an event bus name of 1
// to 256 characters, bare or in an ARN, and an environment of 1 to 32.
func TestNameBounds(t *testing.T) {
	const arn = "arn:aws:events:eu-west-1:123456789012:event-bus/"
	name := func(n int) string { return strings.Repeat("b", n) }
	tests := []struct {
		variable, value string
		ok              bool
	}{
		{"LINOONE_EVENT_BUS", name(1), true},
		{"LINOONE_EVENT_BUS", name(256), true},
		{"LINOONE_EVENT_BUS", name(257), false},
		{"LINOONE_EVENT_BUS", arn + name(256), true},
		{"LINOONE_EVENT_BUS", arn + name(257), false},
		{"LINOONE_EVENT_BUS", arn, false},
		{"LINOONE_EVENT_BUS", "arn:aws:events:eu-west-1:12345678901:event-bus/b", false},
		{"LINOONE_EVENT_BUS", "arn:aws-cn:events:cn-north-1:123456789012:event-bus/a.b-c_d/e", true},
		{"LINOONE_ENVIRONMENT", "p", true},
		{"LINOONE_ENVIRONMENT", "p" + strings.Repeat("-", 31), true},
		{"LINOONE_ENVIRONMENT", strings.Repeat("p", 33), false},
		{"LINOONE_ENVIRONMENT", "-prod", false},
	}
	for _, tt := range tests {
		_, err := LoadReplayFunction(env(map[string]string{"LINOONE_EVENT_BUS": "bus", tt.variable: tt.value}))
		if got := err == nil; got != tt.ok {
			t.Errorf("%s of %d characters %.60q: accepted %v, want %v (%v)", tt.variable, len(tt.value), tt.value, got, tt.ok, err)
		}
	}
}

// TestAddressesAndURLsThatNameNoOne: short URLs carry the resolver base URL for good,
// and the clients dial what the URL settings name, so a base URL or a Persist URL
// that names no host, or port 0, is refused when the process starts.
func TestAddressesAndURLsThatNameNoOne(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string // "" for no error
	}{
		{map[string]string{"LINOONE_RESOLVER_ADDR": ":8080"}, "LINOONE_RESOLVER_BASE_URL: required"},
		{map[string]string{"LINOONE_RESOLVER_ADDR": "0.0.0.0:8080"}, "LINOONE_RESOLVER_BASE_URL: required"},
		{map[string]string{"LINOONE_RESOLVER_ADDR": "[::]:8080"}, "LINOONE_RESOLVER_BASE_URL: required"},
		{map[string]string{"LINOONE_RESOLVER_ADDR": ":8080", "LINOONE_RESOLVER_BASE_URL": "https://go.example"}, ""},
		{map[string]string{"LINOONE_RESOLVER_ADDR": "127.0.0.1:0"}, "LINOONE_RESOLVER_ADDR:"},
		{map[string]string{"LINOONE_PERSIST_ADDR": "127.0.0.1:0"}, "LINOONE_PERSIST_ADDR:"},
		{map[string]string{"LINOONE_RESOLVER_BASE_URL": "http://:8080"}, "LINOONE_RESOLVER_BASE_URL:"},
		{map[string]string{"LINOONE_RESOLVER_BASE_URL": "https://go.example#"}, "LINOONE_RESOLVER_BASE_URL:"},
		{map[string]string{"LINOONE_PERSIST_URL": "http://"}, "LINOONE_PERSIST_URL:"},
		{map[string]string{"LINOONE_PERSIST_URL": "http://persist.example?x"}, "LINOONE_PERSIST_URL:"},
		{map[string]string{"LINOONE_PERSIST_URL": "https://persist.example/prod"}, ""},
	} {
		_, err := LoadServe(env(tt.env))
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: %v, want %q", tt.env, err, tt.want)
		}
	}
}

// TestBadURLMessageMasksUserinfo: a service URL with userinfo is refused, and the
// message, which goes to a terminal or a log, must not carry the password (nor a
// token given as the user name).
func TestBadURLMessageMasksUserinfo(t *testing.T) {
	for _, tt := range []struct {
		value, want string
	}{
		{"https://admin:PASS@persist.example/prod", `"https://xxxxx@persist.example/prod"`},
		{"https://PASS@persist.example", `"https://xxxxx@persist.example"`},
		{"http://admin:PASS@[::1", `"http://xxxxx@[::1"`}, // does not parse
		{"persist:8082", `"persist:8082"`},
	} {
		_, err := LoadServe(env(map[string]string{"LINOONE_PERSIST_URL": tt.value}))
		if err == nil || !strings.Contains(err.Error(), "LINOONE_PERSIST_URL: "+tt.want+" is not an http(s) URL") || strings.Contains(err.Error(), "PASS") {
			t.Errorf("%s: %v, want it shown as %s", tt.value, err, tt.want)
		}
		// The resolver base URL is checked by the core's rule, whose error quotes it.
		_, err = LoadServe(env(map[string]string{"LINOONE_RESOLVER_BASE_URL": tt.value}))
		if err == nil || strings.Contains(err.Error(), "PASS") {
			t.Errorf("LINOONE_RESOLVER_BASE_URL %s: %v, want it refused with its userinfo masked", tt.value, err)
		}
		_, err = LoadIssueFunction(env(map[string]string{"LINOONE_RESOLVER_BASE_URL": tt.value}))
		if err == nil || strings.Contains(err.Error(), "PASS") {
			t.Errorf("issue function, LINOONE_RESOLVER_BASE_URL %s: %v, want it refused with its userinfo masked", tt.value, err)
		}
	}
}

// TestVisitorIPFrom: the resolve function trusts CloudFront-Viewer-Address only
// with the cdn option's origin secret, which is required then, refused otherwise,
// and never echoed in an error.
func TestVisitorIPFrom(t *testing.T) {
	const secret = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL" // 48, as Terraform draws
	required := map[string]string{"LINOONE_PERSIST_URL": "http://persist", "LINOONE_EVENT_BUS": "bus", "LINOONE_CLICK_DLQ_URL": "https://queue"}
	for _, tt := range []struct {
		name       string
		env        map[string]string
		cloudFront bool
		wantErr    string // "" = loads
	}{
		{name: "default: the source address", env: nil},
		{name: "source", env: map[string]string{"LINOONE_VISITOR_IP_FROM": "source"}},
		{name: "cloudfront with its secret", env: map[string]string{"LINOONE_VISITOR_IP_FROM": "cloudfront", "LINOONE_ORIGIN_VERIFY_SECRET": secret}, cloudFront: true},
		{name: "cloudfront without a secret", env: map[string]string{"LINOONE_VISITOR_IP_FROM": "cloudfront"},
			wantErr: "LINOONE_ORIGIN_VERIFY_SECRET: required with LINOONE_VISITOR_IP_FROM=cloudfront, at least 32 bytes (0 given)"},
		{name: "cloudfront with a short secret", env: map[string]string{"LINOONE_VISITOR_IP_FROM": "cloudfront", "LINOONE_ORIGIN_VERIFY_SECRET": "short-secret"},
			wantErr: "(12 given)"},
		{name: "a secret without cloudfront", env: map[string]string{"LINOONE_ORIGIN_VERIFY_SECRET": secret},
			wantErr: "LINOONE_ORIGIN_VERIFY_SECRET: set, but LINOONE_VISITOR_IP_FROM is not cloudfront"},
		{name: "unknown source", env: map[string]string{"LINOONE_VISITOR_IP_FROM": "x-forwarded-for"},
			wantErr: `LINOONE_VISITOR_IP_FROM: "x-forwarded-for" is not source or cloudfront`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vars := maps.Clone(required)
			maps.Copy(vars, tt.env)
			c, err := LoadResolveFunction(env(vars))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "short-secret") {
					t.Errorf("the error echoes the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.VisitorIPFromCloudFront != tt.cloudFront || c.OriginVerifySecret != tt.env["LINOONE_ORIGIN_VERIFY_SECRET"] {
				t.Errorf("cloudfront %v, secret set %v", c.VisitorIPFromCloudFront, c.OriginVerifySecret != "")
			}
		})
	}
}
