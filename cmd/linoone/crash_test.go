package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/testutil/testlayer"
)

// TestCrashUnderLoad is issue 8's durability promise under load: `kill -9` of serve
// while redirects are being answered loses no acknowledged click (a 302 means the
// click's fact is on the bus) and duplicates none, in each bus sync mode (both
// promise to survive a crash of the process; only a machine crash tells them apart).
//
// Every request carries its own User-Agent, which the fact records, so each
// acknowledged request can be found in facts.jsonl after a restart has let the
// consumer deliver the journal.
func TestCrashUnderLoad(t *testing.T) {
	bin := noRaceBinary(t)
	for _, mode := range []string{"each", "interval"} {
		t.Run("sync="+mode, func(t *testing.T) {
			in := newInstance(t, "LINOONE_BUS_SYNC="+mode, "LINOONE_CONSUMER=inline", "LINOONE_LOG_LEVEL=warn")
			in.startBinary(bin)
			tokens := shortenN(t, in, 20)

			sent := loadAndKill(t, in, tokens, 16, time.Second, 3*time.Second)

			in.startBinary(bin) // same data dir and ports
			facts := waitDelivered(t, in, tokens, sent)
			checkCrashFacts(t, in, tokens, sent, facts)
		})
	}
}

var noRace struct {
	once sync.Once
	path string
	err  error
}

// noRaceBinary builds linoone without the race detector, so that the server under
// load runs at its real speed, next to the e2e binary (TestMain removes both).
func noRaceBinary(t *testing.T) string {
	t.Helper()
	testlayer.Skip(t, testlayer.EndToEnd)
	noRace.once.Do(func() {
		noRace.path = filepath.Join(filepath.Dir(binary), "linoone-norace")
		if out, err := exec.Command("go", "build", "-o", noRace.path, ".").CombinedOutput(); err != nil {
			noRace.err = fmt.Errorf("build linoone: %v\n%s", err, out)
		}
	})
	if noRace.err != nil {
		t.Fatal(noRace.err)
	}
	return noRace.path
}

func shortenN(t *testing.T, in *instance, n int) []string {
	t.Helper()
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = in.shorten(fmt.Sprintf("https://www.example.com/articles/%d/crash?id=%d", i, i))
	}
	return tokens
}

// request is one redirect sent during the load.
type request struct {
	token string
	acked bool // answered 302
}

// loadAndKill sends redirects from workers goroutines, each with a unique
// User-Agent, kills serve (SIGKILL) after killAfter and returns every request sent
// by User-Agent. The load stops at the kill, or at limit if the kill fails.
func loadAndKill(t *testing.T, in *instance, tokens []string, workers int, killAfter, limit time.Duration) map[string]request {
	t.Helper()
	client := &http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: workers},
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	killed := make(chan struct{})
	var killErr error
	timer := time.AfterFunc(killAfter, func() {
		killErr = in.cmd.Process.Kill()
		close(killed)
	})
	defer timer.Stop()

	perWorker := make([]map[string]request, workers)
	var wg sync.WaitGroup
	for w := range workers {
		perWorker[w] = map[string]request{}
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				ua := fmt.Sprintf("crash-test/%d/%d", w, n)
				tok := tokens[(w+n)%len(tokens)]
				status, err := get(ctx, client, "http://"+in.resolver+"/"+tok, ua)
				perWorker[w][ua] = request{token: tok, acked: err == nil && status == http.StatusFound}
				if err != nil {
					select {
					case <-killed:
						return // serve is gone
					default:
					}
				}
			}
		})
	}
	wg.Wait()
	<-killed
	if killErr != nil {
		t.Fatalf("kill serve: %v", killErr)
	}
	<-in.exited // "signal: killed": the cleanup's stop is a no-op

	sent := map[string]request{}
	for _, m := range perWorker {
		for ua, r := range m {
			sent[ua] = r
		}
	}
	return sent
}

func get(ctx context.Context, client *http.Client, url, userAgent string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", userAgent)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, err
}

// crashFact is what the test reads of one facts.jsonl line.
type crashFact struct {
	key, token, userAgent string
}

