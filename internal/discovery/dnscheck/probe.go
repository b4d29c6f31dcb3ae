package dnscheck

import (
	"context"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/linoone/linoone/internal/discovery"
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

// Probe sends GET url once. Failures are part of the result, not errors: a
// probe that cannot connect is a finding.
func (p *Prober) Probe(ctx context.Context, url string) discovery.Probe {
	res := discovery.Probe{URL: url}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	req.Header.Set("User-Agent", "linoone-discover")
	resp, err := p.client.Do(req)
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
