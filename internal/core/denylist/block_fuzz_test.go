package denylist_test

import (
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/hostname"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// FuzzAcceptedRuleMatchesAnIssuableTarget is issue 44's property: a rule that
// linoone block accepts (one line that parses as one rule) blocks at least one
// target that issuance accepts. A rule no issuable target matches would be reported
// in force and take nothing down. Inputs the fuzzer found are kept in
// testdata/fuzz, which go test runs.
func FuzzAcceptedRuleMatchesAnIssuableTarget(f *testing.F) {
	for _, s := range []string{"evil.example", "*.evil.example", ".evil.example", "..evil.example", "evil..example",
		"https://docs.example.com/shared/", "*.ｅｖｉｌ.example", "%65vil.example", "[::ffff:10.0.0.1]", "0x7f.1",
		"https://evil.example/\u3000", "https://evil.example/\u200b", "HTTPS://Evil.Example:0443/a?b#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rule string) {
		rule = denylist.LineText(rule)
		l, bad := denylist.ParseString(rule)
		if len(bad) != 0 || l.Len() != 1 {
			return // refused by block
		}
		r := l.Rules()[0]
		var refused []string
		for _, target := range append(exemplars(r), canonicalTarget(r)) {
			err := shorturl.CheckTarget(target, shorturl.HostRules{})
			if _, blocked := l.Match(target); err == nil && blocked {
				return
			} else if err != nil {
				refused = append(refused, target+": "+err.Error())
			}
		}
		t.Fatalf("rule %q (%s) is accepted but blocks no target issuance accepts:\n%s", rule, r.Kind, strings.Join(refused, "\n"))
	})
}

// canonicalTarget is a URL on a host or domain rule's host in canonical form (a
// percent-escaped host, which url.Parse refuses, decoded), or the prefix itself.
func canonicalTarget(r denylist.Rule) string {
	if r.Kind == denylist.KindPrefix {
		return r.Text
	}
	h, err := hostname.Normalize(decoded(strings.TrimPrefix(r.Text, "*.")))
	if err != nil {
		return ""
	}
	return "https://" + bracketed(h) + "/"
}
