package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// Link and Visits make the fake store the management API's Clicker.
func (s *store) Link(ctx context.Context, tok shorturl.Token) (shorturl.Link, error) {
	u, err := s.Lookup(ctx, tok)
	if err != nil {
		return shorturl.Link{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return shorturl.Link{ShortURL: u, CreatedAt: s.created[tok]}, nil
}

func (s *store) Visits(ctx context.Context, tok shorturl.Token, w shorturl.Window) (shorturl.Visits, error) {
	if _, err := s.Lookup(ctx, tok); err != nil {
		return shorturl.Visits{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bounds := w.Bounds()
	v := shorturl.Visits{Total: s.clicks[tok], PerDay: make([]map[string]int64, w.Days()), UniquePerDay: make([]int64, w.Days())}
	// The fake keeps no addresses: each user agent stands for one visitor.
	inWindow := map[string]bool{}
	for i := range v.PerDay {
		v.PerDay[i] = map[string]int64{}
		for ua, times := range s.visits[tok] {
			for _, at := range times {
				if at >= bounds[i] && at < bounds[i+1] { // what Persist's query selects
					v.PerDay[i][ua]++
					inWindow[ua] = true
				}
			}
		}
		v.UniquePerDay[i] = int64(len(v.PerDay[i]))
	}
	v.Unique = int64(len(inWindow))
	return v, nil
}

func TestGetLink(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	created := time.Date(2026, 11, 30, 9, 12, 44, 120e6, time.UTC)
	st.created = map[shorturl.Token]time.Time{known.Token: created}
	other := shorturl.ShortURL{Token: "AAAAAAAAAB", Path: "https://s.example.com/AAAAAAAAAB", Target: "https://example.org/"}
	st.m[other.Token] = other
	h, _ := newManagementAPI(t, st, time.Now)

	tests := []struct {
		name, path string
		status     int
		body       string
	}{
		{"with created_at", "/links/7BTadEDkJ8", 200, `{"blocked":false,"created_at":"2026-11-30T09:12:44.12Z","short_url":"https://s.example.com/7BTadEDkJ8","target_url":"https://example.com/landing?message_id=msg_123","token":"7BTadEDkJ8"}`},
		{"without created_at", "/links/AAAAAAAAAB", 200, `{"blocked":false,"short_url":"https://s.example.com/AAAAAAAAAB","target_url":"https://example.org/","token":"AAAAAAAAAB"}`},
		{"unknown", "/links/AAAAAAAAAA", 404, ""},
		{"malformed", "/links/7BTadEDk-8", 404, ""},
		{"too short", "/links/7BTadEDkJ", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := do(t, h, signed(t, http.MethodGet, tt.path, "", nil, creds, time.Now()))
			if res.StatusCode != tt.status {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			if tt.status != 200 {
				if p := decodeProblem(t, res, body); p.Type != httpapi.ProblemTypePrefix+httpapi.CodeNotFound {
					t.Fatalf("problem %+v", p)
				}
				return
			}
			if got := strings.TrimSpace(string(body)); got != tt.body {
				t.Fatalf("body\n got %s\nwant %s", got, tt.body)
			}
		})
	}
	if st.saves != 0 {
		t.Fatal("inspecting wrote to the store")
	}
	if res, body := do(t, h, signed(t, http.MethodDelete, "/links/7BTadEDkJ8", "", nil, creds, time.Now())); res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: %d %s", res.StatusCode, body)
	}
	st.down = true
	if res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8", "", nil, creds, time.Now())); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("persist down: %d %s", res.StatusCode, body)
	}
}

// TestNewRoutesRefuseUnsigned: unsigned, mis-signed, wrongly keyed and stale requests
// to inspect and stats are 403 before the store is asked anything.
func TestNewRoutesRefuseUnsigned(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	h, _ := newManagementAPI(t, st, time.Now)
	wrong := sigv4.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: "wrong-secret-wrong-secret-wrong-secret-00"}
	for _, path := range []string{"/links/7BTadEDkJ8", "/links/7BTadEDkJ8/stats", "/links/7BTadEDkJ8/stats?from=2026-11-01&to=2026-11-30"} {
		for name, req := range map[string]*http.Request{
			"unsigned":   httptest.NewRequest(http.MethodGet, path, nil),
			"mis-signed": signed(t, http.MethodGet, path, "", nil, wrong, time.Now()),
			"stale":      signed(t, http.MethodGet, path, "", nil, creds, time.Now().Add(-time.Hour)),
		} {
			res, body := do(t, h, req)
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s: %d %s", name, path, res.StatusCode, body)
				continue
			}
			if p := decodeProblem(t, res, body); p.Type != httpapi.ProblemTypePrefix+httpapi.CodeForbidden {
				t.Errorf("%s %s: problem %+v", name, path, p)
			}
		}
	}
	if st.lookups != 0 || st.saves != 0 {
		t.Fatalf("a refused request reached the store (%d lookups, %d saves)", st.lookups, st.saves)
	}
}

