package main

import (
	"context"
	"strings"
	"testing"
)

func TestSetupConfiguration(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // "" means setup succeeds
	}{
		// Replay never talks to Persist: no LINOONE_PERSIST_URL is needed.
		{name: "bus only", env: map[string]string{"AWS_REGION": "us-east-1", "LINOONE_EVENT_BUS": "linoone-test-bus"}},
		{name: "bus arn", env: map[string]string{"LINOONE_EVENT_BUS": "arn:aws:events:us-east-1:123456789012:event-bus/linoone"}},
		{name: "bus missing", env: map[string]string{"AWS_REGION": "us-east-1"}, wantErr: "LINOONE_EVENT_BUS: required"},
		{name: "bad region", env: map[string]string{"AWS_REGION": "mars", "LINOONE_EVENT_BUS": "b"}, wantErr: "LINOONE_REGION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
			h, err := setup(context.Background(), func(k string) string { return tt.env[k] })
			switch {
			case tt.wantErr == "" && (err != nil || h == nil):
				t.Fatalf("setup: handler %v, error %v", h != nil, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("setup error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
