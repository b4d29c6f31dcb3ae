package client

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/linoone/linoone/api/management"
)

// Link is a short URL as Persist holds it.
type Link struct {
	Token     string
	ShortURL  string
	TargetURL string // where the short URL redirects to
	// CreatedAt is when Persist stored it (its server-managed property); zero when
	// Persist returned none.
	CreatedAt time.Time
	// Blocked says the target matched the deny list in force when the link was
	// read: the resolver answers 410 for it.
	Blocked bool
}

// linkOf is the Link of the API's answer, or false when it lacks a field every
// link has.
func linkOf(l management.Link) (Link, bool) {
	if l.Token == "" || l.ShortURL == "" || l.TargetURL == "" {
		return Link{}, false
	}
	link := Link{Token: l.Token, ShortURL: l.ShortURL, TargetURL: l.TargetURL, Blocked: l.Blocked}
	if l.CreatedAt != nil {
		link.CreatedAt = *l.CreatedAt
	}
	return link, true
}

// Inspect reads the short URL of token with GET /links/{token}, without visiting
// it: no click is recorded. An unknown token is ErrNotFound.
func (c *Client) Inspect(ctx context.Context, token string) (Link, error) {
	call := "GET /links/" + token
	res, err := c.do(ctx, call, c.retry.attempts, func(ctx context.Context) (*http.Response, error) {
		return c.api.GetLink(ctx, token)
	})
	if err != nil {
		return Link{}, err
	}
	r, err := management.ParseGetLinkResponse(res)
	if err != nil {
		return Link{}, fmt.Errorf("%s: %w", call, err)
	}
	if r.JSON200 == nil {
		return Link{}, unexpected(call, r.StatusCode(), r.Body)
	}
	link, ok := linkOf(*r.JSON200)
	if !ok {
		return Link{}, unexpected(call, r.StatusCode(), r.Body)
	}
	return link, nil
}

// Stats are a short URL's clicks, read back from the graph.
type Stats struct {
	Token          string
	Clicks         int64       // every click recorded, all time
	UniqueVisitors int64       // distinct visitor addresses of the window's clicks
	ByDay          []DayClicks // every UTC day of the window, oldest first
	// Browsers, OSes and Devices count the window's clicks that are not previews
	// by class, most clicks first, at most ten each; nil unless WithBreakdown
	// asked for that dimension.
	Browsers, OSes, Devices []ClassClicks
}

// ClassClicks are the clicks of one class of a breakdown, such as the browser
// "Chrome" or the device "mobile"; "unknown" is a User-Agent the server cannot
// place.
type ClassClicks struct {
	Name   string
	Clicks int64
}

// Dimensions of a breakdown, for WithBreakdown.
const (
	Browser = "browser"
	OS      = "os"
	Device  = "device"
)

// DayClicks are the clicks of one UTC day.
type DayClicks struct {
	Date     time.Time // midnight UTC
	Clicks   int64     // previews included
	Previews int64     // clicks by link previews and crawlers, classified when read
	// UniqueVisitors counts the distinct visitor addresses of the day's clicks.
	UniqueVisitors int64
}

// A StatsOption sets something of one Stats call.
type StatsOption func(*statsCall)

type statsCall struct {
	from, to  *string
	breakdown []string
}

// WithBreakdown asks for the window's clicks counted by each of dims: Browser,
// OS, Device.
func WithBreakdown(dims ...string) StatsOption {
	return func(c *statsCall) { c.breakdown = append(c.breakdown, dims...) }
}

// WithWindow asks for the UTC days from from to to, both included (at most 366
// days). A zero time leaves that end to the API: to is today, from 29 days before
// to.
func WithWindow(from, to time.Time) StatsOption {
	day := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		s := t.UTC().Format(time.DateOnly)
		return &s
	}
	return func(c *statsCall) { c.from, c.to = day(from), day(to) }
}

// Stats reads the clicks of token with GET /links/{token}/stats: all time and
// per UTC day of a window (by default the last 30 days). A click reaches the graph
// through the bus, so one made a moment ago may not be counted yet.
func (c *Client) Stats(ctx context.Context, token string, opts ...StatsOption) (Stats, error) {
	var sc statsCall
	for _, o := range opts {
		o(&sc)
	}
	params := management.GetLinkStatsParams{From: sc.from, To: sc.to}
	if len(sc.breakdown) > 0 {
		params.Breakdown = &sc.breakdown
	}
	call := "GET /links/" + token + "/stats"
	res, err := c.do(ctx, call, c.retry.attempts, func(ctx context.Context) (*http.Response, error) {
		return c.api.GetLinkStats(ctx, token, &params)
	})
	if err != nil {
		return Stats{}, err
	}
	r, err := management.ParseGetLinkStatsResponse(res)
	if err != nil {
		return Stats{}, fmt.Errorf("%s: %w", call, err)
	}
	s := r.JSON200
	if s == nil || s.Token == "" || s.ByDay == nil {
		return Stats{}, unexpected(call, r.StatusCode(), r.Body)
	}
	out := Stats{Token: s.Token, Clicks: s.Clicks, UniqueVisitors: s.UniqueVisitors, ByDay: make([]DayClicks, len(s.ByDay))}
	for i, d := range s.ByDay {
		out.ByDay[i] = DayClicks{Date: d.Date.Time, Clicks: d.Clicks, Previews: d.Previews, UniqueVisitors: d.UniqueVisitors}
	}
	if b := s.Breakdown; b != nil {
		out.Browsers, out.OSes, out.Devices = classes(b.Browser), classes(b.Os), classes(b.Device)
	}
	return out, nil
}

// classes converts one dimension of a breakdown; nil when it is absent.
func classes(cs *[]management.ClassCount) []ClassClicks {
	if cs == nil {
		return nil
	}
	out := make([]ClassClicks, len(*cs))
	for i, c := range *cs {
		out[i] = ClassClicks{Name: c.Name, Clicks: c.Clicks}
	}
	return out
}
