package awswire

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestParseViewerAddress(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want "" = refused
	}{
		{"198.51.100.10:46532", "198.51.100.10"},
		{"198.51.100.10:0", "198.51.100.10"},
		{"2001:db8::1:46532", "2001:db8::1"}, // CloudFront's IPv6 form: the port after the last colon
		{"[2001:db8::1]:46532", "2001:db8::1"},
		{"2001:db8:85a3:0:0:8a2e:370:7334:443", "2001:db8:85a3::8a2e:370:7334"},
		{"[::ffff:198.51.100.10]:443", "198.51.100.10"},
		{"198.51.100.10", ""}, // no port
		{"2001:db8::", ""},    // no port: "2001:db8:" is no address
		{"198.51.100.10:65536", ""},
		{"198.51.100.10:-1", ""},
		{"198.51.100.10:+443", ""},
		{"198.51.100.10:", ""},
		{"198.51.100.256:443", ""},
		{"203.0.113.7:443,198.51.100.10:443", ""}, // two values joined by API Gateway
		{" 198.51.100.10:443", ""},
		{"[fe80::1%eth0]:443", ""},
		{"fe80::1%eth0:443", ""},
		{"localhost:443", ""},
		{"", ""},
	} {
		ip, ok := ParseViewerAddress(tt.in)
		if got := map[bool]string{true: ip.String(), false: ""}[ok]; got != tt.want {
			t.Errorf("ParseViewerAddress(%q) = %q, %v; want %q", tt.in, ip, ok, tt.want)
		}
	}
}

// TestVisitorFromCloudFront: the viewer address is taken only from a request that
// carries the origin secret, and the secret reaches nothing after the wrapper.
func TestVisitorFromCloudFront(t *testing.T) {
	const (
		secret = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"
		edge   = "130.176.96.72" // API Gateway's source IP: a CloudFront edge server
	)
	for _, tt := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"through cloudfront", map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "198.51.100.10:46532"}, "198.51.100.10"},
		{"ipv6 viewer", map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "2001:db8::7:443"}, "2001:db8::7"},
		{"header names in any case", map[string]string{"X-Linoone-Origin-Verify": secret, "CloudFront-Viewer-Address": "198.51.100.10:1"}, "198.51.100.10"},
		{"spoofed without the secret", map[string]string{"cloudfront-viewer-address": "192.0.2.1:443"}, edge},
		{"spoofed with a wrong secret", map[string]string{"x-linoone-origin-verify": secret[:47] + "X", "cloudfront-viewer-address": "192.0.2.1:443"}, edge},
		{"spoofed with an empty secret", map[string]string{"x-linoone-origin-verify": "", "cloudfront-viewer-address": "192.0.2.1:443"}, edge},
		{"secret sent twice", map[string]string{"x-linoone-origin-verify": secret, "X-Linoone-Origin-Verify": secret, "cloudfront-viewer-address": "192.0.2.1:443"}, edge},
		{"malformed viewer address", map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "not-an-ip:443"}, edge},
		{"two viewer addresses", map[string]string{"x-linoone-origin-verify": secret, "cloudfront-viewer-address": "192.0.2.1:443, 198.51.100.10:1"}, edge},
		{"no viewer address", map[string]string{"x-linoone-origin-verify": secret}, edge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen events.APIGatewayV2HTTPRequest
			h := VisitorFromCloudFront(secret, func(_ context.Context, ev events.APIGatewayV2HTTPRequest) (int, error) {
				seen = ev
				return 302, nil
			})
			ev := events.APIGatewayV2HTTPRequest{RawPath: "/7BTadEDkJ8", Headers: tt.headers}
			ev.RequestContext.HTTP.SourceIP = edge
			if status, err := h(context.Background(), ev); status != 302 || err != nil {
				t.Fatalf("handler not called through: %d, %v", status, err)
			}
			if got := seen.RequestContext.HTTP.SourceIP; got != tt.want {
				t.Errorf("source IP %q, want %q", got, tt.want)
			}
			for k, v := range seen.Headers {
				if v == secret || k == "x-linoone-origin-verify" || k == "X-Linoone-Origin-Verify" {
					t.Errorf("header %s reached the handler", k)
				}
			}
		})
	}
}
