package denylist_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/denylist"
)

// FuzzParse reads a deny list an operator wrote (a file, an SSM parameter) and
// matches a target against it. Every line but blank and comment ones is a rule or a
// malformed line (ErrMalformed), in line order, under its own number. Every rule
// blocks what it says: a host rule that host, a domain rule the domain and a name
// under it, a prefix rule the URL it is. The rules, written out again, are read back
// the same. A match is a rule of the list, the same each time.
func FuzzParse(f *testing.F) {
	f.Add(list, "https://login.phish.example/a")
	f.Add("ok.example\nbad host\n*.10.0.0.1\nevil.*.example\nftp://x.example/\nexample.123\nhttps://u@x.example/\n  # indented comment\nfine.example\n",
		"https://fine.example/")
	f.Add("https://docs.example.com/x/../shared/\r\n*.xn--bcher-kva.example\n[::ffff:10.0.0.1]\n0x7f.1", "https://docs.example.com/%2e%2E/shared/a")
	f.Add("HTTPS://Evil.Example:0443/a?b#c\n%65vil.example\n*.ｅｖｉｌ.example", "https://%65vil.example/x")
	f.Fuzz(func(t *testing.T, text, target string) {
		l, bad, err := denylist.Parse(strings.NewReader(text))
		if err != nil {
			if len(text) > 1<<20 {
				return // a line over the scanner's bound
			}
			t.Fatalf("Parse: %v", err)
		}
		checkLines(t, text, l.Rules(), bad)
		for _, r := range l.Rules() {
			for _, target := range exemplars(r) {
				if got, ok := l.Match(target); !ok {
					t.Errorf("rule %q (%s, line %d) does not block %q", r.Text, r.Kind, r.Line, target)
				} else if !inList(l, got) {
					t.Errorf("%q matched %+v, not a rule of the list", target, got)
				}
			}
		}
		var again strings.Builder
		for _, r := range l.Rules() {
			again.WriteString(r.Text + "\n")
		}
		l2, bad2 := denylist.ParseString(again.String())
		if len(bad2) != 0 || l2.Len() != l.Len() {
			t.Fatalf("the rules read back as %d rules and %v", l2.Len(), bad2)
		}
		for i, r := range l2.Rules() {
			if want := l.Rules()[i]; r.Kind != want.Kind || r.Text != want.Text {
				t.Fatalf("rule %d read back as %+v, was %+v", i, r, want)
			}
		}
		got, ok := l.Match(target)
		if ok && !inList(l, got) {
			t.Fatalf("%q matched %+v, not a rule of the list", target, got)
		}
		if got2, ok2 := l.Match(target); ok2 != ok || got2 != got {
			t.Fatalf("%q matched %+v, %v, then %+v, %v", target, got, ok, got2, ok2)
		}
	})
}

// checkLines checks that each line of text that is not blank or a comment is a rule
// or a malformed line, under its number.
func checkLines(t *testing.T, text string, rules []denylist.Rule, bad []*denylist.LineError) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	var want []int
	for i, line := range lines {
		if s := denylist.LineText(line); s != "" && !strings.HasPrefix(s, "#") {
			want = append(want, i+1)
		}
	}
	var got []int
	ri, bi := 0, 0
	for ri < len(rules) || bi < len(bad) {
		if bi == len(bad) || ri < len(rules) && rules[ri].Line < bad[bi].Line {
			r := rules[ri]
			if r.Line < 1 || r.Line > len(lines) || r.Text != denylist.LineText(lines[r.Line-1]) {
				t.Fatalf("rule %+v is not line %d", r, r.Line)
			}
			got, ri = append(got, r.Line), ri+1
			continue
		}
		e := bad[bi]
		if !errors.Is(e.Err, denylist.ErrMalformed) || e.Line < 1 || e.Line > len(lines) || e.Text != denylist.LineText(lines[e.Line-1]) {
			t.Fatalf("malformed line %+v is not line %d, or not ErrMalformed", e, e.Line)
		}
		got, bi = append(got, e.Line), bi+1
	}
	if len(got) != len(want) {
		t.Fatalf("lines %v are rules or malformed, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("lines %v are rules or malformed, want %v", got, want)
		}
	}
}

// exemplars are targets a rule blocks by what it says, some in spellings a browser
// reads as the same host: ASCII upper case, every byte of the host (as the rule's
// escapes, if any, decode) percent-escaped.
func exemplars(r denylist.Rule) []string {
	switch r.Kind {
	case denylist.KindHost:
		out := []string{"https://" + bracketed(r.Text) + "/", "http://" + upperASCII(bracketed(r.Text)) + "/x?y"}
		if !strings.ContainsAny(r.Text, ":[") {
			out = append(out, "https://"+escaped(decoded(r.Text))+"/")
		}
		return out
	case denylist.KindDomain:
		d := strings.TrimPrefix(r.Text, "*.")
		return []string{"https://" + d + "/", "https://LOGIN." + upperASCII(d) + "/a", "https://x." + escaped(decoded(d)) + "/"}
	default:
		_, rest, _ := strings.Cut(r.Text, "://")
		if !strings.ContainsAny(rest, "/?#") {
			return []string{r.Text, r.Text + "/x"} // no path is "/": "x" would lengthen the host
		}
		return []string{r.Text, r.Text + "x"}
	}
}

// upperASCII upper-cases s's ASCII letters, byte by byte: strings.Map would also
// turn a byte that is not UTF-8 into U+FFFD.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// decoded is a rule's host with its percent-escapes decoded, as the rule reads it.
func decoded(host string) string {
	if d, err := url.PathUnescape(host); err == nil {
		return d
	}
	return host
}

func escaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// bracketed writes an IPv6 address as a URL holds it.
func bracketed(host string) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return "[" + host + "]"
	}
	return host
}

func inList(l *denylist.List, r denylist.Rule) bool {
	for _, x := range l.Rules() {
		if x == r {
			return true
		}
	}
	return false
}
