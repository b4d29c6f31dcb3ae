// Package denylist reads and matches the operator's deny list of target URLs: one
// rule per line, an exact host ("evil.example"), a domain with every name under it
// ("*.evil.example") or a URL prefix ("https://docs.example.com/shared/"), with "#"
// comment lines. Hosts compare in hostname.Normalize's canonical form, so every
// spelling a browser treats as the same host matches. A malformed line is reported
// with its line number and ignored. Holder keeps the list in force and swaps it
// atomically; Poller (a file), and internal/app/awswire for an SSM parameter, reload
// it, keeping the previous good list when the source cannot be read. It imports the
// standard library, internal/core/hostname and internal/core/shorturl's target rules.
package denylist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/linoone/linoone/internal/core/hostname"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// Kind is the kind of a rule. It is what clients and logs are told about a match,
// never the rule's text.
type Kind string

// The rule kinds.
const (
	KindHost   Kind = "host"   // evil.example: that host only
	KindDomain Kind = "domain" // *.evil.example: the domain and every name under it
	KindPrefix Kind = "prefix" // https://docs.example.com/shared/: URLs starting so
)

// Rule is one parsed rule.
type Rule struct {
	Kind Kind
	Text string // as written in the list
	Line int    // 1-based line number in the list
}

// LineError is a malformed line, ignored.
type LineError struct {
	Line int
	Text string
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d %q: %v", e.Line, e.Text, e.Err) }

// ErrMalformed is matched (errors.Is) by every LineError's Err.
var ErrMalformed = errors.New("malformed deny list rule")

// prefix is a URL prefix rule under its canonical host.
type prefix struct {
	scheme string // "http" or "https"
	port   string // explicit port, "" for the scheme's default
	rest   string // path, query… after the authority, as written
	rule   *Rule
}

// List is a parsed deny list. The zero List and a nil *List block nothing. A List
// is immutable, hence safe for concurrent use.
type List struct {
	hosts    map[string]*Rule
	domains  map[string]*Rule
	prefixes map[string][]prefix // by canonical host
	rules    []Rule
	// malformed counts the lines left out as malformed, for /healthz: a takedown
	// an operator believes in force may be one of them.
	malformed int
}

// Parse reads a deny list. It returns the list of every valid rule and the
// malformed lines, which are left out; only a read error is an error.
func Parse(r io.Reader) (*List, []*LineError, error) {
	l := &List{hosts: map[string]*Rule{}, domains: map[string]*Rule{}, prefixes: map[string][]prefix{}}
	var bad []*LineError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	type parsed struct {
		key string
		p   prefix
	}
	var keys []parsed
	for n := 1; sc.Scan(); n++ {
		text := LineText(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		kind, key, p, err := parseRule(text)
		if err != nil {
			bad = append(bad, &LineError{Line: n, Text: text, Err: fmt.Errorf("%w: %v", ErrMalformed, err)})
			continue
		}
		l.rules = append(l.rules, Rule{Kind: kind, Text: text, Line: n})
		keys = append(keys, parsed{key, p})
	}
	if err := sc.Err(); err != nil {
		return nil, bad, fmt.Errorf("read deny list: %w", err)
	}
	l.malformed = len(bad)
	for i := range l.rules { // l.rules no longer grows: pointers into it are stable
		r, k := &l.rules[i], keys[i]
		switch r.Kind {
		case KindHost:
			l.hosts[k.key] = r
		case KindDomain:
			l.domains[k.key] = r
		case KindPrefix:
			k.p.rule = r
			l.prefixes[k.key] = append(l.prefixes[k.key], k.p)
		}
	}
	return l, bad, nil
}

// LineText is a line of a deny list as a rule or comment: without the spaces around
// it, nor a UTF-8 byte order mark before it (which editors write at a file's start,
// and which a file made by concatenating others holds at a line's start).
func LineText(line string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "\ufeff"))
}

// ParseString is Parse of a string.
func ParseString(s string) (*List, []*LineError) {
	l, bad, _ := Parse(strings.NewReader(s)) // a strings.Reader does not fail
	return l, bad
}