type statsBody struct {
	Token  string `json:"token"`
	Clicks int64  `json:"clicks"`
	ByDay  []struct {
		Date     string `json:"date"`
		Clicks   int64  `json:"clicks"`
		Previews int64  `json:"previews"`
	} `json:"by_day"`
}

func TestLinkStatsByDay(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	st.clicks[known.Token] = 7
	const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
	st.visits = map[shorturl.Token]map[string][]string{known.Token: {
		browser:                   {"2026-10-31T23:59:59.999Z", "2026-11-01T00:00:00.000Z", "2026-11-03T12:00:00.000Z", "2026-11-03T23:59:59.999Z"},
		"facebookexternalhit/1.1": {"2026-11-03T08:00:00.000Z"},
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)": {"2026-11-01T10:00:00.000Z", "2026-11-04T00:00:00.000Z"},
	}}
	h, _ := newManagementAPI(t, st, time.Now)
	res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats?from=2026-11-01&to=2026-11-03", "", nil, creds, time.Now()))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	want := `{"by_day":[{"clicks":2,"date":"2026-11-01","previews":1,"unique_visitors":2},{"clicks":0,"date":"2026-11-02","previews":0,"unique_visitors":0},` +
		`{"clicks":3,"date":"2026-11-03","previews":1,"unique_visitors":2}],"clicks":7,"token":"7BTadEDkJ8","unique_visitors":3}`
	if got := strings.TrimSpace(string(body)); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
	// A breakdown counts the window's clicks that are not previews.
	res, body = do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats?from=2026-11-01&to=2026-11-03&breakdown=browser,os,device", "", nil, creds, time.Now()))
	var b struct {
		Breakdown map[string][]struct {
			Name   string `json:"name"`
			Clicks int64  `json:"clicks"`
		} `json:"breakdown"`
	}
	if err := json.Unmarshal(body, &b); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%d %s %v", res.StatusCode, body, err)
	}
	wantB := fmt.Sprint(map[string]any{"browser": "[{Chrome 3}]", "os": "[{Linux 3}]", "device": "[{desktop 3}]"})
	gotB := map[string]any{}
	for k, v := range b.Breakdown {
		gotB[k] = fmt.Sprint(v)
	}
	if fmt.Sprint(gotB) != wantB {
		t.Fatalf("breakdown %s, want %s", gotB, wantB)
	}
	res, body = do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats?from=2026-11-01&to=2026-11-03&breakdown=os", "", nil, creds, time.Now()))
	if !strings.Contains(string(body), `"breakdown":{"os":[{"clicks":3,"name":"Linux"}]}`) {
		t.Fatalf("os only: %d %s", res.StatusCode, body)
	}

	// The default window: the last 30 days, today (UTC) included.
	res, body = do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats", "", nil, creds, time.Now()))
	var s statsBody
	if err := json.Unmarshal(body, &s); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%d %s %v", res.StatusCode, body, err)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if len(s.ByDay) != 30 || s.ByDay[29].Date != today || s.ByDay[0].Date != time.Now().UTC().AddDate(0, 0, -29).Format("2006-01-02") {
		t.Fatalf("default window: %d days, %+v … %+v", len(s.ByDay), s.ByDay[0], s.ByDay[len(s.ByDay)-1])
	}
	// Only to: the 30 days ending there. Only from: from to today.
	for query, days := range map[string]int{"to=2026-11-30": 30, "from=" + time.Now().UTC().AddDate(0, 0, -9).Format("2006-01-02"): 10, "from=2025-01-01&to=2025-12-31": 365, "from=2024-01-01&to=2024-12-31": 366} {
		res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats?"+query, "", nil, creds, time.Now()))
		var s statsBody
		if err := json.Unmarshal(body, &s); err != nil || res.StatusCode != http.StatusOK || len(s.ByDay) != days {
			t.Errorf("%s: %d, %d days, want %d", query, res.StatusCode, len(s.ByDay), days)
		}
	}
}

