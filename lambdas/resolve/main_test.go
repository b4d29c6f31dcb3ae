package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestSetupConfiguration(t *testing.T) {
	base := map[string]string{
		"AWS_REGION":                "us-east-1",
		"LINOONE_PERSIST_URL":       "http://127.0.0.1:1",
		"LINOONE_RESOLVER_BASE_URL": "https://abc123defg.execute-api.us-east-1.amazonaws.com",
		"LINOONE_EVENT_BUS":         "linoone-test-bus",
		"LINOONE_CLICK_DLQ_URL":     "https://sqs.us-east-1.amazonaws.com/000000000000/linoone-click-dlq",
	}
	tests := []struct {
		name    string
		env     map[string]string // overrides of base; "" unsets
		wantErr []string          // nil means setup succeeds
	}{
		{name: "complete"},
		{name: "cache disabled", env: map[string]string{"LINOONE_RESOLVER_CACHE_SIZE": "0"}},
		// Without LINOONE_PERSIST_URL the configuration's local-mode default
		// (http://127.0.0.1:8082) must not pass for a Persist on AWS.
		{name: "persist url missing", env: map[string]string{"LINOONE_PERSIST_URL": ""}, wantErr: []string{"LINOONE_PERSIST_URL: required"}},
		{name: "bus and dlq missing", env: map[string]string{"LINOONE_EVENT_BUS": "", "LINOONE_CLICK_DLQ_URL": ""},
			wantErr: []string{"LINOONE_EVENT_BUS: required", "LINOONE_CLICK_DLQ_URL: required"}},
		{name: "bad bus name", env: map[string]string{"LINOONE_EVENT_BUS": "no spaces"}, wantErr: []string{"LINOONE_EVENT_BUS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
			getenv := func(k string) string {
				if v, ok := tt.env[k]; ok {
					return v
				}
				return base[k]
			}
			h, err := setup(context.Background(), getenv)
			if tt.wantErr == nil {
				if err != nil || h == nil {
					t.Fatalf("setup: handler %v, error %v", h != nil, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("setup succeeded, want an error naming %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("setup error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// TestUnparsablePathIsNotFound: API Gateway hands some paths on decoded ("/%25"
// arrives as "/%"); the function answers them 404 as serve does, not with an error
// that API Gateway turns into a 500 and the error alarm counts.
func TestUnparsablePathIsNotFound(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	env := map[string]string{
		"AWS_REGION":                "us-east-1",
		"LINOONE_PERSIST_URL":       "http://127.0.0.1:1", // not a token: never asked
		"LINOONE_RESOLVER_BASE_URL": "https://abc123defg.execute-api.us-east-1.amazonaws.com",
		"LINOONE_EVENT_BUS":         "linoone-test-bus",
		"LINOONE_CLICK_DLQ_URL":     "https://sqs.us-east-1.amazonaws.com/000000000000/linoone-click-dlq",
	}
	h, err := setup(context.Background(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "resolve.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/%", "/%zz", "/a\nb", "/%4", "/\x7f"} {
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		ev.RawPath, ev.RequestContext.HTTP.Path = path, path
		ev.Headers["accept"] = "application/json" // an API client; a browser gets the page (issue 41)
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != http.StatusNotFound || resp.Headers["Content-Type"] != "application/problem+json" {
			t.Errorf("GET %q: %d %v %s, %v; want a 404 problem", path, resp.StatusCode, resp.Headers, resp.Body, err)
		}
	}
}
