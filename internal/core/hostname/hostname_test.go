package hostname_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/hostname"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string // want "" = refused
	}{
		// Names: case, trailing dots, UTS-46 mapping, punycode.
		{"localhost", "localhost"},
		{"LOCALHOST", "localhost"},
		{"localhost.", "localhost"},
		{"localhost..", "localhost"},
		{"ｌｏｃａｌｈｏｓｔ", "localhost"},
		{"localhost。", "localhost"},
		{"Example.COM", "example.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"BÜCHER.example.", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"faß.de", "xn--fa-hia.de"}, // non-transitional, as browsers
		{"my_host.example.com", "my_host.example.com"},
		{"r3---sn-apo3qvuoxuxbt-j5pe.googlevideo.com", "r3---sn-apo3qvuoxuxbt-j5pe.googlevideo.com"},
		{"a\u00adb.example", "ab.example"}, // soft hyphen is ignored by UTS-46
		{"127.0.0.1.example.com", "127.0.0.1.example.com"},
		{"0x7f.example.com", "0x7f.example.com"},
		{"example.com1", "example.com1"},
		// IPv4 in every form the WHATWG URL parser accepts.
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.1", "127.0.0.1"},
		{"127.000.000.001", "127.0.0.1"},
		{"１２７.０.０.１", "127.0.0.1"},
		{"127。0。0。1", "127.0.0.1"},
		{"127．0．0．1", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"0", "0.0.0.0"},
		{"0.0.0.0", "0.0.0.0"},
		{"0x0.0x0.0x0.0x0", "0.0.0.0"},
		{"0xffffffff", "255.255.255.255"},
		{"4294967295", "255.255.255.255"},
		{"1.0xffffff", "1.255.255.255"},
		{"00000000000000000000000000000000001.2.3.4", "1.2.3.4"},
		{"0x00000000000000000000000000000000001", "0.0.0.1"},
		// IPv6, with and without brackets; IPv4-mapped becomes IPv4.
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[0:0:0:0:0:0:0:1]", "::1"},
		{"[::ffff:127.0.0.1]", "127.0.0.1"},
		{"[::ffff:7f00:1]", "127.0.0.1"},
		{"[0:0:0:0:0:ffff:127.0.0.1]", "127.0.0.1"},
		{"[2001:DB8::1]", "2001:db8::1"},
		{"[::]", "::"},
		// Refused, as browsers refuse them.
		{"", ""},
		{".", ""},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"1.256.1", ""},
		{"127..0.1", ""},
		// Empty labels: parsed by browsers, looked up by no resolver (issue 44).
		{".evil.example", ""},
		{"..evil.example", ""},
		{"evil..example", ""},
		{"evil。。example", ""},
		{"08.0.0.1", ""},
		{"example.123", ""},
		{"example.0x1f", ""},
		{"a b", ""},
		{"a/b", ""},
		{"ａ／ｂ", ""},
		{"a%b", ""},
		{"\xf7000", ""}, // invalid UTF-8: idna would punycode U+FFFD without complaint
		{"xn--abc", ""},
		{"a\u200db", ""},
		{"[fe80::1%en0]", ""},
		{"[1.2.3.4]", ""},
		{"[::1", ""},
		{"::g", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := hostname.Normalize(tt.in)
			if tt.want == "" {
				if err == nil || !errors.Is(err, hostname.ErrInvalid) {
					t.Fatalf("Normalize(%q) = %q, %v; want ErrInvalid", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if again, err := hostname.Normalize(got); err != nil || again != got {
				t.Fatalf("Normalize(%q) = %q, %v; not idempotent", got, again, err)
			}
		})
	}
}

// TestNormalizeURLHosts: what url.Parse leaves in Hostname() normalises like the
// bare host, so callers can pass u.Hostname() straight in.
func TestNormalizeURLHosts(t *testing.T) {
	for raw, want := range map[string]string{
		"http://[::ffff:127.0.0.1]:8080/": "127.0.0.1",
		"https://LOCALHOST./x":            "localhost",
		"https://%E4%BE%8B.example/":      "xn--fsq.example",
		"https://[2001:db8::1]/":          "2001:db8::1",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := hostname.Normalize(u.Hostname()); err != nil || got != want {
			t.Errorf("%s: Normalize(%q) = %q, %v; want %q", raw, u.Hostname(), got, err, want)
		}
	}
}

func TestIsLocal(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "a.localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"0.0.0.0": true, "::": true,
		"localhost.example.com": false, "notlocalhost": false, "10.0.0.1": false, "2001:db8::1": false,
		"example.com": false, "128.0.0.1": false,
	} {
		if got := hostname.IsLocal(h); got != want {
			t.Errorf("IsLocal(%q) = %v", h, got)
		}
	}
}

