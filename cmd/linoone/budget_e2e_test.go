package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/app/status"
	"github.com/linoone/linoone/internal/foundation/rotlog"
	"github.com/linoone/linoone/internal/local/localbus"
)

// The scaled-down budget: the facts log rotates at 1 MB and keeps 2 compressed
// files, where the defaults are 32 MB and 8.
const (
	budgetFactsMB    = 1
	budgetFactsFiles = 2
	// budgetRound is the clicks sent between two looks at the data dir: fewer than a
	// rotation's worth (a click's line is ~1.9 KB), so that no rotated file is pruned
	// before the test has looked at it, and no batch of the consumer's is larger
	// than the live log's bound (a batch is never split).
	budgetRound  = 400
	budgetRounds = 12
)

// TestDataDirBudgetScaled drives a default serve, its facts log scaled down through
// LINOONE_FACTS_LOG_MAX_MB and LINOONE_FACTS_LOG_FILES, with enough clicks to rotate
// it several times, and checks after every round that each part of the data dir but
// Persist's database is within its bound, and at the end that no click is lost:
// Persist counts every one, and the facts log's files, the pruned ones included
// (linked aside while they were kept), hold each click. The facts log kept at the
// end then rebuilds a new Persist through recover --from-log.
func TestDataDirBudgetScaled(t *testing.T) {
	in := newInstance(t, fmt.Sprintf("LINOONE_FACTS_LOG_MAX_MB=%d", budgetFactsMB),
		fmt.Sprintf("LINOONE_FACTS_LOG_FILES=%d", budgetFactsFiles), "LINOONE_LOG_LEVEL=warn")
	in.startBinary(noRaceBinary(t))
	token := in.shorten("https://example.com/budget")
	factsPath := filepath.Join(in.dataDir, datadir.Facts)
	aside := t.TempDir()
	linked := map[string]bool{}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for round := range budgetRounds {
		sendClicks(t, client, "http://"+in.resolver+"/"+token, budgetRound, 16)
		waitBusDelivered(t, in.dataDir)
		linkRotated(t, factsPath, aside, linked)
		settleRotated(t, factsPath, budgetFactsFiles+1)
		checkBudget(t, in.dataDir, fmt.Sprintf("round %d", round+1), budgetFactsFiles+1)
	}
	const sent = budgetRound * budgetRounds
	if got := in.clicks(token); got != sent {
		t.Errorf("Persist counts %d clicks, want %d", got, sent)
	}
	in.stop() // waits for the facts log's tidy: the rotated files are all compressed
	checkBudget(t, in.dataDir, "after serve stopped", budgetFactsFiles)
	rotations := len(linked)
	if rotations < 2*budgetFactsFiles+1 {
		t.Errorf("the facts log rotated %d times, want at least %d: the prune is not exercised", rotations, 2*budgetFactsFiles+1)
	}
	var files []rotlog.File
	for name := range linked {
		files = append(files, rotlog.File{Path: filepath.Join(aside, name), Compressed: strings.HasSuffix(name, ".gz")})
	}
	live, err := rotlog.Chain(factsPath)
	if err != nil {
		t.Fatal(err)
	}
	all := factKeys(t, append(files, live[len(live)-1]))
	if len(all) != sent {
		t.Errorf("the facts log's files, the pruned ones included, hold %d distinct clicks, want %d", len(all), sent)
	}
	kept := factKeys(t, live)
	t.Logf("%d clicks, %d rotations; %d clicks in the %d files kept", sent, rotations, len(kept), len(live))
	recoverInto(t, factsPath, token, len(kept))
}

