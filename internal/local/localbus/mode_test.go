package localbus

import (
	"strings"
	"testing"
)

func TestParseSyncMode(t *testing.T) {
	tests := []struct {
		in      string
		want    SyncMode
		wantErr bool
	}{
		{in: "each", want: SyncEach},
		{in: "interval", want: SyncInterval},
		{in: "sometimes", wantErr: true},
		{in: "Each", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSyncMode(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "neither each nor interval") {
					t.Fatalf("ParseSyncMode(%q) = %v, %v; want an error", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != tt.in {
				t.Fatalf("ParseSyncMode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseConsumerMode(t *testing.T) {
	tests := []struct {
		in      string
		want    ConsumerMode
		wantErr bool
	}{
		{in: "inline", want: ConsumerInline},
		{in: "external", want: ConsumerExternal},
		{in: "elsewhere", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseConsumerMode(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "neither inline nor external") {
					t.Fatalf("ParseConsumerMode(%q) = %v, %v; want an error", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != tt.in {
				t.Fatalf("ParseConsumerMode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
