package persist_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/testutil/cputime"
)

// visit is one click to seed: its time and user agent.
type visit struct {
	at time.Time
	ua string
	ip string // "" is 192.0.2.1
}

func (v visit) address() string {
	if v.ip == "" {
		return "192.0.2.1"
	}
	return v.ip
}

// seedVisits ingests clicks on u as the bus consumer would (ingestVisits).
func seedVisits(tb testing.TB, c *persist.Client, u shorturl.ShortURL, visits []visit) {
	tb.Helper()
	if err := ingestVisits(context.Background(), c, u, visits); err != nil {
		tb.Fatal(err)
	}
}

// ingestVisits ingests clicks on u as the bus consumer would: short_url_visited
// self-loops carrying exactly the fact's four properties, in documents of 500. It
// returns its error, so that goroutines other than the test's may call it.
func ingestVisits(ctx context.Context, c *persist.Client, u shorturl.ShortURL, visits []visit) error {
	doc, err := u.Artifact()
	if err != nil {
		return err
	}
	v := doc.Vertices[0]
	for start := 0; start < len(visits); start += 500 {
		batch := graphson.Document{Vertices: []graphson.Vertex{v}}
		for _, vi := range visits[start:min(start+500, len(visits))] {
			e, err := graphson.NewEdge("short_url_visited", v, v, graphson.Properties{
				"event_identifier":   "ev_" + ulid.Make().String(),
				"visitor_ip_address": vi.address(),
				"user_agent":         vi.ua,
				"effective_at":       vi.at.UTC().Format("2006-01-02T15:04:05.000Z"),
			})
			if err != nil {
				return err
			}
			batch.Edges = append(batch.Edges, e)
		}
		if err := c.Ingest(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// savedLink is a client of a fresh local Persist holding the short URL of tok.
func savedLink(tb testing.TB, tok shorturl.Token) (*persist.Client, shorturl.ShortURL) {
	tb.Helper()
	c := newClient(tb, startLocalPersist(tb), false)
	u := shorturl.ShortURL{Token: tok, Path: "https://s.example.com/" + string(tok), Target: "https://example.com/"}
	if err := c.Save(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
	return c, u
}

func TestLinkAndVisitsAgainstLocalPersist(t *testing.T) {
	base := startLocalPersist(t)
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%t", inline), func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, base, inline)
			u := shorturl.ShortURL{Token: shorturl.Token(fmt.Sprintf("LinkTest%02d", map[bool]int{false: 0, true: 1}[inline])),
				Target: "https://example.com/it's"}
			u.Path = "https://s.example.com/" + string(u.Token)
			w, err := shorturl.ParseWindow("2026-11-01", "2026-11-03", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Link(ctx, u.Token); !errors.Is(err, shorturl.ErrNotFound) {
				t.Fatalf("Link of an unknown token: %v", err)
			}
			if _, err := c.Visits(ctx, u.Token, w); !errors.Is(err, shorturl.ErrNotFound) {
				t.Fatalf("Visits of an unknown token: %v", err)
			}
			before := time.Now().Add(-time.Second)
			if err := c.Save(ctx, u); err != nil {
				t.Fatal(err)
			}
			l, err := c.Link(ctx, u.Token)
			if err != nil || l.ShortURL != u || l.CreatedAt.Before(before) || l.CreatedAt.After(time.Now().Add(time.Second)) {
				t.Fatalf("Link = %+v, %v", l, err)
			}
			v, err := c.Visits(ctx, u.Token, w)
			if err != nil || v.Total != 0 || !cmp.Equal(v.PerDay, []map[string]int64{{}, {}, {}}) {
				t.Fatalf("Visits before clicks = %+v, %v", v, err)
			}
			day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
			seedVisits(t, c, u, []visit{
				{day(1, 0), "a", "192.0.2.1"}, {day(1, 5), "a", "192.0.2.2"}, {day(3, 23).Add(59*time.Minute + 59*time.Second + 999*time.Millisecond), "b 'quoted'", "192.0.2.1"},
				{day(4, 0), "a", "192.0.2.3"}, {day(1, 0).Add(-time.Millisecond), "a", "192.0.2.3"},
			})
			v, err = c.Visits(ctx, u.Token, w)
			if err != nil {
				t.Fatal(err)
			}
			// Two visitors in the window, though the days' add up to three: one came twice.
			want := shorturl.Visits{Total: 5, PerDay: []map[string]int64{{"a": 2}, {}, {"b 'quoted'": 1}}, Unique: 2, UniquePerDay: []int64{2, 0, 1}}
			if diff := cmp.Diff(want, v); diff != "" {
				t.Fatalf("Visits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVisitsMalformedAnswers(t *testing.T) {
	w, _ := shorturl.ParseWindow("2026-11-01", "2026-11-03", time.Now())
	for name, data := range map[string]string{
		"clicks not a count":     `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks","many"]}]}`,
		"another token":          `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","AAAAAAAAAA","clicks",{"@type":"g:Int64","@value":1}]}]}`,
		"day not a map":          `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks",{"@type":"g:Int64","@value":1},"d0","x"]}]}`,
		"count not a count":      `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks",{"@type":"g:Int64","@value":1},"d1",{"@type":"g:Map","@value":["ua","x"]}]}]}`,
		"a day past any count":   `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks",{"@type":"g:Int64","@value":1},"d0",{"@type":"g:Map","@value":["a",{"@type":"g:Int64","@value":9223372036854775807},"b",{"@type":"g:Int64","@value":9223372036854775807}]}]}]}`,
		"several short_url rows": `{"@type":"g:List","@value":[{"@type":"g:Map","@value":[]},{"@type":"g:Map","@value":[]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"status":{"code":200,"message":""},"result":{"data":` + data + `}}`))
			}))
			defer srv.Close()
			_, err := newClient(t, srv.URL, false).Visits(context.Background(), "7BTadEDkJ8", w)
			if !errors.Is(err, shorturl.ErrUnavailable) && !errors.Is(err, shorturl.ErrInvalidStored) {
				t.Fatalf("err = %v; want unavailable or invalid stored", err)
			}
		})
	}
}

