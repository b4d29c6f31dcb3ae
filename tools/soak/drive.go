//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/app/status"
	"github.com/linoone/linoone/internal/foundation/rotlog"
	"github.com/linoone/linoone/internal/local/localbus"
)

// drive sends the clicks from o.conns goroutines and reports every o.every of
// them, then waits for the journal to drain and reports once more.
func drive(ctx context.Context, o options, srv *server, url, dataDir string, out io.Writer) error {
	sendCtx, cancel := context.WithTimeout(ctx, o.maxTime)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: o.conns, DisableCompression: true}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range o.conns {
		wg.Go(func() {
			for sendCtx.Err() == nil && sent.Add(1) <= o.clicks {
				req, _ := http.NewRequestWithContext(sendCtx, http.MethodGet, url, nil)
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
	var snaps []snapshot
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
		}
		if n := min(sent.Load(), o.clicks); n >= next {
			snaps = append(snaps, report(out, fmt.Sprintf("%d clicks, %.0f/s", n, float64(n)/time.Since(start).Seconds()), n, dataDir, srv.cmd.Process.Pid))
			next += o.every
		}
	}
	n := min(sent.Load(), o.clicks)
	fmt.Fprintf(out, "sent %d clicks in %s (%d failed); waiting up to %s for the journal to drain\n",
		n, time.Since(start).Round(time.Millisecond), failed.Load(), o.drain)
	drainStart := time.Now()
	waitDrained(dataDir, o.drain)
	drained := report(out, fmt.Sprintf("drained in %s, %d clicks", time.Since(drainStart).Round(100*time.Millisecond), n), n, dataDir, srv.cmd.Process.Pid)
	if o.settle > 0 {
		fmt.Fprintf(out, "idle for %s\n", o.settle)
		select {
		case <-time.After(o.settle):
		case <-ctx.Done():
		}
	}
	settled := report(out, fmt.Sprintf("end, %d clicks, idle %s", n, o.settle), n, dataDir, srv.cmd.Process.Pid)
	verdict(out, snaps, drained, settled, o.rssFrom)
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

// snapshot is what one report read.
type snapshot struct {
	clicks     int64
	notPersist int64            // the data dir's bytes but local Persist's database
	rssKB      map[string]int64 // by process name
}

// report prints the data dir by part and the RSS of serve and its descendants, and
// returns them.
func report(out io.Writer, what string, clicks int64, dataDir string, pid int) snapshot {
	snap := snapshot{clicks: clicks, rssKB: map[string]int64{}}
	d, err := status.SizeDataDir(dataDir)
	if err != nil {
		fmt.Fprintf(out, "%s: data dir: %v\n", what, err)
		return snap
	}
	var parts []string
	var notPersist int64
	for _, p := range d.Parts {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.ReplaceAll(p.Name, " ", "_"), p.Bytes))
		if p.Name != status.PartPersistDB {
			notPersist += p.Bytes
		}
	}
	if rotated, err := rotlog.Rotated(filepath.Join(dataDir, datadir.Facts)); err == nil {
		var gz, gzBytes int64
		for _, f := range rotated {
			if f.Compressed {
				gz, gzBytes = gz+1, gzBytes+f.Size
			}
		}
		parts = append(parts, fmt.Sprintf("(facts_rotated_gz=%d files/%d)", gz, gzBytes))
	}
	fmt.Fprintf(out, "[%s] data_dir total=%d non_persist_db=%d %s\n", what, d.Total, notPersist, strings.Join(parts, " "))
	snap.notPersist = notPersist
	var rss []string
	for i, p := range family(pid) {
		rss = append(rss, fmt.Sprintf("%s(%d)=%dkB(anon=%d,file=%d,shmem=%d)", p.label(), p.pid, p.rssKB, p.anonKB, p.fileKB, p.shmemKB))
		snap.rssKB[fmt.Sprintf("%d %s", i, p.label())] = p.rssKB
	}
	fmt.Fprintf(out, "[%s] rss %s\n", what, strings.Join(rss, " "))
	return snap
}

