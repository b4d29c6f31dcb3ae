package dnscheck_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/ops/discovery"
	"github.com/linoone/linoone/internal/ops/discovery/dnscheck"
)

// resolverHandler answers like the resolver: 302 for a known token, 404
// otherwise, with API Gateway's request id header.
func resolverHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Apigw-Requestid", "Qx1YzFkLoAMEb0w=")
		if r.URL.Path == "/7BTadEDkJ8" {
			w.Header().Set("Cache-Control", "private, max-age=0")
			http.Redirect(w, r, "https://target.example.org/landing", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"type":"urn:linoone:problem:not-found","title":"Not Found","status":404,"detail":"no such short url"}`))
	})
}

// clientFor returns a client that trusts srv and connects every host to it,
// so https://go.example.com/... reaches the test server (its certificate
// covers *.example.com).
func clientFor(srv *httptest.Server) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

func TestProbe(t *testing.T) {
	srv := httptest.NewTLSServer(resolverHandler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name string
		url  string
		want discovery.Probe
	}{
		{
			name: "known token redirect is recorded, not followed",
			url:  "https://go.example.com/7BTadEDkJ8",
			want: discovery.Probe{URL: "https://go.example.com/7BTadEDkJ8", Status: 302, Location: "https://target.example.org/landing", RequestID: "Qx1YzFkLoAMEb0w=", ContentType: "text/html"},
		},
		{
			name: "unknown token",
			url:  "https://go.example.com/AAAAAAAAAA",
			want: discovery.Probe{URL: "https://go.example.com/AAAAAAAAAA", Status: 404, RequestID: "Qx1YzFkLoAMEb0w=", ContentType: "application/problem+json"},
		},
	}
	p := dnscheck.NewProber(clientFor(srv))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Probe(context.Background(), tt.url, "")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probe (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeFailures(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(resolverHandler())
	t.Cleanup(tlsSrv.Close)
	closed := httptest.NewServer(resolverHandler())
	closedClient := clientFor(tlsSrv)
	closedClient.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, closed.Listener.Addr().String())
	}
	closed.Close()

	untrusted := &http.Client{Transport: &http.Transport{DialContext: clientFor(tlsSrv).Transport.(*http.Transport).DialContext}}
	tests := []struct {
		name   string
		client *http.Client
		url    string
		errHas string
	}{
		{name: "certificate not trusted", client: untrusted, url: "https://go.example.com/7BTadEDkJ8", errHas: "certificate"},
		{name: "connection refused", client: closedClient, url: "https://go.example.com/7BTadEDkJ8", errHas: "connection refused"},
		{name: "bad url", client: nil, url: "https://go.example.com/\x7f", errHas: "invalid control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := dnscheck.NewProber(tt.client).Probe(context.Background(), tt.url, "")
			if got.Status != 0 || !strings.Contains(got.Err, tt.errHas) {
				t.Errorf("probe = %+v, want an error containing %q", got, tt.errHas)
			}
		})
	}
}

func TestNewProberKeepsCallerClient(t *testing.T) {
	c := &http.Client{Timeout: time.Second}
	_ = dnscheck.NewProber(c)
	if c.CheckRedirect != nil {
		t.Error("NewProber changed the caller's client")
	}
}

// TestProbeConnectsToTheGivenAddress: the probe goes to the address public DNS
// answered, not to what this machine's resolver makes of the name, and keeps the
// URL's name for TLS and Host.
func TestProbeConnectsToTheGivenAddress(t *testing.T) {
	srv := httptest.NewTLSServer(resolverHandler())
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	want := net.JoinHostPort("127.0.0.1", port)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != want { // the name, resolved the system's way: never here
			return nil, fmt.Errorf("dialed %s, want %s", addr, want)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	url := "https://go.example.com:" + port + "/AAAAAAAAAA"
	got := dnscheck.NewProber(&http.Client{Transport: tr}).Probe(context.Background(), url, "127.0.0.1")
	if got.Err != "" || got.Status != http.StatusNotFound || got.ContentType != "application/problem+json" {
		t.Fatalf("probe %+v, want the test server's 404", got)
	}
}
