// Package smoke checks a deployed Linoone from outside, as a platform team does after
// terraform apply: it issues one short URL under example.com through the signed
// management API, checks the answers every client relies on, times redirects and
// issuances, and reports the links it created. It never deletes, blocks or changes
// anything it did not create.
package smoke

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Target is the deployment under test: its two public base URLs.
type Target struct {
	Resolver   string `json:"resolver_url"`
	Management string `json:"management_url"`
}

// Options say what to run against which target.
type Options struct {
	Target    Target
	Redirects int               // timed redirects per connection mode
	Issuances int               // timed issuances
	Signer    http.RoundTripper // signs management calls (SigV4, execute-api)
	Timeout   time.Duration     // bound on each request
}

// Check is one named assertion about the deployment.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Link is a short URL the smoke created.
type Link struct {
	Token     string `json:"token"`
	ShortURL  string `json:"short_url"`
	TargetURL string `json:"target_url"`
}

// Timings are the measured latencies, in milliseconds; nil when not measured.
type Timings struct {
	RedirectKeptAlive *Latency `json:"redirect_kept_alive,omitempty"`
	RedirectFresh     *Latency `json:"redirect_fresh_connection,omitempty"`
	NotAToken         *Latency `json:"not_a_token_kept_alive,omitempty"` // a 404 before any lookup: the platform's own overhead
	Connect           *Latency `json:"tcp_connect,omitempty"`            // of the fresh connections: the network's round trip
	Issuance          *Latency `json:"issuance,omitempty"`
}

// Report is what a smoke run found.
type Report struct {
	Target  Target  `json:"target"`
	Signer  string  `json:"signed_with"`
	Checks  []Check `json:"checks"`
	Timings Timings `json:"latency_ms"`
	Created []Link  `json:"created"`
	OK      bool    `json:"ok"`
	Verdict string  `json:"verdict"`
	At      string  `json:"at"`
}

// Failed lists the names of the failed checks.
func (r Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// Run runs the checks and, when they all pass, the timings. A failed check is in
// the report, not an error: Run's error is only a cancelled ctx.
func Run(ctx context.Context, opts Options, signer string) (Report, error) {
	s := newSession(opts)
	r := Report{Target: s.target, Signer: signer, At: time.Now().UTC().Format(time.RFC3339)}
	s.runChecks(ctx)
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	if s.passed("shorten") && s.passed("redirect") { // the timed path works: time it even if a page is wrong
		s.runTimings(ctx)
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
	}
	r.Checks, r.Timings, r.Created = s.checks, s.timings, s.created
	r.OK = len(r.Failed()) == 0
	r.Verdict = verdict(r)
	return r, nil
}

// uniqueTarget is a target URL no one else issues: under example.com (reserved for
// documentation, RFC 2606), named after the run.
func uniqueTarget(run string, i int) string {
	return fmt.Sprintf("https://example.com/linoone-smoke/%s?n=%d", run, i)
}

// runID names one run: its UTC time and 48 random bits.
func runID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// unknownToken is a well-formed token that names no short URL with overwhelming
// probability (62^10 of them).
func unknownToken() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(alphabet[int(c)%len(alphabet)]) // bias is harmless here: not issued, only asked
	}
	return sb.String()
}

func verdict(r Report) string {
	t := r.Timings
	timed := "latencies not measured"
	if t.RedirectKeptAlive != nil && t.RedirectFresh != nil && t.Issuance != nil {
		timed = fmt.Sprintf("redirect p50 %s p99 %s kept alive, p50 %s p99 %s on new connections; issuance p50 %s p99 %s",
			ms(t.RedirectKeptAlive.P50), ms(t.RedirectKeptAlive.P99), ms(t.RedirectFresh.P50), ms(t.RedirectFresh.P99),
			ms(t.Issuance.P50), ms(t.Issuance.P99))
	}
	if failed := r.Failed(); len(failed) > 0 {
		return fmt.Sprintf("FAILED: %d of %d checks failed (%s); %s", len(failed), len(r.Checks), strings.Join(failed, ", "), timed)
	}
	return fmt.Sprintf("OK: %d checks passed; %s", len(r.Checks), timed)
}

func ms(v float64) string { return fmt.Sprintf("%.1f ms", v) }
