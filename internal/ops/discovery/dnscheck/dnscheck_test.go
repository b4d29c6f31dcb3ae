package dnscheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/ops/discovery"
	"github.com/linoone/linoone/internal/ops/discovery/discoverytest"
	"github.com/linoone/linoone/internal/ops/discovery/dnscheck"
)

// world is public DNS as the tests see it: example.com served by an outside
// DNS provider; go.example.com a CNAME chain to CloudFront; www.example.com
// an A record elsewhere; a Route 53 zone for example.net with an alias.
func world() discoverytest.DNSConfig {
	return discoverytest.DNSConfig{
		Zones: []discoverytest.Zone{
			{Name: "example.com", NameServers: []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}},
			{Name: "example.net", NameServers: []string{"ns-0.awsdns-00.com", "ns-512.awsdns-00.net"}},
			{Name: "cloudfront.net", NameServers: []string{"ns-130.awsdns-16.org"}},
		},
		Records: []string{
			"go.example.com. 300 IN CNAME links.example.com.",
			"links.example.com. 300 IN CNAME d111111abcdef8.cloudfront.net.",
			"d111111abcdef8.cloudfront.net. 60 IN A 198.51.100.10",
			"d111111abcdef8.cloudfront.net. 60 IN A 198.51.100.11",
			"d111111abcdef8.cloudfront.net. 60 IN AAAA 2001:db8::10",
			"www.example.com. 300 IN A 203.0.113.7",
			"go.example.net. 60 IN A 192.0.2.10",
			"loop1.example.com. 300 IN CNAME loop2.example.com.",
			"loop2.example.com. 300 IN CNAME loop1.example.com.",
			"dangling.example.com. 300 IN CNAME gone.example.org.",
		},
		ServFail: []string{"broken.example.com"},
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		noChase bool
		query   string
		want    discovery.Resolution
	}{
		{
			name:  "cname chain to cloudfront",
			query: "go.example.com",
			want: discovery.Resolution{
				Name:      "go.example.com",
				Chain:     []string{"links.example.com", "d111111abcdef8.cloudfront.net"},
				Addresses: []string{"198.51.100.10", "198.51.100.11", "2001:db8::10"},
			},
		},
		{
			name:    "cname chain from a server that does not chase",
			noChase: true,
			query:   "Go.Example.com.",
			want: discovery.Resolution{
				Name:      "go.example.com",
				Chain:     []string{"links.example.com", "d111111abcdef8.cloudfront.net"},
				Addresses: []string{"198.51.100.10", "198.51.100.11", "2001:db8::10"},
			},
		},
		{
			name:  "resolves elsewhere",
			query: "www.example.com",
			want:  discovery.Resolution{Name: "www.example.com", Addresses: []string{"203.0.113.7"}},
		},
		{
			name:  "nxdomain",
			query: "nope.example.com",
			want:  discovery.Resolution{Name: "nope.example.com", NXDomain: true},
		},
		{
			name:  "cname to a name that does not exist",
			query: "dangling.example.com",
			want:  discovery.Resolution{Name: "dangling.example.com", Chain: []string{"gone.example.org"}, NXDomain: true},
		},
		{
			name:  "exists without addresses",
			query: "example.com",
			want:  discovery.Resolution{Name: "example.com"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := world()
			cfg.NoChase = tt.noChase
			srv := discoverytest.StartDNS(t, cfg)
			got, err := dnscheck.NewResolver(srv.Addr, time.Second).Resolve(context.Background(), tt.query)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resolution (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	srv := discoverytest.StartDNS(t, world())
	tests := []struct {
		name   string
		server string
		query  string
		kind   error
		text   string
	}{
		{name: "cname loop", server: srv.Addr, query: "loop1.example.com", kind: dnscheck.ErrCNAMELoop, text: "resolve loop1.example.com: cname chain loops"},
		{name: "servfail", server: srv.Addr, query: "broken.example.com", kind: dnscheck.ErrServerFailure, text: "query broken.example.com A at " + srv.Addr + ": dns server failure: SERVFAIL"},
		{name: "unreachable", server: discoverytest.ClosedUDPAddr(t), query: "go.example.com", kind: dnscheck.ErrUnreachable, text: "dns server unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dnscheck.NewResolver(tt.server, 500*time.Millisecond).Resolve(context.Background(), tt.query)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error = %v, want %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("message %q does not contain %q", err, tt.text)
			}
		})
	}
}

func TestZone(t *testing.T) {
	srv := discoverytest.StartDNS(t, world())
	r := dnscheck.NewResolver(srv.Addr, time.Second)
	tests := []struct {
		query string
		want  discovery.PublicZone
	}{
		{"go.example.com", discovery.PublicZone{Name: "example.com", NameServers: []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}}},
		{"nope.example.com", discovery.PublicZone{Name: "example.com", NameServers: []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}}},
		{"example.com", discovery.PublicZone{Name: "example.com", NameServers: []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}}},
		{"go.example.net", discovery.PublicZone{Name: "example.net", NameServers: []string{"ns-0.awsdns-00.com", "ns-512.awsdns-00.net"}}},
		{"go.nowhere.test", discovery.PublicZone{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := r.Zone(context.Background(), tt.query)
			if err != nil {
				t.Fatalf("Zone: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("zone (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSystemServer(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(conf, []byte("# test\nsearch example.internal\nnameserver 10.0.0.2\nnameserver 10.0.0.3\noptions ndots:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := dnscheck.SystemServer(conf)
	if err != nil || got != "10.0.0.2:53" {
		t.Errorf("SystemServer = %q, %v; want 10.0.0.2:53", got, err)
	}
	if _, err := dnscheck.SystemServer(filepath.Join(dir, "missing")); err == nil {
		t.Error("SystemServer(missing file) succeeded")
	}
}
