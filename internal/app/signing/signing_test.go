package signing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// chainEnv puts the AWS default chain's credentials in the environment (none with
// an empty keyID) and keeps it from reading shared files or instance metadata.
func chainEnv(t *testing.T, keyID, session string) {
	t.Helper()
	secret := ""
	if keyID != "" {
		secret = "chain-secret"
	}
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": keyID, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": session,
		"AWS_REGION": "ap-south-1", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:9",
	} {
		t.Setenv(k, v)
	}
}

// served is a data dir holding the pair serve writes.
func served(t *testing.T) (dir string, creds sigv4.Credentials) {
	t.Helper()
	dir = t.TempDir()
	creds, _, _, err := sigv4.LoadOrCreate(dir, sigv4.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, creds
}

// TestOrder: the Linoone pair of the environment first, then serve's pair for
// the configured API or one on this machine, then the AWS default chain.
func TestOrder(t *testing.T) {
	chainEnv(t, "AKIDFROMTHECHAIN", "chain-session")
	dir, pair := served(t)
	envPair := sigv4.Credentials{AccessKeyID: "AKIDLINOONE", SecretAccessKey: "linoone-env-secret"}
	local := config.Shorten{DataDir: dir, Region: "us-east-1", ManagementURL: "http://127.0.0.1:8081"}
	withEnv := local
	withEnv.Credentials = envPair
	empty := local
	empty.DataDir = t.TempDir()
	for _, tt := range []struct {
		name     string
		cfg      config.Shorten
		endpoint string
		keyID    string
		source   string
		region   string
	}{
		{"env pair, deployed", withEnv, "https://m.execute-api.eu-west-1.amazonaws.com/", "AKIDLINOONE", "LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY", "eu-west-1"},
		{"env pair, local", withEnv, "", "AKIDLINOONE", "LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY", "us-east-1"},
		{"serve's pair, configured API", local, "", pair.AccessKeyID, filepath.Join(dir, sigv4.CredentialsFile), "us-east-1"},
		{"serve's pair, API on this machine", local, "http://localhost:9999", pair.AccessKeyID, filepath.Join(dir, sigv4.CredentialsFile), "us-east-1"},
		{"the chain, remote despite a pair served", local, "https://m.example.com", "AKIDFROMTHECHAIN", "the AWS default credential chain (EnvConfigCredentials)", "ap-south-1"},
		{"the chain, no pair served", empty, "http://127.0.0.1:8081", "AKIDFROMTHECHAIN", "the AWS default credential chain", "ap-south-1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Resolve(context.Background(), Request{Endpoint: tt.endpoint, Config: tt.cfg})
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.Provider.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if c.AccessKeyID != tt.keyID || !strings.Contains(s.Source, tt.source) || s.Region != tt.region {
				t.Errorf("key %s source %q region %s, want %s %q %s", c.AccessKeyID, s.Source, s.Region, tt.keyID, tt.source, tt.region)
			}
			want := "access key " + tt.keyID[:8] + "… from " + s.Source
			if s.Identity != want || strings.Contains(s.Identity, tt.keyID) || strings.Contains(s.Identity, c.SecretAccessKey) {
				t.Errorf("identity %q, want %q: the key's prefix, never the whole key or the secret", s.Identity, want)
			}
			if base := strings.TrimRight(tt.endpoint, "/"); base != "" && s.Base != base || tt.endpoint == "" && s.Base != tt.cfg.ManagementURL {
				t.Errorf("base %q", s.Base)
			}
		})
	}
}

