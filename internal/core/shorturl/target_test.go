package shorturl

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/core/hostname"
)

func mustHostRules(t testing.TB, self, reserved []string) HostRules {
	t.Helper()
	h, err := NewHostRules(self, reserved)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheckTarget(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxTargetLength-len("https://example.com/"))
	// 2048 characters, most of them multibyte: é (2 bytes), 😀 (4 bytes, one code point).
	longMultibyte := "https://example.com/" + strings.Repeat("é", 1000) + strings.Repeat("😀", MaxTargetLength-len("https://example.com/")-1000)
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
		{"2048 multibyte characters", longMultibyte, ""},
		{"2049 characters", long + "a", RuleLength},
		{"2049 multibyte characters", longMultibyte + "😀", RuleLength},
		{"2049 characters, last one multibyte", long + "é", RuleLength},
		{"space", "https://example.com/a b", RuleCharacters},
		{"tab", "https://example.com/a\tb", RuleCharacters},
		{"newline", "https://example.com/\r\nLocation: x", RuleCharacters},
		{"nul", "https://example.com/\x00", RuleCharacters},
		{"del", "https://example.com/\x7f", RuleCharacters},
		{"no-break space", "https://example.com/\u00a0", RuleCharacters},
		{"zero-width space", "https://example.com/\u200b", RuleCharacters},
		{"invalid utf-8", "https://example.com/\xff", RuleCharacters},
		{"invalid utf-8 lead byte", "https://example.com/\xc0", RuleCharacters},
		{"replacement character is visible", "https://example.com/\ufffd", ""},
		{"emoji with variation selector", "https://example.com/\u2764\ufe0f", ""},
		{"right-to-left override", "https://example.com/\u202etxt.exe", RuleCharacters},
		{"left-to-right embedding", "https://example.com/\u202a", RuleCharacters},
		{"left-to-right mark", "https://example.com/\u200e", RuleCharacters},
		{"right-to-left mark", "https://example.com/\u200f", RuleCharacters},
		{"left-to-right isolate", "https://example.com/\u2066", RuleCharacters},
		{"right-to-left isolate", "https://example.com/\u2067", RuleCharacters},
		{"first strong isolate", "https://example.com/\u2068", RuleCharacters},
		{"pop directional isolate", "https://example.com/\u2069", RuleCharacters},
		{"zero-width non-joiner", "https://example.com/\u200c", RuleCharacters},
		{"zero-width joiner", "https://example.com/\u200d", RuleCharacters},
		{"soft hyphen", "https://exam\u00adple.com/", RuleCharacters},
		{"word joiner", "https://example.com/\u2060", RuleCharacters},
		{"mongolian vowel separator", "https://example.com/\u180e", RuleCharacters},
		{"arabic letter mark", "https://example.com/\u061c", RuleCharacters},
		{"byte order mark", "\ufeffhttps://example.com/", RuleCharacters},
		{"hangul filler", "https://example.com/\u3164", RuleCharacters},
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
		{"port 1", "https://example.com:1/", ""},
		{"port 65535", "https://example.com:65535/", ""},
		{"port with leading zeros", "https://example.com:00443/", ""},
		{"empty port", "https://example.com:/", ""},
		{"port 0", "https://example.com:0/", RulePort},
		{"port 00", "https://example.com:00/", RulePort},
		{"port 65536", "https://example.com:65536/", RulePort},
		{"port 2^64", "https://example.com:18446744073709551616/", RulePort},
		{"ipv6 port 0", "https://[2001:db8::1]:0/", RulePort},
		{"non-numeric port", "https://example.com:https/", RuleSyntax},
		{"negative port", "https://example.com:-1/", RuleSyntax},
		{"host ends in a number", "https://example.123/", RuleHost},
		{"host is too large a number", "https://4294967296/", RuleHost},
		{"ipv6 zone", "http://[fe80::1%25en0]/", RuleHost},
		{"own host", "https://s.example.com/7BTadEDkJ8", RuleSelf},
		{"own host other case and dot", "https://S.EXAMPLE.COM./x", RuleSelf},
		{"own host other port", "http://s.example.com:9999/", RuleSelf},
		{"own host fullwidth", "https://ｓ.ｅｘａｍｐｌｅ.ｃｏｍ/", RuleSelf},
		{"own host ideographic dots", "https://s。example。com/", RuleSelf},
		{"management host", "https://manage.example.com/shorten", RuleSelf},
		{"subdomain of own host", "https://x.s.example.com/", ""},
		{"reserved host", "https://admin.example.net/", RuleReserved},
		{"reserved domain", "https://internal.example/", RuleReserved},
		{"under a reserved domain", "https://db.Internal.Example./", RuleReserved},
		{"reserved ip in hex", "http://0xa.0.0.1/", RuleReserved},
		{"reserved ip mapped", "http://[::ffff:a00:1]/", RuleReserved},
		{"next to a reserved host", "https://admin.example.net.evil.example/", ""},
		{"loopback is fine when the service is not on it", "http://127.0.0.1/", ""},
		{"localhost is fine when the service is not on it", "http://localhost/", ""},
	}
	hosts := mustHostRules(t, []string{"s.example.com", "manage.example.com:443"}, []string{"admin.example.net", "*.internal.example", "10.0.0.1"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTarget(tt.in, hosts)
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

// TestCheckTargetLoopbackResolver: with the resolver on 127.0.0.1:8080, every
// spelling a browser sends to this machine is the service's own host (issue 9).
func TestCheckTargetLoopbackResolver(t *testing.T) {
	hosts := mustHostRules(t, []string{"127.0.0.1", "127.0.0.1:8081"}, []string{"*.corp.example"})
	for _, host := range []string{
		"localhost", "LOCALHOST", "localhost.", "0x7f000001", "0x7f.0.0.1", "2130706433", "127.1",
		"0177.0.0.1", "127.000.000.001", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]",
		"１２７.０.０.１", "127。0。0。1", "[::1]", "0.0.0.0",
		// and a few more of the same
		"app.localhost", "127.0.0.2", "0", "[::]", "[0:0:0:0:0:0:0:1]", "ＬＯＣＡＬＨＯＳＴ", "127.0.0.1..",
		// the loopback names of /etc/hosts (issue 44, finding 4)
		"localhost.localdomain", "ip6-localhost", "IP6-LOOPBACK", "localhost6",
	} {
		for _, raw := range []string{"http://" + host + ":8080/x", "https://" + host + "/"} {
			var re *RuleError
			if err := CheckTarget(raw, hosts); !errors.As(err, &re) || re.Rule != RuleSelf {
				t.Errorf("CheckTarget(%q) = %v, want %s", raw, err, RuleSelf)
			}
		}
	}
	for _, raw := range []string{"https://127.0.0.1.example.com/", "https://example.com/", "https://[2001:db8::1]/",
		"https://localhost.example.com/", "http://128.0.0.1/", "http://10.0.0.1/", "https://notlocalhost/"} {
		if err := CheckTarget(raw, hosts); err != nil {
			t.Errorf("CheckTarget(%q) = %v, want accepted", raw, err)
		}
	}
	var re *RuleError
	if err := CheckTarget("https://ｄｂ.corp.example/", hosts); !errors.As(err, &re) || re.Rule != RuleReserved {
		t.Errorf("reserved: %v", err)
	}
}

// TestCheckTargetManagementOnAllInterfaces: a management API listening on ":8081"
// makes every local host its own, even with a resolver elsewhere.
func TestCheckTargetManagementOnAllInterfaces(t *testing.T) {
	hosts := mustHostRules(t, []string{"s.example.com", ":8081", ""}, nil)
	var re *RuleError
	if err := CheckTarget("http://0x7f.1:8081/shorten", hosts); !errors.As(err, &re) || re.Rule != RuleSelf {
		t.Fatalf("err = %v", err)
	}
}

func TestNewHostRules(t *testing.T) {
	for _, self := range []string{"[::1]:8081", "::1", "[::1]", "localhost:8081"} {
		h := mustHostRules(t, []string{self}, nil)
		if !h.local {
			t.Errorf("%q is not local", self)
		}
	}
	_, err := NewHostRules([]string{"example.123:80", "ok.example"}, []string{"*.10.0.0.1", "fine.example", "a b"})
	for _, want := range []string{`"example.123:80"`, `"*.10.0.0.1"`, `"a b"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	if err := CheckTarget("https://example.com/", HostRules{}); err != nil {
		t.Errorf("zero HostRules: %v", err)
	}
}

func TestIssuerHostRules(t *testing.T) {
	is, err := NewIssuer(IssuerConfig{Store: nopStore{}, ResolverBaseURL: "http://127.0.0.1:8080", Rand: strings.NewReader(""),
		SelfHosts: []string{"manage.example.com"}, ReservedHosts: []string{"*.internal.example"}})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]Rule{
		"http://0x7f.1:8080/": RuleSelf, "https://MANAGE.example.com./": RuleSelf, "https://a.internal.example/": RuleReserved,
	} {
		var re *RuleError
		if _, err := is.Shorten(t.Context(), raw); !errors.As(err, &re) || re.Rule != want {
			t.Errorf("Shorten(%q) = %v, want %s", raw, err, want)
		}
	}
	if _, err := NewIssuer(IssuerConfig{Store: nopStore{}, ResolverBaseURL: "http://s.example.com", Rand: strings.NewReader(""),
		ReservedHosts: []string{"*.1.2.3.4"}}); err == nil {
		t.Error("NewIssuer accepted an invalid reserved host")
	}
}

type nopStore struct{}

func (nopStore) Lookup(context.Context, Token) (ShortURL, error) { return ShortURL{}, ErrNotFound }
func (nopStore) Save(context.Context, ShortURL) error            { return nil }

func FuzzCheckTarget(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=c", "javascript:alert(1)", "http://u@h/", "http://[::1]/", "https://s.example.com/x", "http://h/\x00",
		"http://0x7f.1/", "https://ｓ.example.com/", "http://h:0/", "https://a.internal.example/", "https://h/\u202e"} {
		f.Add(s)
	}
	hosts := mustHostRules(f, []string{"s.example.com", "127.0.0.1:8081"}, []string{"*.internal.example"})
	f.Fuzz(func(t *testing.T, s string) {
		if CheckTarget(s, hosts) != nil {
			return
		}
		// The resolver's check of stored targets never refuses what issuance accepts.
		if err := checkStoredTarget(s); err != nil {
			t.Fatalf("issuance accepted %q, the resolver refuses it: %v", s, err)
		}
		// Whatever is accepted keeps every rule.
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("accepted unparsable %q", s)
		}
		if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if u.Hostname() == "" || u.User != nil || utf8.RuneCountInString(s) > MaxTargetLength {
			t.Fatalf("accepted %q (host %q, user %v, %d characters)", s, u.Hostname(), u.User, utf8.RuneCountInString(s))
		}
		host, err := hostname.Normalize(u.Hostname())
		if err != nil || host == "s.example.com" || hostname.IsLocal(host) || host == "internal.example" || strings.HasSuffix(host, ".internal.example") {
			t.Fatalf("accepted own, reserved or invalid host %q (%q, %v)", s, host, err)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted port %q", p)
			}
		}
		for _, r := range s {
			if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("accepted whitespace, control or format character in %q", s)
			}
		}
	})
}

// TestIssuerRefusesTheMachinesOwnNames is issue 44's finding 4: with the service on
// loopback, the machine's hostname and /etc/hosts' loopback names are its own hosts
// too; with the service elsewhere, the same names are anyone's.
func TestIssuerRefusesTheMachinesOwnNames(t *testing.T) {
	names := []string{"box", "box.lan", "bad name"}
	for base, want := range map[string]error{"http://127.0.0.1:8080": ErrInvalidTarget, "https://s.example.com": nil} {
		is, err := NewIssuer(IssuerConfig{Store: nopStore{}, ResolverBaseURL: base, Rand: strings.NewReader(""), MachineNames: names})
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []string{"http://box:8080/7BTadEDkJ8", "http://BOX.lan./x"} {
			err := is.admit(raw, is.hosts)
			var re *RuleError
			if want == nil && err != nil || want != nil && (!errors.As(err, &re) || re.Rule != RuleSelf) {
				t.Errorf("base %s, target %s: %v, want %v", base, raw, err, want)
			}
		}
	}
}
