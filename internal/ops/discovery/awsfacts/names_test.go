package awsfacts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDNSName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Example.COM.", "example.com"},
		{`\052.example.com.`, "*.example.com"},
		{`a\\b.example.com`, `a\\b.example.com`},
		{`trailing\05`, `trailing\05`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := dnsName(tt.in); got != tt.want {
			t.Errorf("dnsName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCandidates(t *testing.T) {
	got := candidates("a.go.example.com")
	want := []string{"a.go.example.com", "go.example.com", "example.com"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"go.example.com", "go.example.com", true},
		{"*.example.com", "go.example.com", true},
		{"*.example.com", "a.go.example.com", false},
		{"*.example.com", "example.com", false},
		{"example.com", "go.example.com", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := covers(tt.pattern, tt.name); got != tt.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestPartitionOf(t *testing.T) {
	for region, want := range map[string]string{"us-east-1": "aws", "eu-west-1": "aws", "cn-north-1": "aws-cn", "us-gov-west-1": "aws-us-gov", "eusc-de-east-1": "aws-eusc"} {
		if got := partitionOf(region); got != want {
			t.Errorf("partitionOf(%q) = %q, want %q", region, got, want)
		}
	}
}
