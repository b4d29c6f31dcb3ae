package mgmtapi

import (
	"unicode/utf8"

	"github.com/mileusna/useragent"
)

// uaClass is what a stats breakdown reads from a User-Agent: its browser, operating
// system and kind of device, each "unknown" when the parser cannot tell.
type uaClass struct{ browser, os, device string }

// classes remembers the parser's verdicts, as isPreview does crawlerdetect's.
//
// github.com/mileusna/useragent rather than github.com/medama-io/go-useragent: it is
// two files of token matching with no dependency and nothing to build at start-up,
// where medama embeds a trie it loads when the package initialises, which the Issue
// function (serving stats on AWS) would pay at every cold start.
var classes = newVerdictCache(classify)

// maxClassName bounds a class name: the parser falls back to the User-Agent's own
// words for a browser it does not know, which a visitor writes freely.
const maxClassName = 32

func classify(userAgent string) uaClass {
	ua := useragent.Parse(userAgent)
	c := uaClass{browser: className(ua.Name, userAgent), os: className(ua.OS, userAgent), device: "unknown"}
	switch {
	case ua.Tablet:
		c.device = "tablet"
	case ua.Mobile:
		c.device = "mobile"
	case ua.Desktop:
		c.device = "desktop"
	}
	return c
}

// className is a parser's verdict as a class: "unknown" when it found nothing, and
// "other" when it answered the whole User-Agent or something too long or not text.
func className(name, userAgent string) string {
	switch {
	case name == "":
		return "unknown"
	case name == userAgent || len(name) > maxClassName || !utf8.ValidString(name):
		return "other"
	}
	return name
}