// IsLoopback decides whether the local warnings and the local credentials apply: an
// address every interface listens on, or a name that merely looks local, is not loopback.
func TestIsLoopback(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "::ffff:127.0.0.1": true,
		"": false, "0.0.0.0": false, "::": false, "a.localhost": false, "localhost.example.com": false,
		"10.0.0.1": false, "::ffff:10.0.0.1": false, "[::1]": false, "example.com": false,
	} {
		if got := hostname.IsLoopback(h); got != want {
			t.Errorf("IsLoopback(%q) = %v", h, got)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := hostname.ParseList(" Admin.Example.COM., *.Internal.example ,,0x0a.0.0.1, [::ffff:10.0.0.2],*.ｃｏｒｐ ")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"admin.example.com", "*.internal.example", "10.0.0.1", "10.0.0.2", "*.corp"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ParseList (-want +got):\n%s", diff)
	}
	if got, err := hostname.ParseList(""); err != nil || len(got) != 0 {
		t.Fatalf("ParseList(\"\") = %q, %v", got, err)
	}
	_, err = hostname.ParseList("ok.example, *.10.0.0.1, a.*.example, *, example.123")
	for _, bad := range []string{`"*.10.0.0.1"`, `"a.*.example"`, `"*"`, `"example.123"`} {
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("error %v does not name %s", err, bad)
		}
	}
	if !errors.Is(err, hostname.ErrInvalid) {
		t.Errorf("error %v is not ErrInvalid", err)
	}
}

func TestListMatch(t *testing.T) {
	l, err := hostname.NewList([]string{"admin.example.com", "*.internal.example", "10.0.0.1", "[fd00::1]"})
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]bool{
		"admin.example.com": true, "internal.example": true, "a.internal.example": true, "a.b.internal.example": true,
		"10.0.0.1": true, "fd00::1": true,
		"example.com": false, "x.admin.example.com": false, "xinternal.example": false, "internal.example.com": false,
		"10.0.0.2": false,
	} {
		if got := l.Match(h); got != want {
			t.Errorf("Match(%q) = %v", h, got)
		}
	}
	if (hostname.List{}).Match("example.com") {
		t.Error("the zero List matches")
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"localhost", "LOCALHOST.", "0x7f.0.0.1", "0177.1", "１２７.０.０.１", "127。0。0。1", "[::ffff:7f00:1]",
		"bücher.example", "xn--bcher-kva.example", "example.123", "a..b", "0x", "4294967295", "[fe80::1%en0]", "ab\u0627.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := hostname.Normalize(s)
		if err != nil {
			if !errors.Is(err, hostname.ErrInvalid) {
				t.Fatalf("Normalize(%q): error %v is not ErrInvalid", s, err)
			}
			return
		}
		again, err := hostname.Normalize(c)
		if err != nil || again != c {
			t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q, %v", s, c, c, again, err)
		}
		if c == "" || strings.HasSuffix(c, ".") || c != strings.ToLower(c) {
			t.Fatalf("Normalize(%q) = %q is not canonical", s, c)
		}
		for i := 0; i < len(c); i++ {
			if c[i] >= 0x80 {
				t.Fatalf("Normalize(%q) = %q is not ASCII", s, c)
			}
		}
	})
}
