// Command loadshorten is the issuance load of scripts/bench.sh (scenario E): C
// producers send real SigV4-signed POST /shorten requests, each for a target never
// sent before, against the management API for a warm-up and then a measured window,
// and it prints one machine-readable line:
//
//	created=N all=N errors=N rps=X p50_ms=X p99_ms=X
//
// created counts the 201 answers completed inside the measured window and rps is
// created per second of that window; p50 and p99 are taken from the latency of every
// one of those requests. all counts every 201 of the run, warm-up included: what the
// server did for the CPU it spent over the whole run. errors counts every answer that
// is not a 201 (and every failed round trip) over the whole run, warm-up included:
// each one breaks the promise that a producer always gets a durable 201.
//
// Usage:
//
//	loadshorten -url http://127.0.0.1:8081 -creds .linoone/credentials.json [-c 64] [-d 8s] [-warmup 2s]
//
// Requests are signed with internal/http/sigv4's SignRequest, the signer the linoone CLI
// uses, so the server verifies exactly what a real producer sends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linoone/linoone/internal/http/sigv4"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadshorten:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	url, creds, region string
	conns              int
	duration, warmup   time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadshorten", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8081", "management API base URL")
	fs.StringVar(&o.creds, "creds", ".linoone/credentials.json", "credentials file written by linoone serve")
	fs.StringVar(&o.region, "region", "us-east-1", "SigV4 region (LINOONE_REGION of the server)")
	fs.IntVar(&o.conns, "c", 64, "concurrent producers")
	fs.DurationVar(&o.duration, "d", 8*time.Second, "measured window")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "warm-up before the measured window")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || o.conns < 1 || o.duration <= 0 || o.warmup < 0 {
		return errors.New("usage: loadshorten -url URL -creds FILE [-c N>0] [-d D>0] [-warmup D>=0]")
	}
	creds, err := readCredentials(o.creds)
	if err != nil {
		return err
	}
	res := load(ctx, o, creds, stderr)
	_, err = fmt.Fprintln(stdout, res.line(o.duration))
	return err
}

// readCredentials reads the pair linoone serve wrote to its data directory.
func readCredentials(path string) (sigv4.Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("credentials: %w", err)
	}
	var f struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return sigv4.Credentials{}, fmt.Errorf("credentials %s: %w", path, err)
	}
	return sigv4.Credentials{AccessKeyID: f.AccessKeyID, SecretAccessKey: f.SecretAccessKey}, nil
}

// result is what the producers saw.
type result struct {
	created   int // 201s completed inside the measured window
	all       int // 201s of the whole run
	errors    int
	latencies []time.Duration // of the created requests in the measured window
}

func (r result) line(window time.Duration) string {
	slices.Sort(r.latencies)
	ms := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds()*1e3, 'f', 2, 64) }
	return fmt.Sprintf("created=%d all=%d errors=%d rps=%.1f p50_ms=%s p99_ms=%s", r.created, r.all, r.errors,
		float64(r.created)/window.Seconds(), ms(percentile(r.latencies, 50)), ms(percentile(r.latencies, 99)))
}

// load runs o.conns producers for o.warmup+o.duration. A request counts when it
// completes inside the measured window; ctx ends the run early (Ctrl-C).
func load(ctx context.Context, o options, creds sigv4.Credentials, stderr io.Writer) result {
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConns: o.conns, MaxIdleConnsPerHost: o.conns, MaxConnsPerHost: o.conns},
	}
	start := time.Now()
	from, until := start.Add(o.warmup), start.Add(o.warmup+o.duration)
	// A run id keeps the targets unique across runs against the same data dir.
	runID := strconv.FormatInt(start.UnixNano(), 36)

	results := make([]result, o.conns)
	var reportOnce sync.Once
	var wg sync.WaitGroup
	for w := range o.conns {
		wg.Go(func() {
			r := &results[w]
			// No request starts after the window; those in flight finish (and count
			// only if they finish inside it), so the server never sees a cut request.
			for n := 0; ctx.Err() == nil && time.Now().Before(until); n++ {
				id := fmt.Sprintf("%s-%d-%d", runID, w, n)
				target := "https://www.example.com/articles/" + id + "/some-long-slug?utm_source=short&id=" + id
				t0 := time.Now()
				status, err := shorten(ctx, client, o, creds, target)
				end := time.Now()
				if ctx.Err() != nil {
					return // interrupted
				}
				if err != nil || status != http.StatusCreated {
					r.errors++
					reportOnce.Do(func() { fmt.Fprintf(stderr, "loadshorten: first error: status %d, %v\n", status, err) })
					continue
				}
				r.all++
				if !end.Before(from) && !end.After(until) {
					r.created++
					r.latencies = append(r.latencies, end.Sub(t0))
				}
			}
		})
	}
	wg.Wait()
	var total result
	for _, r := range results {
		total.created += r.created
		total.all += r.all
		total.errors += r.errors
		total.latencies = append(total.latencies, r.latencies...)
	}
	return total
}

// shorten sends one signed POST /shorten and returns the answer's status.
func shorten(ctx context.Context, client *http.Client, o options, creds sigv4.Credentials, target string) (int, error) {
	body, err := json.Marshal(map[string]string{"target_url": target})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.url, "/")+"/shorten", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if err := sigv4.SignRequest(ctx, req, body, creds, o.region, "execute-api", time.Now()); err != nil {
		return 0, err
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, err
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest sample with at least p % of the samples at or
// below it. It returns 0 for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// p*n before dividing keeps exact ranks exact (99*200/100 is 198, not 198.00…01).
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
