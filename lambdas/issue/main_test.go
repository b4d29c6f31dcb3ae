package main

import (
	"context"
	"strings"
	"testing"
)

func TestSetupConfiguration(t *testing.T) {
	base := map[string]string{
		"AWS_REGION":                "us-east-1",
		"LINOONE_PERSIST_URL":       "http://127.0.0.1:1",
		"LINOONE_RESOLVER_BASE_URL": "https://abc123defg.execute-api.us-east-1.amazonaws.com",
	}
	tests := []struct {
		name    string
		env     map[string]string // overrides of base; "" unsets
		wantErr string            // "" means setup succeeds
	}{
		{name: "complete", env: nil},
		// The URL is no longer read from SSM at start (issue 48): a stack that still
		// names the parameter fails init, saying so.
		{name: "persist url from ssm parameter name", env: map[string]string{"LINOONE_PERSIST_URL": "", "LINOONE_PERSIST_URL_PARAM": "/linoone/persist-url"},
			wantErr: "LINOONE_PERSIST_URL: required; LINOONE_PERSIST_URL_PARAM is no longer read"},
		// Without LINOONE_PERSIST_URL the configuration's local-mode default
		// (http://127.0.0.1:8082) must not pass for a Persist on AWS.
		{name: "persist url missing", env: map[string]string{"LINOONE_PERSIST_URL": ""}, wantErr: "LINOONE_PERSIST_URL: required"},
		{name: "bad resolver base url", env: map[string]string{"LINOONE_RESOLVER_BASE_URL": "ftp://x"}, wantErr: "LINOONE_RESOLVER_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
			// An SSM call, when one is made, fails fast on a closed port.
			t.Setenv("AWS_ENDPOINT_URL_SSM", "http://127.0.0.1:1")
			t.Setenv("AWS_MAX_ATTEMPTS", "1")
			getenv := func(k string) string {
				if v, ok := tt.env[k]; ok {
					return v
				}
				return base[k]
			}
			h, err := setup(context.Background(), getenv)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("setup: %v", err)
			case tt.wantErr == "" && h == nil:
				t.Fatal("setup returned no handler")
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("setup error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPrincipal(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:sts::123456789012:assumed-role/producer/aws-go-sdk-1764417600123456789": "arn:aws:sts::123456789012:assumed-role/producer",
		"arn:aws:sts::123456789012:assumed-role/producer/i-0abc":                         "arn:aws:sts::123456789012:assumed-role/producer",
		"arn:aws-cn:sts::123456789012:assumed-role/producer/a/b":                         "arn:aws-cn:sts::123456789012:assumed-role/producer",
		"arn:aws:iam::123456789012:user/producer":                                        "arn:aws:iam::123456789012:user/producer",
		"arn:aws:iam::123456789012:user/path/producer":                                   "arn:aws:iam::123456789012:user/path/producer",
		"arn:aws:sts::123456789012:federated-user/alice":                                 "arn:aws:sts::123456789012:federated-user/alice",
		"arn:aws:iam::123456789012:root":                                                 "arn:aws:iam::123456789012:root",
		"arn:aws:sts::123456789012:assumed-role/producer":                                "arn:aws:sts::123456789012:assumed-role/producer",
		"arn:aws:sts::123456789012:assumed-role//x":                                      "arn:aws:sts::123456789012:assumed-role//x",
		"not an arn": "not an arn",
		"":           "",
	} {
		if got := principal(arn); got != want {
			t.Errorf("principal(%q) = %q, want %q", arn, got, want)
		}
	}
}