func TestLinkCreatedAtForms(t *testing.T) {
	for name, tt := range map[string]struct {
		value string
		want  time.Time
		ok    bool
	}{
		"absent":       {"", time.Time{}, true},
		"rfc 3339":     {`,"created_at","2026-11-30T09:12:44.120Z"`, time.Date(2026, 11, 30, 9, 12, 44, 120e6, time.UTC), true},
		"g:Date":       {`,"created_at",{"@type":"g:Date","@value":1796029964120}`, time.UnixMilli(1796029964120).UTC(), true},
		"not a time":   {`,"created_at","yesterday"`, time.Time{}, false},
		"not a string": {`,"created_at",{"@type":"g:Int64","@value":1}`, time.Time{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[{"@type":"g:Map","@value":[` +
					`"short_url_token","7BTadEDkJ8","short_url_path","https://s.example.com/7BTadEDkJ8","target_url","https://example.com/"` + tt.value + `]}]}}}`))
			}))
			defer srv.Close()
			l, err := newClient(t, srv.URL, false).Link(context.Background(), "7BTadEDkJ8")
			if (err == nil) != tt.ok || !l.CreatedAt.Equal(tt.want) {
				t.Fatalf("Link = %+v, %v", l, err)
			}
			if !tt.ok && !errors.Is(err, shorturl.ErrUnavailable) {
				t.Fatalf("err = %v; want unavailable", err)
			}
		})
	}
}

// BenchmarkStats100k answers GET /links/{token}/stats for a short URL with 100,000
// clicks from 5,000 visitors in its default 30-day window, with the browser, OS and
// device breakdown, through the management API, the Persist client and local
// Persist over loopback HTTP (issues 10 and 41: at most 200 ms). The clicks arrive
// in time order, as traffic does, and the stats are asked for once the burst is
// over and serve's local Persist has checkpointed its WAL (Options.IdleCheckpoint):
// what an operator meets. The first request, which finds no page in any cache of
// local Persist's, is reported on its own (first-ms, first-cpu-ms, and first-minflt,
// the page faults it took: a reader maps the database file afresh after every
// write, see docs/performance.md); ns/op, cpu-ms/op and minflt/op are the steady
// state after it.
func BenchmarkStats100k(b *testing.B) {
	base, path := startLocalPersistFile(b)
	c := newClient(b, base, false)
	u := shorturl.ShortURL{Token: "Bench10000", Path: "https://s.example.com/Bench10000", Target: "https://example.com/"}
	if err := c.Save(context.Background(), u); err != nil {
		b.Fatal(err)
	}
	uas := []string{"facebookexternalhit/1.1", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Twitterbot/1.0"}
	for i := range 47 {
		uas = append(uas, fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Safari/537.36", i))
	}
	now := time.Now().UTC()
	visits := make([]visit, 100_000)
	for i := range visits {
		visits[i] = visit{at: now.Add(-time.Duration(len(visits)-1-i) * (29 * 24 * time.Hour / 100_000)), ua: uas[i%len(uas)],
			ip: fmt.Sprintf("198.51.%d.%d", i%5_000/250, i%250)} // 5,000 visitors, oldest click first
	}
	seedVisits(b, c, u, visits)
	waitWALTruncated(b, path)
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: c, ResolverBaseURL: "https://s.example.com", Rand: rand.Reader})
	if err != nil {
		b.Fatal(err)
	}
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: c})
	if err != nil {
		b.Fatal(err)
	}
	stats := func() []byte {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/links/Bench10000/stats?breakdown=browser,os,device", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	// CPU time as well as wall time: on a shared machine the wall time of a run
	// mostly says how busy the other processes were.
	cpu, faults, start := cputime.Process(b), cputime.MinorFaults(b), time.Now()
	first := stats()
	firstWall, firstCPU, firstFaults := time.Since(start), cputime.Process(b)-cpu, cputime.MinorFaults(b)-faults
	checkStats100k(b, first)
	var body []byte
	cpu, faults = cputime.Process(b), cputime.MinorFaults(b)
	for b.Loop() {
		body = stats()
	}
	// After the loop: its first b.Loop deletes the metrics reported before it.
	b.ReportMetric(float64(cputime.Process(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(cputime.MinorFaults(b)-faults)/float64(b.N), "minflt/op")
	b.ReportMetric(float64(firstWall)/1e6, "first-ms")
	b.ReportMetric(float64(firstCPU)/1e6, "first-cpu-ms")
	b.ReportMetric(float64(firstFaults), "first-minflt")
	checkStats100k(b, body)
}

// waitWALTruncated waits for local Persist's idle checkpoint to cut the WAL of the
// database at path to zero bytes, as serve's does once a burst of clicks is over.
func waitWALTruncated(tb testing.TB, path string) {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() == 0 {
			return
		}
	}
	tb.Fatal("the WAL was not checkpointed and truncated within 30 s of the last write")
}

// checkStats100k checks BenchmarkStats100k's answer.
func checkStats100k(b *testing.B, body []byte) {
	b.Helper()
	var s struct {
		Clicks         int64 `json:"clicks"`
		UniqueVisitors int64 `json:"unique_visitors"`
		ByDay          []struct {
			Clicks, Previews int64
		} `json:"by_day"`
		Breakdown struct {
			Browser []struct{ Clicks int64 } `json:"browser"`
		} `json:"breakdown"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		b.Fatal(err)
	}
	var inWindow, previews int64
	for _, d := range s.ByDay {
		inWindow += d.Clicks
		previews += d.Previews
	}
	if s.Clicks != 100_000 || inWindow != 100_000 || previews != 6_000 || s.UniqueVisitors != 5_000 {
		b.Fatalf("clicks %d, in window %d, previews %d, unique visitors %d", s.Clicks, inWindow, previews, s.UniqueVisitors)
	}
	if len(s.Breakdown.Browser) != 1 || s.Breakdown.Browser[0].Clicks != 94_000 {
		b.Fatalf("browsers %+v", s.Breakdown.Browser)
	}
}

