package discovery

import (
	"errors"
	"strings"
	"testing"
)

func TestParseDomain(t *testing.T) {
	long := strings.Repeat("a", 63)
	tests := []struct {
		in   string
		want string
		err  string
	}{
		{in: "go.example.com", want: "go.example.com"},
		{in: "Go.Example.COM.", want: "go.example.com"},
		{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{in: "a-b.c0.io", want: "a-b.c0.io"},
		{in: long + "." + long + "." + long + "." + strings.Repeat("b", 61), want: long + "." + long + "." + long + "." + strings.Repeat("b", 61)},
		{in: "", err: "invalid domain: empty"},
		{in: "localhost", err: "needs at least two labels"},
		{in: "-go.example.com", err: `label "-go"`},
		{in: "go-.example.com", err: `label "go-"`},
		{in: "go_x.example.com", err: `label "go_x"`},
		{in: "a..example.com", err: `label ""`},
		{in: "*.example.com", err: `label "*"`},
		{in: strings.Repeat("a", 64) + ".example.com", err: "must be 1-63"},
		{in: long + "." + long + "." + long + "." + strings.Repeat("b", 62), err: "longer than 253 characters"},
		{in: "https://go.example.com", err: "host name only"},
		{in: "go.example.com:443", err: "host name only"},
		{in: "go.example.com/x", err: "host name only"},
		{in: "192.0.2.1", err: "top-level label is numeric"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDomain(tt.in)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Errorf("ParseDomain(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalidDomain) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseDomain(%q) error = %v, want ErrInvalidDomain containing %q", tt.in, err, tt.err)
			}
		})
	}
}

func TestValidators(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind error // nil: valid
	}{
		{"region us-east-1", ValidateRegion("us-east-1"), nil},
		{"region cn-northwest-1", ValidateRegion("cn-northwest-1"), nil},
		{"region eusc-de-east-1", ValidateRegion("eusc-de-east-1"), nil},
		{"region typo", ValidateRegion("us-east-9"), ErrUnknownRegion},
		{"region upper case", ValidateRegion("US-EAST-1"), ErrUnknownRegion},
		{"region empty", ValidateRegion(""), ErrUnknownRegion},
		{"bus name", ValidateBus("shared-engagement", "us-east-1"), nil},
		{"bus name with dots", ValidateBus("org.shared_bus-1", "us-east-1"), nil},
		{"bus arn", ValidateBus("arn:aws:events:us-east-1:123456789012:event-bus/shared-engagement", "us-east-1"), nil},
		{"bus arn other account", ValidateBus("arn:aws:events:us-east-1:210987654321:event-bus/shared", "us-east-1"), nil},
		{"bus arn china", ValidateBus("arn:aws-cn:events:cn-north-1:123456789012:event-bus/b", "cn-north-1"), nil},
		{"bus arn other region", ValidateBus("arn:aws:events:eu-west-1:123456789012:event-bus/shared", "us-east-1"), ErrInvalidBus},
		{"bus arn short account", ValidateBus("arn:aws:events:us-east-1:1234:event-bus/shared", "us-east-1"), ErrInvalidBus},
		{"bus arn wrong service", ValidateBus("arn:aws:sqs:us-east-1:123456789012:event-bus/shared", "us-east-1"), ErrInvalidBus},
		{"bus arn rule", ValidateBus("arn:aws:events:us-east-1:123456789012:rule/shared", "us-east-1"), ErrInvalidBus},
		{"bus name with slash", ValidateBus("aws.partner/x", "us-east-1"), ErrInvalidBus},
		{"bus name with space", ValidateBus("shared bus", "us-east-1"), ErrInvalidBus},
		{"bus name too long", ValidateBus(strings.Repeat("b", 257), "us-east-1"), ErrInvalidBus},
		{"api id", ValidateAPIID("a1b2c3d4e5"), nil},
		{"api id upper case", ValidateAPIID("A1B2C3D4E5"), ErrInvalidAPIID},
		{"api id short", ValidateAPIID("a1b2c3d4e"), ErrInvalidAPIID},
		{"api id long", ValidateAPIID("a1b2c3d4e5f"), ErrInvalidAPIID},
		{"token", ValidateToken("7BTadEDkJ8"), nil},
		{"token with dash", ValidateToken("7BTadEDk-8"), ErrInvalidToken},
		{"token short", ValidateToken("7BTadEDkJ"), ErrInvalidToken},
		{"token non-ascii", ValidateToken("7BTadEDkJé"), ErrInvalidToken},
		{"prefix", ValidatePrefix("s"), nil},
		{"prefix with dash", ValidatePrefix("go-links"), nil},
		{"prefix with slash", ValidatePrefix("a/b"), ErrInvalidPrefix},
		{"prefix leading dash", ValidatePrefix("-s"), ErrInvalidPrefix},
		{"prefix upper case", ValidatePrefix("S"), ErrInvalidPrefix},
		{"server", ValidateServer("127.0.0.1:53"), nil},
		{"server ipv6", ValidateServer("[::1]:5353"), nil},
		{"server without port", ValidateServer("127.0.0.1"), ErrInvalidServer},
		{"server bad port", ValidateServer("127.0.0.1:99999"), ErrInvalidServer},
		{"server without host", ValidateServer(":53"), ErrInvalidServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.kind == nil {
				if tt.err != nil {
					t.Errorf("unexpected error: %v", tt.err)
				}
				return
			}
			if !errors.Is(tt.err, tt.kind) {
				t.Errorf("error = %v, want %v", tt.err, tt.kind)
			}
		})
	}
}
