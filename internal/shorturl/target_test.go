package shorturl

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode"
)

func TestCheckTarget(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxTargetLength-len("https://example.com/"))
	tests := []struct {
		name string
		in   string
		rule Rule // "" = accepted
	}{
		{"plain https", "https://example.com/landing?message_id=msg_123", ""},
		{"plain http", "http://example.com", ""},
		{"upper-case scheme", "HTTPS://EXAMPLE.COM/x", ""},
		{"port, query and fragment", "https://example.com:8443/a/b?c=d&e=f#g", ""},
		{"ipv6 literal", "http://[2001:db8::1]:8080/", ""},
		{"2048 characters", long, ""},
		{"idn host", "https://bücher.example/", ""},
		{"percent-encoded space", "https://example.com/a%20b", ""},
		{"empty", "", RuleRequired},
		{"2049 characters", long + "a", RuleLength},
		{"space", "https://example.com/a b", RuleCharacters},
		{"tab", "https://example.com/a\tb", RuleCharacters},
		{"newline", "https://example.com/\r\nLocation: x", RuleCharacters},
		{"nul", "https://example.com/\x00", RuleCharacters},
		{"del", "https://example.com/\x7f", RuleCharacters},
		{"no-break space", "https://example.com/\u00a0", RuleCharacters},
		{"zero-width space", "https://example.com/\u200b", RuleCharacters},
		{"invalid utf-8", "https://example.com/\xff", RuleCharacters},
		{"javascript", "javascript:alert(1)", RuleScheme},
		{"javascript slashes", "javascript://example.com/%0aalert(1)", RuleScheme},
		{"data", "data:text/html,<script>alert(1)</script>", RuleScheme},
		{"ftp", "ftp://example.com/file", RuleScheme},
		{"relative", "/just/a/path", RuleScheme},
		{"scheme-relative", "//example.com/x", RuleScheme},
		{"no scheme", "example.com", RuleScheme},
		{"userinfo", "https://user@example.com/", RuleUserinfo},
		{"userinfo with password", "https://user:pass@example.com/", RuleUserinfo},
		{"empty userinfo", "https://@example.com/", RuleUserinfo},
		{"no host", "https:///path", RuleHost},
		{"opaque", "http:example.com", RuleHost},
		{"port only", "http://:8080/", RuleHost},
		{"bad escape", "https://example.com/%zz", RuleSyntax},
		{"own host", "https://s.example.com/7BTadEDkJ8", RuleSelf},
		{"own host other case and dot", "https://S.EXAMPLE.COM./x", RuleSelf},
		{"own host other port", "http://s.example.com:9999/", RuleSelf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTarget(tt.in, "s.example.com")
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			var re *RuleError
			if !errors.As(err, &re) || !errors.Is(err, ErrInvalidTarget) {
				t.Fatalf("err = %v, want rule %s", err, tt.rule)
			}
			if re.Rule != tt.rule {
				t.Fatalf("rule = %s (%s), want %s", re.Rule, re.Detail, tt.rule)
			}
			if re.Detail == "" || strings.Contains(re.Detail, "\n") {
				t.Fatalf("detail %q is not a one-line explanation", re.Detail)
			}
		})
	}
}

func FuzzCheckTarget(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=c", "javascript:alert(1)", "http://u@h/", "http://[::1]/", "https://s.example.com/x", "http://h/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckTarget(s, "s.example.com") != nil {
			return
		}
		// Whatever is accepted keeps every rule.
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("accepted unparsable %q", s)
		}
		if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if u.Hostname() == "" || u.User != nil || len(s) > MaxTargetLength {
			t.Fatalf("accepted %q (host %q, user %v, len %d)", s, u.Hostname(), u.User, len(s))
		}
		if strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), "s.example.com") {
			t.Fatalf("accepted own host %q", s)
		}
		for _, r := range s {
			if unicode.IsSpace(r) || unicode.IsControl(r) {
				t.Fatalf("accepted whitespace/control in %q", s)
			}
		}
	})
}