// waitDelivered waits (at most 30 s) until the restarted serve's consumer has
// delivered the journal: facts.jsonl holds at least one line per acknowledged click,
// has not grown for a second, and the graph counts as many clicks as it has facts.
func waitDelivered(t *testing.T, in *instance, tokens []string, sent map[string]request) []crashFact {
	t.Helper()
	acked := 0
	for _, r := range sent {
		if r.acked {
			acked++
		}
	}
	path := filepath.Join(in.dataDir, "facts.jsonl")
	var facts []crashFact
	lastLen, stableSince := -1, time.Now()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		facts = readCrashFacts(t, path)
		if len(facts) != lastLen {
			lastLen, stableSince = len(facts), time.Now()
		}
		if len(facts) >= acked && time.Since(stableSince) >= time.Second && sumClicks(in, tokens) == int64(len(facts)) {
			return facts
		}
		if time.Now().After(deadline) {
			t.Logf("delivery did not settle within 30 s: %d facts, %d acknowledged", len(facts), acked)
			return facts
		}
	}
}

func sumClicks(in *instance, tokens []string) int64 {
	var n int64
	for _, tok := range tokens {
		n += in.clicks(tok)
	}
	return n
}

func readCrashFacts(t *testing.T, path string) []crashFact {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type value struct {
		Value string `json:"value"`
	}
	var out []crashFact
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var e struct {
			Detail struct {
				IdempotencyKey string `json:"idempotency_key"`
				GraphSON       struct {
					Vertices []struct {
						Value struct {
							Properties struct {
								Token []struct {
									Value value `json:"@value"`
								} `json:"short_url_token"`
							} `json:"properties"`
						} `json:"@value"`
					} `json:"vertices"`
					Edges []struct {
						Value struct {
							Properties struct {
								UserAgent struct {
									Value value `json:"@value"`
								} `json:"user_agent"`
							} `json:"properties"`
						} `json:"@value"`
					} `json:"edges"`
				} `json:"graphson"`
			} `json:"detail"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("facts.jsonl line %d is not an event (%v): %.200s", line, err, sc.Text())
		}
		g := e.Detail.GraphSON
		if len(g.Edges) != 1 || len(g.Vertices) != 1 || len(g.Vertices[0].Value.Properties.Token) != 1 {
			t.Fatalf("facts.jsonl line %d: not one short_url vertex and one edge: %.200s", line, sc.Text())
		}
		out = append(out, crashFact{
			key:       e.Detail.IdempotencyKey,
			token:     g.Vertices[0].Value.Properties.Token[0].Value.Value,
			userAgent: g.Edges[0].Value.Properties.UserAgent.Value.Value,
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCrashFacts asserts that every acknowledged request is exactly one fact, that
// no fact is there twice, and that the graph counts exactly the facts of each token.
func checkCrashFacts(t *testing.T, in *instance, tokens []string, sent map[string]request, facts []crashFact) {
	t.Helper()
	byUA := map[string]int{}
	keys := map[string]bool{}
	perToken := map[string]int64{}
	duplicated := 0
	for _, f := range facts {
		byUA[f.userAgent]++
		if keys[f.key] || byUA[f.userAgent] > 1 {
			duplicated++
			if duplicated <= 5 {
				t.Errorf("fact %s (%s) delivered more than once", f.key, f.userAgent)
			}
			continue
		}
		keys[f.key] = true
		perToken[f.token]++
		r, ok := sent[f.userAgent]
		switch {
		case !ok:
			t.Errorf("fact %s for a request the test never sent (%q)", f.key, f.userAgent)
		case r.token != f.token:
			t.Errorf("fact %s (%s) is for token %s, the request was for %s", f.key, f.userAgent, f.token, r.token)
		}
	}
	acked, lost, unackedRecorded := 0, 0, 0
	for ua, r := range sent {
		switch {
		case r.acked && byUA[ua] == 0:
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged click %s (token %s) is not in facts.jsonl", ua, r.token)
			}
		case !r.acked && byUA[ua] > 0:
			unackedRecorded++
		}
		if r.acked {
			acked++
		}
	}
	for _, tok := range tokens {
		if got := in.clicks(tok); got != perToken[tok] {
			t.Errorf("token %s: the graph counts %d clicks, facts.jsonl has %d", tok, got, perToken[tok])
		}
	}
	t.Logf("sent %d, acknowledged %d, unacknowledged but recorded %d, lost %d, duplicated %d (facts %d)",
		len(sent), acked, unackedRecorded, lost, duplicated, len(facts))
	if acked == 0 {
		t.Fatalf("no request was acknowledged before the kill: the test proved nothing\n%s", in.logs)
	}
}
