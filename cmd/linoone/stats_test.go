package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/linoone/linoone/api/management"
)

func TestBar(t *testing.T) {
	for _, tt := range []struct {
		n, most int64
		want    string
	}{
		{0, 10, ""},
		{10, 10, strings.Repeat("█", 30)},
		{5, 10, strings.Repeat("█", 15)},
		{1, 1000, "▏"}, // a click is never drawn as nothing
		{1, 16, "█▉"},  // 30/16 cells = 1 and 7/8
		{3, 0, ""},
	} {
		if got := bar(tt.n, tt.most); got != tt.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tt.n, tt.most, got, tt.want)
		}
	}
}

func TestPrintStats(t *testing.T) {
	day := func(d int) openapi_types.Date { return openapi_types.Date{Time: time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC)} }
	s := &management.LinkStats{Token: "7BTadEDkJ8", Clicks: 12, UniqueVisitors: 3, ByDay: []management.DayClicks{
		{Date: day(1), Clicks: 8, Previews: 1, UniqueVisitors: 2},
		{Date: day(2), Clicks: 0},
		{Date: day(3), Clicks: 2, UniqueVisitors: 2},
	}, Breakdown: &management.ClickBreakdown{
		Browser: &[]management.ClassCount{{Name: "Chrome", Clicks: 6}, {Name: "evil\x1b[2J", Clicks: 3}},
		Device:  &[]management.ClassCount{},
	}}
	var out bytes.Buffer
	if err := printStats(&out, s); err != nil {
		t.Fatal(err)
	}
	want := `        date  clicks  previews  visitors
  2026-11-01       8         1         2  ██████████████████████████████
  2026-11-02       0         0         0
  2026-11-03       2         0         2  ███████▌
      window      10         1         3
    all time      12

browser (clicks that are not previews)
  Chrome    6  ██████████████████████████████
  evil?[2J  3  ███████████████

device (clicks that are not previews)
  none
`
	if got := out.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