// The soak's targets (issue 47): the data dir but Persist's database under budget
// at the end, and each process's RSS, from the report at -rss-from clicks on,
// within rssBand of its value there.
const (
	budget  = 512 << 20
	rssBand = 0.10
)

// verdict prints whether the targets held over snaps (the reports while sending),
// drained (right after the drain) and settled (after -settle idle), which is judged:
// the drain's catch-up raises RSS for a while, then the consumer gives it back.
func verdict(out io.Writer, snaps []snapshot, drained, settled snapshot, baseClicks int64) {
	held := "held"
	if settled.notPersist >= budget {
		held = "MISSED"
	}
	fmt.Fprintf(out, "target: data dir but Persist's database %.1f MB at the end, budget %d MB: %s\n", float64(settled.notPersist)/(1<<20), budget>>20, held)
	i := slices.IndexFunc(snaps, func(s snapshot) bool { return s.clicks >= baseClicks })
	if i < 0 {
		fmt.Fprintf(out, "target: RSS not judged: no report at %d clicks while sending\n", baseClicks)
		return
	}
	base, sending := snaps[i], snaps[i:]
	for _, name := range slices.Sorted(maps.Keys(base.rssKB)) {
		b := float64(base.rssKB[name])
		lo, hi := b, b
		for _, s := range sending {
			if v, ok := s.rssKB[name]; ok {
				lo, hi = min(lo, float64(v)), max(hi, float64(v))
			}
		}
		fmt.Fprintf(out, "target: RSS of %s %.0f MB at %d clicks; while sending %.0f–%.0f MB (%+.0f%%/%+.0f%%): %s\n",
			name, b/1024, base.clicks, lo/1024, hi/1024, 100*(lo/b-1), 100*(hi/b-1), within(lo, hi, b))
		if v, ok := drained.rssKB[name]; ok {
			fmt.Fprintf(out, "target: RSS of %s right after the drain %.0f MB (%+.0f%%), not judged\n", name, float64(v)/1024, 100*(float64(v)/b-1))
		}
		if v, ok := settled.rssKB[name]; ok {
			// Under the band is memory given back once idle, not growth.
			judged := within(b, float64(v), b)
			if float64(v) < b*(1-rssBand) {
				judged = fmt.Sprintf("held (under the %.0f%% band: memory given back once idle)", 100*rssBand)
			}
			fmt.Fprintf(out, "target: RSS of %s after the drain and the idle settle %.0f MB (%+.0f%%): %s\n", name, float64(v)/1024, 100*(float64(v)/b-1), judged)
		}
	}
}

// within says whether lo and hi are within rssBand of base.
func within(lo, hi, base float64) string {
	if hi > base*(1+rssBand) || lo < base*(1-rssBand) {
		return fmt.Sprintf("MISSED (over %.0f%%)", 100*rssBand)
	}
	return fmt.Sprintf("held (within %.0f%%)", 100*rssBand)
}

type proc struct {
	pid, ppid int
	name      string
	args      []string
	rssKB     int64
	// The parts of rssKB: anonymous memory (the Go heap, stacks, the runtime's
	// spans), file pages (the binary, files mapped), shared memory (SQLite's -shm).
	anonKB, fileKB, shmemKB int64
}

// label is the process's name and its first argument (serve, persist-child).
func (p proc) label() string {
	if len(p.args) > 1 {
		return p.name + "_" + p.args[1]
	}
	return p.name
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
		if cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			p.args = strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "Name":
				p.name = v
			case "PPid":
				p.ppid, _ = strconv.Atoi(v)
			case "VmRSS":
				p.rssKB = kB(v)
			case "RssAnon":
				p.anonKB = kB(v)
			case "RssFile":
				p.fileKB = kB(v)
			case "RssShmem":
				p.shmemKB = kB(v)
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

// kB reads a /proc/PID/status size ("1234 kB").
func kB(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	return n
}
