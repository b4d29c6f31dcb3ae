package mgmtapi

import (
	"fmt"
	"testing"
)

func TestVerdictCacheAsksOncePerUserAgentAndStaysBounded(t *testing.T) {
	calls := map[string]int{}
	c := newVerdictCache(func(ua string) bool { calls[ua]++; return ua == "Slackbot" })
	for range 3 {
		if !c.of("Slackbot") || c.of("Mozilla/5.0") {
			t.Fatal("a verdict changed")
		}
	}
	if calls["Slackbot"] != 1 || calls["Mozilla/5.0"] != 1 {
		t.Fatalf("detector calls %v, want one per user agent", calls)
	}
	for i := range verdictCacheSize + 5 {
		c.of(fmt.Sprint("agent ", i))
	}
	if len(c.seen) > verdictCacheSize {
		t.Fatalf("%d verdicts kept, at most %d", len(c.seen), verdictCacheSize)
	}
	if !c.of("Slackbot") {
		t.Fatal("a forgotten verdict came back different")
	}
}

// The real list: link previews and crawlers are previews, browsers are not.
func TestIsPreviewUsesCrawlerdetect(t *testing.T) {
	for ua, want := range map[string]bool{
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)": true,
		"facebookexternalhit/1.1":                                    true,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36": false,
	} {
		if got := isPreview(ua); got != want {
			t.Errorf("isPreview(%q) = %v, want %v", ua, got, want)
		}
	}
}