// parseRule returns a rule's kind and its canonical key: the host, the domain, or
// the host a prefix is filed under (with the prefix).
func parseRule(text string) (Kind, string, prefix, error) {
	if strings.ContainsAny(text, " \t") {
		return "", "", prefix{}, errors.New("a rule holds no spaces (comments are whole lines starting with #)")
	}
	if strings.Contains(text, "://") {
		u, ok := splitURL(text)
		if !ok {
			return "", "", prefix{}, errors.New("a URL prefix must be an http or https URL with a host and no userinfo")
		}
		h, err := ruleHost(u.host)
		if err != nil {
			return "", "", prefix{}, err
		}
		// Every target a prefix blocks starts with the prefix: one issuance would
		// refuse (an invisible character, over the length bound) blocks nothing.
		if err := shorturl.CheckTarget(text, shorturl.HostRules{}); err != nil {
			return "", "", prefix{}, fmt.Errorf("a URL prefix must itself be a target URL issuance accepts: %v", err)
		}
		return KindPrefix, h, prefix{scheme: u.scheme, port: u.port, rest: browserPath(u.rest)}, nil
	}
	if strings.Contains(text, "/") {
		return "", "", prefix{}, errors.New("a rule is a host, *.domain or an http(s) URL prefix")
	}
	d, wild := strings.CutPrefix(text, "*.")
	if strings.Contains(d, "*") {
		return "", "", prefix{}, errors.New(`'*' is allowed only as a leading "*."`)
	}
	h, err := ruleHost(d)
	if err != nil {
		if hint := emptyLabelHint(d); hint != "" {
			err = fmt.Errorf("%w, which no target's host has; did you mean %s", err, hint)
		}
		return "", "", prefix{}, err
	}
	// A target's host also passes url.Parse, which refuses some characters that
	// Normalize, as browsers, lets through ("{", "`"): a host rule on such a name
	// blocks nothing.
	if err := shorturl.CheckTarget("https://"+bracket(h)+"/", shorturl.HostRules{}); err != nil {
		return "", "", prefix{}, fmt.Errorf("host %q: no target URL issuance accepts has it (%v)", h, err)
	}
	if !wild {
		return KindHost, h, prefix{}, nil
	}
	if isIP(h) {
		return "", "", prefix{}, errors.New(`"*." needs a domain name, not an IP address`)
	}
	return KindDomain, h, prefix{}, nil
}

// emptyLabelHint is what a host or domain with empty labels was probably meant to
// say: "*.evil.example" (the domain and every name under it) for ".evil.example"
// or "..evil.example", as in a cookie's or a mail filter's domain; "evil.example"
// for "evil..example". It is "" when there is no such mistake or the hint would not
// be a rule either.
func emptyLabelHint(host string) string {
	if !strings.Contains(host, "..") && !strings.HasPrefix(host, ".") {
		return ""
	}
	name := strings.TrimLeft(host, ".")
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", ".")
	}
	hint, what := name, "(that host)"
	if strings.HasPrefix(host, ".") {
		hint, what = "*."+name, "(the domain and every name under it)"
	}
	if _, _, _, err := parseRule(hint); err != nil {
		return ""
	}
	return fmt.Sprintf("%q %s", hint, what)
}

// bracket writes a canonical IPv6 address as a URL holds it.
func bracket(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// ruleHost is a rule's host in canonical form. It is read as a target's host is
// (canonical): percent-escapes decoded, then normalised.
func ruleHost(host string) (string, error) {
	if strings.IndexByte(host, '%') >= 0 {
		decoded, err := url.PathUnescape(host)
		if err != nil {
			return "", fmt.Errorf("host %q: %w", host, err)
		}
		host = decoded
	}
	return hostname.Normalize(host)
}

// Len is the number of rules in force.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.rules)
}

// Malformed is the number of lines of the list left out as malformed.
func (l *List) Malformed() int {
	if l == nil {
		return 0
	}
	return l.malformed
}

// Rules are the rules in list order.
func (l *List) Rules() []Rule {
	if l == nil {
		return nil
	}
	return append([]Rule(nil), l.rules...)
}

// Match returns the rule that blocks target, an absolute http(s) URL, if any. A
// target whose host does not normalise matches no host or domain rule.
func (l *List) Match(target string) (Rule, bool) {
	if l.Len() == 0 {
		return Rule{}, false
	}
	u, ok := splitURL(target)
	if !ok {
		return Rule{}, false
	}
	h, ok := canonical(u.host)
	if !ok {
		return Rule{}, false
	}
	if r := l.hosts[h]; r != nil {
		return *r, true
	}
	if r := l.matchDomain(h); r != nil {
		return *r, true
	}
	if ps := l.prefixes[h]; len(ps) > 0 {
		rest := browserPath(u.rest)
		for _, p := range ps {
			if p.scheme == u.scheme && p.port == u.port && strings.HasPrefix(rest, p.rest) {
				return *p.rule, true
			}
		}
	}
	return Rule{}, false
}

// matchDomain walks h's suffixes at label boundaries: a.b.c, b.c, c.
func (l *List) matchDomain(h string) *Rule {
	if len(l.domains) == 0 || strings.Contains(h, ":") {
		return nil
	}
	for {
		if r := l.domains[h]; r != nil {
			return r
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return nil
		}
		h = h[i+1:]
	}
}