// TestVisitsLongestWindow asks for the longest window allowed, one groupCount per
// day (a query of some 48 KB), bound and inlined, and finds every click on its day.
func TestVisitsLongestWindow(t *testing.T) {
	base := startLocalPersist(t)
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%t", inline), func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, base, inline)
			u := shorturl.ShortURL{Token: shorturl.Token(fmt.Sprintf("LongWin%03d", map[bool]int{false: 0, true: 1}[inline])), Target: "https://example.com/"}
			u.Path = "https://s.example.com/" + string(u.Token)
			if err := c.Save(ctx, u); err != nil {
				t.Fatal(err)
			}
			w, err := shorturl.ParseWindow("2025-11-30", "2026-11-30", time.Now())
			if err != nil || w.Days() != shorturl.MaxWindowDays {
				t.Fatalf("window %+v (%d days), %v", w, w.Days(), err)
			}
			first, last := time.Date(2025, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 23, 59, 59, 999e6, time.UTC)
			seedVisits(t, c, u, []visit{{first, "a", ""}, {last, "b", ""}, {last, "b", ""}, {first.Add(-time.Millisecond), "a", ""}})
			v, err := c.Visits(ctx, u.Token, w)
			if err != nil {
				t.Fatal(err)
			}
			if v.Total != 4 || len(v.PerDay) != w.Days() || !cmp.Equal(v.PerDay[0], map[string]int64{"a": 1}) || !cmp.Equal(v.PerDay[w.Days()-1], map[string]int64{"b": 2}) {
				t.Fatalf("Visits = total %d, %d days, first %v, last %v", v.Total, len(v.PerDay), v.PerDay[0], v.PerDay[len(v.PerDay)-1])
			}
		})
	}
}

