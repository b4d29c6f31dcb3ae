package shorturl

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Link is a short URL read back from Persist for inspection, with Persist's
// server-managed creation time (zero when Persist returned none). Reading it is not a
// visit.
type Link struct {
	ShortURL
	CreatedAt time.Time
}

// Stats windows: whole UTC days, both ends included.
const (
	MaxWindowDays     = 366
	DefaultWindowDays = 30
	dayLayout         = "2006-01-02"
)

// ErrInvalidWindow is matched (errors.Is) by every *WindowError.
var ErrInvalidWindow = errors.New("invalid stats window")

// WindowRule names one rule of a stats window. It is stable and appears in problem
// types.
type WindowRule string

// The stats window rules.
const (
	WindowDate    WindowRule = "stats-date-malformed"
	WindowOrder   WindowRule = "stats-window-order"
	WindowTooLong WindowRule = "stats-window-too-long"
)

// WindowError is a broken stats window rule with a human-readable detail.
type WindowError struct {
	Rule   WindowRule
	Detail string
}

func (e *WindowError) Error() string { return e.Detail }

// Is makes errors.Is(err, ErrInvalidWindow) true.
func (e *WindowError) Is(target error) bool { return target == ErrInvalidWindow }

// Window is a range of whole UTC days: From and To are midnights, both included.
type Window struct {
	From, To time.Time
}

// ParseWindow reads a stats window from its query parameters, YYYY-MM-DD each. An
// empty to is today (UTC, from now); an empty from is DefaultWindowDays-1 days before
// to. The window runs forward and spans at most MaxWindowDays days.
func ParseWindow(from, to string, now time.Time) (Window, error) {
	var w Window
	var err error
	if to == "" {
		y, m, d := now.UTC().Date()
		w.To = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	} else if w.To, err = parseDay("to", to); err != nil {
		return Window{}, err
	}
	if from == "" {
		w.From = w.To.AddDate(0, 0, -(DefaultWindowDays - 1))
	} else if w.From, err = parseDay("from", from); err != nil {
		return Window{}, err
	}
	switch {
	case w.To.Before(w.From):
		return Window{}, &WindowError{Rule: WindowOrder, Detail: fmt.Sprintf("to (%s) is before from (%s)", w.To.Format(dayLayout), w.From.Format(dayLayout))}
	case w.Days() > MaxWindowDays:
		return Window{}, &WindowError{Rule: WindowTooLong, Detail: fmt.Sprintf("the window from %s to %s spans %d days; at most %d are allowed",
			w.From.Format(dayLayout), w.To.Format(dayLayout), w.Days(), MaxWindowDays)}
	}
	return w, nil
}

// parseDay reads one YYYY-MM-DD calendar day. Years run from 0001 to 9998, so that
// the day after any window is still a four-digit year and effective_at strings
// (2006-01-02T15:04:05.000Z) compare with day strings in time order.
func parseDay(name, s string) (time.Time, error) {
	t, err := time.Parse(dayLayout, s)
	if err != nil || t.Format(dayLayout) != s || t.Year() < 1 || t.Year() > 9998 {
		return time.Time{}, &WindowError{Rule: WindowDate, Detail: fmt.Sprintf("%s %q is not a calendar day written YYYY-MM-DD (years 0001 to 9998)", name, s)}
	}
	return t, nil
}

// Days is the number of days of the window. From and To are UTC midnights, so it is
// their distance in seconds over a day's; time.Time.Sub would saturate at ~292 years
// and misstate a longer window's length in the window-too-long problem.
func (w Window) Days() int { return int((w.To.Unix()-w.From.Unix())/86400) + 1 }

// Visits are a short URL's clicks read back from Persist: all of them counted, and
// those of each day of a window counted by the visitor's user agent.
type Visits struct {
	Total int64
	// PerDay has one entry per day of the window, oldest first (see Window.Bounds):
	// that day's clicks by user agent. A missing or nil entry is a day without clicks.
	PerDay []map[string]int64
	// Unique is the number of distinct visitor addresses of the window's clicks, and
	// UniquePerDay that of each day's (a missing entry is a day without clicks). The
	// addresses themselves are never read back.
	Unique       int64
	UniquePerDay []int64
}

// Bounds are the days+1 bounds of the window's days for effective_at, YYYY-MM-DD:
// day i holds the click times t with Bounds[i] <= t < Bounds[i+1] (an effective_at,
// 2006-01-02T15:04:05.000Z, sorts after its own day and before the next).
func (w Window) Bounds() []string {
	b := make([]string, w.Days()+1)
	for i := range b {
		b[i] = w.From.AddDate(0, 0, i).Format(dayLayout)
	}
	return b
}

// DayClicks are the clicks of one UTC day; Previews counts those whose user agent is
// a link preview or a crawler.
type DayClicks struct {
	Day      time.Time
	Clicks   int64
	Previews int64
	Unique   int64
}

// ByDay lists the clicks of every day of w, oldest first, days without clicks
// included. isPreview classifies each distinct user agent once.
func (v Visits) ByDay(w Window, isPreview func(userAgent string) bool) []DayClicks {
	days := make([]DayClicks, w.Days())
	previews := make(map[string]bool)
	for i := range days {
		days[i].Day = w.From.AddDate(0, 0, i)
		if i < len(v.UniquePerDay) {
			days[i].Unique = v.UniquePerDay[i]
		}
		if i >= len(v.PerDay) {
			continue
		}
		for ua, n := range v.PerDay[i] {
			preview, ok := previews[ua]
			if !ok {
				preview = isPreview(ua)
				previews[ua] = preview
			}
			days[i].Clicks += n
			if preview {
				days[i].Previews += n
			}
		}
	}
	return days
}

// ClassCount is how many clicks one class of a breakdown (a browser, an operating
// system, a kind of device) had.
type ClassCount struct {
	Name   string
	Clicks int64
}

// MaxClasses is how many classes a breakdown lists.
const MaxClasses = 10

// Breakdown counts the window's clicks that are not previews by the class classify
// gives their user agent, and lists the MaxClasses classes with the most clicks,
// ties by name. classify and isPreview are asked once per distinct user agent.
func (v Visits) Breakdown(isPreview func(userAgent string) bool, classify func(userAgent string) string) []ClassCount {
	byUA := make(map[string]int64)
	for _, day := range v.PerDay {
		for ua, n := range day {
			byUA[ua] += n
		}
	}
	byClass := make(map[string]int64)
	for ua, n := range byUA {
		if !isPreview(ua) {
			byClass[classify(ua)] += n
		}
	}
	out := make([]ClassCount, 0, len(byClass))
	for name, n := range byClass {
		out = append(out, ClassCount{Name: name, Clicks: n})
	}
	slices.SortFunc(out, func(a, b ClassCount) int {
		if c := cmp.Compare(b.Clicks, a.Clicks); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(len(out), MaxClasses)]
}
