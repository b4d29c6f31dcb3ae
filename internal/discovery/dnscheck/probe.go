package dnscheck

import (
	"context"
	"io"
	"net/http"
	"time"
)

// DefaultProbeTimeout bounds one probe request.
const DefaultProbeTimeout = 10 * time.Second

// ProbeResult is the answer to one probe request.
type ProbeResult struct {
	URL      string
	Status   int
	Location string
	// RequestID is the apigw-requestid header API Gateway HTTP APIs send.
	RequestID string
	// Err says why no HTTP answer arrived; "" when one did.
	Err string
}

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
func (p *Prober) Probe(ctx context.Context, url string) ProbeResult {
	res := ProbeResult{URL: url}
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
	return res
}