// TestVisitsOneRequestWhereItFits: the stats of the default window take one request,
// which local Persist answers in one read of the window's clicks; the longest
// window's would pass the 64 KiB a Gremlin server takes, and take two under it.
func TestVisitsOneRequestWhereItFits(t *testing.T) {
	target, err := url.Parse(startLocalPersist(t))
	if err != nil {
		t.Fatal(err)
	}
	var requests, largest atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.ContentLength > largest.Load() {
			largest.Store(r.ContentLength)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, inline := range []bool{false, true} {
		c := newClient(t, srv.URL, inline)
		u := shorturl.ShortURL{Token: shorturl.Token(fmt.Sprintf("OneReq%04d", map[bool]int{false: 0, true: 1}[inline])), Target: "https://example.com/"}
		u.Path = "https://s.example.com/" + string(u.Token)
		if err := c.Save(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		seedVisits(t, c, u, []visit{{now, "a", "192.0.2.1"}, {now, "b", "192.0.2.2"}, {now.Add(-24 * time.Hour), "a", "192.0.2.1"}})
		// The default window, the longest, and those around the longest that
		// fits, whose one project() has the most keys.
		for _, days := range append([]int{0, shorturl.MaxWindowDays}, rangeOf(200, 240)...) {
			from := ""
			if days > 0 {
				from = now.AddDate(0, 0, 1-days).Format("2006-01-02")
			}
			w, err := shorturl.ParseWindow(from, "", now)
			if err != nil {
				t.Fatal(err)
			}
			requests.Store(0)
			largest.Store(0)
			v, err := c.Visits(context.Background(), u.Token, w)
			if err != nil {
				t.Fatalf("inline=%t, %d days: %v", inline, w.Days(), err)
			}
			want := map[int]int64{0: 1, shorturl.MaxWindowDays: 2}[days]
			if got := requests.Load(); (want != 0 && got != want) || got > 2 || largest.Load() > 64<<10 {
				t.Errorf("inline=%t, %d days: %d requests, the largest %d bytes; want %d of at most 64 KiB", inline, w.Days(), got, largest.Load(), want)
			}
			days := len(v.UniquePerDay)
			if v.Total != 3 || v.Unique != 2 || v.UniquePerDay[days-1] != 2 || v.UniquePerDay[days-2] != 1 || !cmp.Equal(v.PerDay[days-1], map[string]int64{"a": 1, "b": 1}) {
				t.Errorf("inline=%t, %d days: Visits = total %d, unique %d, last days %v %v", inline, w.Days(), v.Total, v.Unique, v.UniquePerDay[days-2:], v.PerDay[days-1])
			}
		}
	}
}

// rangeOf is the integers from lo to hi.
func rangeOf(lo, hi int) []int {
	var r []int
	for i := lo; i <= hi; i++ {
		r = append(r, i)
	}
	return r
}

// TestVisitsAreOneSnapshot: the all-time count and the window's days are read in one
// query; while clicks arrive, the days must never add up to more than the whole.
func TestVisitsAreOneSnapshot(t *testing.T) {
	ctx := context.Background()
	c, u := savedLink(t, "SnapShot01")
	w, err := shorturl.ParseWindow("", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() { // clicks arriving, two a commit, up to 2,000: each read costs a pass
		// over the link's clicks (the distinct visitors), so an unbounded writer
		// makes the reads quadratic under -race
		for i := 0; ; i++ {
			if i == 1000 {
				<-stop
			}
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := ingestVisits(ctx, c, u, []visit{{time.Now(), "a", ""}, {time.Now(), "b", ""}}); err != nil {
				done <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for range 300 {
		got, err := c.Visits(ctx, u.Token, w)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, day := range got.PerDay {
			for _, n := range day {
				sum += n
			}
		}
		if sum > got.Total {
			t.Fatalf("%d clicks of all time, but the window's days hold %d", got.Total, sum)
		}
	}
}