// TestRegion: a region given wins over the one an execute-api host names, which
// wins over the configuration's.
func TestRegion(t *testing.T) {
	dir, _ := served(t)
	cfg := config.Shorten{DataDir: dir, Region: "us-east-1", Credentials: sigv4.Credentials{AccessKeyID: "AKIDLINOONE", SecretAccessKey: "s"}}
	s, err := Resolve(context.Background(), Request{Endpoint: "https://m.execute-api.eu-west-1.amazonaws.com", Region: "eu-north-1", Config: cfg})
	if err != nil || s.Region != "eu-north-1" {
		t.Errorf("region %q %v, want the one given", s.Region, err)
	}
	for in, want := range map[string]string{
		"https://abc123.execute-api.eu-west-1.amazonaws.com":     "eu-west-1",
		"https://abc123.execute-api.cn-north-1.amazonaws.com.cn": "cn-north-1",
		"https://links.example.com":                              "",
		"http://127.0.0.1:8081":                                  "",
	} {
		if got := RegionOf(in); got != want {
			t.Errorf("RegionOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMissingCredentials: each refusal says what to set or start.
func TestMissingCredentials(t *testing.T) {
	chainEnv(t, "", "")
	dir := t.TempDir()
	cfg := config.Shorten{DataDir: dir, Region: "us-east-1", ManagementURL: "http://127.0.0.1:8081"}
	for _, tt := range []struct {
		name     string
		cfg      config.Shorten
		endpoint string
		want     []string
	}{
		{"configured API, serve never started", cfg, "",
			[]string{"no credentials", "LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY", "start `linoone serve` with the same LINOONE_DATA_DIR (" + dir + ")"}},
		{"API on this machine, no pair, no AWS credentials", cfg, "http://127.0.0.1:8081",
			[]string{"no credentials to sign the calls to http://127.0.0.1:8081", "LINOONE_ACCESS_KEY_ID", "start `linoone serve`", "AWS_PROFILE"}},
		{"deployed API, no AWS credentials", cfg, "https://m.execute-api.eu-west-1.amazonaws.com",
			[]string{"no credentials to sign the calls to https://m.execute-api", "LINOONE_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID, AWS_PROFILE, SSO"}},
		{"half a Linoone pair", config.Shorten{DataDir: dir, Credentials: sigv4.Credentials{AccessKeyID: "AKIDLINOONE"}}, "https://m.example.com",
			[]string{"LINOONE_ACCESS_KEY_ID is set but LINOONE_SECRET_ACCESS_KEY is not"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(context.Background(), Request{Endpoint: tt.endpoint, Config: tt.cfg})
			if err == nil {
				t.Fatal("resolved without credentials")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if tt.endpoint != "http://127.0.0.1:8081" && tt.endpoint != "" && strings.Contains(err.Error(), "linoone serve") {
				t.Errorf("%q advises starting serve for an API elsewhere", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, sigv4.CredentialsFile)); err == nil {
		t.Error("resolving wrote a pair: only serve does")
	}
}

// TestTransportCarriesTheSessionToken: the chain's temporary credentials sign
// with their session token, for the resolved region and execute-api.
func TestTransportCarriesTheSessionToken(t *testing.T) {
	chainEnv(t, "AKIDFROMTHECHAIN", "chain-session")
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	s, err := Resolve(context.Background(), Request{Endpoint: srv.URL, Config: config.Shorten{DataDir: t.TempDir(), Region: "us-east-1"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: s.Transport(nil)}).Post(s.Base+"/shorten", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	auth := got.Get("Authorization")
	if got.Get("X-Amz-Security-Token") != "chain-session" || !strings.Contains(auth, "Credential=AKIDFROMTHECHAIN/") || !strings.Contains(auth, "/ap-south-1/execute-api/aws4_request") {
		t.Errorf("token %q authorization %q", got.Get("X-Amz-Security-Token"), auth)
	}
}

// TestConfirm: for the chain, STS's answer names the identity, and an STS that
// cannot be reached is said, not fatal; a Linoone pair has nothing to confirm.
func TestConfirm(t *testing.T) {
	chainEnv(t, "AKIDFROMTHECHAIN", "")
	var signedBy string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		signedBy = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(`<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
			`<Arn>arn:aws:iam::123456789012:user/ops</Arn><UserId>AIDAEXAMPLE</UserId><Account>123456789012</Account>` +
			`</GetCallerIdentityResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></GetCallerIdentityResponse>`))
	}))
	defer sts.Close()
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	cfg := config.Shorten{DataDir: t.TempDir(), Region: "us-east-1"}
	// The profile is named through Getenv only: the SDK would refuse one it
	// cannot find in the (empty) shared files.
	profile := func(k string) string { return map[string]string{"AWS_PROFILE": "ops"}[k] }
	s, err := Resolve(context.Background(), Request{Endpoint: "https://m.example.com", Config: cfg, Getenv: profile})
	if err != nil {
		t.Fatal(err)
	}
	s.Confirm(context.Background())
	want := "AWS identity arn:aws:iam::123456789012:user/ops, access key AKIDFROM… from the AWS default credential chain (EnvConfigCredentials, profile ops)"
	if s.Identity != want || !strings.Contains(signedBy, "Credential=AKIDFROMTHECHAIN/") {
		t.Errorf("identity %q, want %q (STS request signed %q)", s.Identity, want, signedBy)
	}

	t.Setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9")
	s, err = Resolve(context.Background(), Request{Endpoint: "https://m.example.com", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	s.Confirm(context.Background())
	if !strings.HasSuffix(s.Identity, "; STS GetCallerIdentity failed, so the identity is unconfirmed") || strings.Contains(s.Identity, "arn:") {
		t.Errorf("identity %q, want it said that STS failed", s.Identity)
	}

	dir, _ := served(t)
	p, err := Resolve(context.Background(), Request{Config: config.Shorten{DataDir: dir, Region: "us-east-1", ManagementURL: "http://127.0.0.1:8081"}})
	if err != nil {
		t.Fatal(err)
	}
	before := p.Identity
	p.Confirm(context.Background())
	if p.Identity != before {
		t.Errorf("a Linoone pair confirmed as %q", p.Identity)
	}
}