func TestLinkStatsBadWindow(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	h, _ := newManagementAPI(t, st, time.Now)
	tests := []struct {
		name, query string
		status      int
		code        string
	}{
		{"out of order", "from=2026-11-30&to=2026-11-01", 400, string(shorturl.WindowOrder)},
		{"367 days", "from=2024-01-01&to=2025-01-01", 400, string(shorturl.WindowTooLong)},
		{"no such day", "from=2026-02-30&to=2026-03-01", 400, string(shorturl.WindowDate)},
		{"month 13", "to=2026-13-01", 400, string(shorturl.WindowDate)},
		{"year 9999", "from=9999-12-30&to=9999-12-31", 400, string(shorturl.WindowDate)},
		{"only from, a year ago", "from=2020-01-01", 400, string(shorturl.WindowTooLong)},
		{"not YYYY-MM-DD", "from=2026-1-01", 400, httpapi.CodeInvalidRequest},
		{"a time", "to=2026-11-01T00:00:00Z", 400, httpapi.CodeInvalidRequest},
		{"empty", "from=", 400, httpapi.CodeInvalidRequest},
		{"from twice", "from=2026-11-01&from=2026-11-02", 400, httpapi.CodeInvalidRequest},
		{"to twice", "to=2026-11-01&to=2026-11-01", 400, httpapi.CodeInvalidRequest},
		{"unknown breakdown", "breakdown=browser,colour", 400, httpapi.CodeInvalidRequest},
		{"empty breakdown", "breakdown=", 400, httpapi.CodeInvalidRequest},
		{"breakdown twice", "breakdown=os&breakdown=os", 400, httpapi.CodeInvalidRequest},
		{"breakdown repeated", "breakdown=os,os", 400, httpapi.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats?"+tt.query, "", nil, creds, time.Now()))
			if res.StatusCode != tt.status {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			if p := decodeProblem(t, res, body); p.Type != httpapi.ProblemTypePrefix+tt.code {
				t.Fatalf("problem %+v, want type …%s", p, tt.code)
			}
		})
	}
	if st.lookups != 0 {
		t.Fatalf("a bad window reached the store (%d lookups)", st.lookups)
	}
	res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats?from=2026-11-30&to=2026-11-01", "", nil, creds, time.Now()))
	decodeProblem(t, res, body)
	goldenProblem(t, "stats_window_order", body)
	// An unknown token is 404 whatever the window.
	res, body = do(t, h, signed(t, http.MethodGet, "/links/AAAAAAAAAA/stats?from=2026-11-01&to=2026-11-30", "", nil, creds, time.Now()))
	if p := decodeProblem(t, res, body); res.StatusCode != 404 || p.Type != httpapi.ProblemTypePrefix+httpapi.CodeNotFound {
		t.Fatalf("unknown token: %d %+v", res.StatusCode, p)
	}
}

func TestWindowDefaults(t *testing.T) {
	now := time.Date(2026, 3, 1, 23, 59, 0, 0, time.FixedZone("x", -5*3600)) // 2026-03-02 UTC
	w, err := shorturl.ParseWindow("", "", now)
	if err != nil {
		t.Fatal(err)
	}
	b := w.Bounds()
	got := []string{b[0], b[len(b)-1], w.From.Format(time.DateOnly), w.To.Format(time.DateOnly)}
	if diff := cmp.Diff([]string{"2026-02-01", "2026-03-03", "2026-02-01", "2026-03-02"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if w.Days() != 30 || len(b) != 31 || b[1] != "2026-02-02" {
		t.Fatalf("%d days", w.Days())
	}
}