// sendClicks sends n redirects to url over conns kept-alive connections.
func sendClicks(t *testing.T, client *http.Client, url string, n, conns int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	work := make(chan struct{}, n)
	for range n {
		work <- struct{}{}
	}
	close(work)
	for range conns {
		wg.Go(func() {
			for range work {
				res, err := client.Get(url)
				if err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusFound {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("redirect: %v", err)
	}
}

// waitBusDelivered waits until the consumer has delivered all the journal holds.
func waitBusDelivered(t *testing.T, dataDir string) {
	t.Helper()
	var b localbus.Backlog
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err = localbus.ReadBacklog(filepath.Join(dataDir, datadir.Bus)); err == nil && b.Bytes == 0 {
			return
		}
	}
	t.Fatalf("the journal still holds %d bytes for the consumer (%v)", b.Bytes, err)
}

// linkRotated links each file moved aside from the facts log that is not linked yet
// into aside, under its own name, so that the test still reads it once pruned.
func linkRotated(t *testing.T, factsPath, aside string, linked map[string]bool) {
	t.Helper()
	for try := 0; ; try++ {
		files, err := rotlog.Rotated(factsPath)
		if err != nil {
			t.Fatal(err)
		}
		raced := false
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f.Path), ".gz")
			if linked[name] || linked[name+".gz"] {
				continue
			}
			err := os.Link(f.Path, filepath.Join(aside, filepath.Base(f.Path)))
			if errors.Is(err, os.ErrNotExist) { // compressed or pruned meanwhile
				raced = true
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			linked[filepath.Base(f.Path)] = true
		}
		if !raced {
			return
		}
		if try == 10 {
			t.Fatal("the rotated facts logs kept changing under the test")
		}
	}
}

// settleRotated waits, up to 10 s, until at most maxRotated files have been moved
// aside from the facts log at path: the gzip yields to redirects while they are
// served, so under load it may lag a rotation behind; what must hold is that it
// catches up once the clicks are delivered (checkBudget then judges).
func settleRotated(t *testing.T, path string, maxRotated int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rotated, err := rotlog.Rotated(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(rotated) <= maxRotated {
			return
		}
	}
}

// The default bounds of the parts that have no size setting (docs/operations.md,
// "Sizing the data dir"); a scaled run stays far below them.
const (
	walBound     = 40_000*4096 + 4<<20 // wal_autocheckpoint's pages, and the -shm
	journalBound = 3 * 64 << 20        // two segments and the one filled ahead
	otherBound   = 1 << 20             // credentials, serve.json, offsets, locks
)

// checkBudget checks each part of the data dir but Persist's database against its
// bound: the facts log at most its live bound, budgetFactsFiles compressed files of
// at most half that (JSON lines gzip to a fifth or less), and, past them, as many
// as maxRotated allows still waiting for compression (plain, up to the live bound).
func checkBudget(t *testing.T, dataDir, when string, maxRotated int) {
	t.Helper()
	const live = budgetFactsMB << 20
	factsPath := filepath.Join(dataDir, datadir.Facts)
	rotated, err := rotlog.Rotated(factsPath)
	if err != nil {
		t.Fatal(err)
	}
	factsBound := int64(live + budgetFactsFiles*live/2 + (maxRotated-budgetFactsFiles)*live)
	for _, f := range rotated {
		limit := int64(live)
		if f.Compressed {
			limit = live / 2
		}
		if f.Size > limit {
			t.Errorf("%s: %s is %d bytes, over %d", when, filepath.Base(f.Path), f.Size, limit)
		}
	}
	if len(rotated) > maxRotated {
		t.Errorf("%s: %d facts logs moved aside, want at most %d (LINOONE_FACTS_LOG_FILES=%d)", when, len(rotated), maxRotated, budgetFactsFiles)
	}
	if fi, err := os.Stat(factsPath); err == nil && fi.Size() > live {
		t.Errorf("%s: facts.jsonl is %d bytes, over LINOONE_FACTS_LOG_MAX_MB=%d", when, fi.Size(), budgetFactsMB)
	}
	d, err := status.SizeDataDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	bounds := map[string]int64{status.PartFacts: factsBound, status.PartWAL: walBound, status.PartJournal: journalBound,
		status.PartDLQ: 0, status.PartRefused: 0, status.PartOther: otherBound}
	var sum, budget int64
	for _, p := range d.Parts {
		b, ok := bounds[p.Name]
		if !ok {
			continue // Persist's database: it holds every click
		}
		sum, budget = sum+p.Bytes, budget+b
		if p.Bytes > b {
			t.Errorf("%s: %s is %d bytes, over its bound %d", when, p.Name, p.Bytes, b)
		}
	}
	if sum > budget {
		t.Errorf("%s: the data dir but Persist's database is %d bytes, over the scaled budget %d", when, sum, budget)
	}
}

// factKeys reads the idempotency keys of the events in files, in full.
func factKeys(t *testing.T, files []rotlog.File) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, f := range files {
		r, err := rotlog.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e busEvent
			var d struct {
				IdempotencyKey string `json:"idempotency_key"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || json.Unmarshal(e.Detail, &d) != nil || d.IdempotencyKey == "" {
				t.Fatalf("%s: line %q is no click event (%v)", f.Path, sc.Text(), err)
			}
			keys[d.IdempotencyKey] = true
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		r.Close()
	}
	return keys
}

// recoverInto starts a serve on a new data dir and republishes there the facts log
// at factsPath, its rotated files first: the new Persist then counts want clicks.
func recoverInto(t *testing.T, factsPath, token string, want int) {
	t.Helper()
	in := newInstance(t, "LINOONE_LOG_LEVEL=warn")
	in.startBinary(noRaceBinary(t))
	out, errOut, err := in.cli("recover", "--from-log", factsPath)
	if err != nil || !strings.HasPrefix(out, fmt.Sprintf("republished %d, ", want)) || !strings.HasSuffix(out, "failed 0, invalid 0\n") {
		t.Fatalf("recover --from-log %s: %v, printed %q, want %d republished\nstderr: %s", factsPath, err, out, want, errOut)
	}
	in.waitClicks(token, int64(want))
}
