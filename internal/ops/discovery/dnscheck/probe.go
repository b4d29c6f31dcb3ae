package dnscheck

import (
	"context"
	"io"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/linoone/linoone/internal/ops/discovery"
)

// DefaultProbeTimeout bounds one probe request.
const DefaultProbeTimeout = 10 * time.Second

// Prober sends GET requests and records the answer without following
// redirects.
type Prober struct {
	client *http.Client
}

// NewProber returns a Prober using a copy of client (nil: a plain client)
// with redirects disabled and, when it has none, a DefaultProbeTimeout
// timeout.
func NewProber(client *http.Client) *Prober {
	c := http.Client{}
	if client != nil {
		c = *client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Timeout == 0 {
		c.Timeout = DefaultProbeTimeout
	}
	return &Prober{client: &c}
}

// Probe sends GET url once, connecting to addr (an address the caller resolved; ""
// resolves the URL's host the system's way). The TLS name and Host stay the URL's.
// Failures are part of the result, not errors: a probe that cannot connect is a
// finding.
func (p *Prober) Probe(ctx context.Context, url, addr string) discovery.Probe {
	res := discovery.Probe{URL: url}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	req.Header.Set("User-Agent", "linoone-discover")
	client := p.client
	if addr != "" {
		client = pinned(p.client, addr)
	}
	resp, err := client.Do(req)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	res.Status = resp.StatusCode
	res.Location = resp.Header.Get("Location")
	res.RequestID = resp.Header.Get("Apigw-Requestid")
	res.ContentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return res
}

// pinned is a copy of client whose connections all go to addr, on the port each
// request asks for: the address public DNS answered, so that the probe tests what
// the public reaches, whatever this machine's resolver says.
func pinned(client *http.Client, addr string) *http.Client {
	base, _ := client.Transport.(*http.Transport)
	if client.Transport == nil {
		base, _ = http.DefaultTransport.(*http.Transport)
	}
	if base == nil {
		return client // a transport of another kind dials as it does
	}
	tr := base.Clone()
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, hostport string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(hostport)
		if err != nil {
			return nil, err
		}
		return dial(ctx, network, net.JoinHostPort(addr, port))
	}
	c := *client
	c.Transport = tr
	return &c
}
