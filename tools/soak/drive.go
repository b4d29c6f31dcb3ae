//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/app/status"
	"github.com/linoone/linoone/internal/local/localbus"
)

// drive sends the clicks from o.conns goroutines and reports every o.every of
// them, then waits for the journal to drain and reports once more.
func drive(ctx context.Context, o options, srv *server, url, dataDir string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.maxTime)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: o.conns, DisableCompression: true}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range o.conns {
		wg.Go(func() {
			for ctx.Err() == nil && sent.Add(1) <= o.clicks {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				res, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusFound {
					failed.Add(1)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	next := o.every
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
		}
		if n := min(sent.Load(), o.clicks); n >= next {
			report(out, fmt.Sprintf("%d clicks, %.0f/s", n, float64(n)/time.Since(start).Seconds()), dataDir, srv.cmd.Process.Pid)
			next += o.every
		}
	}
	n := min(sent.Load(), o.clicks)
	fmt.Fprintf(out, "sent %d clicks in %s (%d failed); waiting up to %s for the journal to drain\n",
		n, time.Since(start).Round(time.Millisecond), failed.Load(), o.drain)
	waitDrained(dataDir, o.drain)
	report(out, fmt.Sprintf("end, %d clicks", n), dataDir, srv.cmd.Process.Pid)
	return nil
}

// waitDrained waits until the bus has nothing waiting for its consumer, or limit.
func waitDrained(dataDir string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if b, err := backlog(dataDir); err == nil && b == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// report prints the data dir by part, bytes and bytes a click, and the RSS of serve
// and its descendants.
func report(out io.Writer, what, dataDir string, pid int) {
	d, err := status.SizeDataDir(dataDir)
	if err != nil {
		fmt.Fprintf(out, "%s: data dir: %v\n", what, err)
		return
	}
	var parts []string
	var notPersist int64
	for _, p := range d.Parts {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.ReplaceAll(p.Name, " ", "_"), p.Bytes))
		if p.Name != status.PartPersistDB {
			notPersist += p.Bytes
		}
	}
	fmt.Fprintf(out, "[%s] data_dir total=%d non_persist_db=%d %s\n", what, d.Total, notPersist, strings.Join(parts, " "))
	var rss []string
	for _, p := range family(pid) {
		rss = append(rss, fmt.Sprintf("%s(%d)=%dkB", p.name, p.pid, p.rssKB))
	}
	fmt.Fprintf(out, "[%s] rss %s\n", what, strings.Join(rss, " "))
}

type proc struct {
	pid, ppid int
	name      string
	rssKB     int64
}

// family is pid and its descendants, from /proc (Linux; empty elsewhere).
func family(root int) []proc {
	ents, _ := os.ReadDir("/proc")
	byParent := map[int][]proc{}
	var all = map[int]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		p := proc{pid: pid}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "Name":
				p.name = v
			case "PPid":
				p.ppid, _ = strconv.Atoi(v)
			case "VmRSS":
				p.rssKB, _ = strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
			}
		}
		all[pid] = p
		byParent[p.ppid] = append(byParent[p.ppid], p)
	}
	var outp []proc
	var walk func(int)
	walk = func(pid int) {
		if p, ok := all[pid]; ok {
			outp = append(outp, p)
		}
		kids := byParent[pid]
		sort.Slice(kids, func(i, j int) bool { return kids[i].pid < kids[j].pid })
		for _, k := range kids {
			walk(k.pid)
		}
	}
	walk(root)
	return outp
}

// backlog is the journal bytes waiting for the consumer.
func backlog(dataDir string) (int64, error) {
	b, err := localbus.ReadBacklog(filepath.Join(dataDir, datadir.Bus))
	return b.Bytes, err
}
