package shorturl

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestWindowDays: a window's length in days, which the window-too-long problem
// states, is right for any window, also past the ~292 years a time.Duration holds.
func TestWindowDays(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		from, to string
		days     int
	}{
		{"2026-12-01", "2026-12-01", 1},
		{"2028-02-28", "2028-03-01", 3},
		{"2027-03-01", "2028-02-29", 366},
		{"0001-01-01", "9998-12-31", 3651694},
		{"1700-01-01", "2026-12-01", 119404},
	} {
		from, _ := parseDay("from", tt.from)
		to, _ := parseDay("to", tt.to)
		if got := (Window{From: from, To: to}).Days(); got != tt.days {
			t.Errorf("%s to %s: %d days, want %d", tt.from, tt.to, got, tt.days)
		}
	}
	_, err := ParseWindow("0001-01-01", "9998-12-31", now)
	var we *WindowError
	if !errors.As(err, &we) || we.Rule != WindowTooLong || !strings.Contains(we.Detail, "spans 3651694 days") {
		t.Errorf("ParseWindow of 9,998 years: %v", err)
	}
}
