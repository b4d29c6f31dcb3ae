package shorturl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/shorturl"
)

func TestBreakdown(t *testing.T) {
	v := shorturl.Visits{PerDay: []map[string]int64{
		{"Chrome on A": 3, "bot": 50, "Firefox on B": 2},
		nil,
		{"Chrome on B": 4, "Safari on A": 2},
	}}
	for i := range 12 {
		v.PerDay[0][fmt.Sprintf("Rare%02d on C", i)] = 1
	}
	asked := map[string]int{}
	isPreview := func(ua string) bool { asked[ua]++; return ua == "bot" }
	browser := func(ua string) string { return strings.Fields(ua)[0] }
	got := v.Breakdown(isPreview, browser)
	// Most clicks first, ties by name, ten at most; previews left out.
	want := []shorturl.ClassCount{{"Chrome", 7}, {"Firefox", 2}, {"Safari", 2}, {"Rare00", 1}, {"Rare01", 1},
		{"Rare02", 1}, {"Rare03", 1}, {"Rare04", 1}, {"Rare05", 1}, {"Rare06", 1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	for ua, n := range asked {
		if n != 1 {
			t.Errorf("%q classified %d times", ua, n)
		}
	}
	if got := (shorturl.Visits{}).Breakdown(isPreview, browser); len(got) != 0 {
		t.Fatalf("no clicks: %v", got)
	}
}
