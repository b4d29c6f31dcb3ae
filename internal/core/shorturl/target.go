package shorturl

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTargetLength is the longest target URL accepted, in characters (Unicode code
// points), as openapi.yaml's maxLength counts them.
const MaxTargetLength = 2048

// ErrInvalidTarget is matched (errors.Is) by every *RuleError.
var ErrInvalidTarget = errors.New("invalid target url")

// Rule names one target URL rule. It is stable and appears in problem types.
type Rule string

// The target URL rules, in the order they are checked.
const (
	RuleRequired   Rule = "target-url-required"
	RuleLength     Rule = "target-url-too-long"
	RuleCharacters Rule = "target-url-characters"
	RuleSyntax     Rule = "target-url-syntax"
	RuleScheme     Rule = "target-url-scheme"
	RuleUserinfo   Rule = "target-url-userinfo"
	RuleHost       Rule = "target-url-host"
	RulePort       Rule = "target-url-port"
	RuleSelf       Rule = "target-url-self"
	RuleReserved   Rule = "target-url-reserved"
)

// RuleError is a broken target URL rule with a human-readable detail.
type RuleError struct {
	Rule   Rule
	Detail string
}

func (e *RuleError) Error() string { return e.Detail }

// Is makes errors.Is(err, ErrInvalidTarget) true.
func (e *RuleError) Is(target error) bool { return target == ErrInvalidTarget }

func broken(r Rule, format string, args ...any) error {
	return &RuleError{Rule: r, Detail: fmt.Sprintf(format, args...)}
}

// CheckTarget applies the target URL rules: an absolute http or https URL with a host,
// at most MaxTargetLength characters, no whitespace, control, invisible or
// bidirectional formatting characters, no userinfo, a port (if any) from 1 to 65535,
// and a host that hosts allows (see HostRules; the zero HostRules allows any valid
// host). Hosts compare in hostname.Normalize's canonical form, on any port.
func CheckTarget(raw string, hosts HostRules) error {
	if raw == "" {
		return broken(RuleRequired, "target_url is required")
	}
	if n := utf8.RuneCountInString(raw); n > MaxTargetLength {
		return broken(RuleLength, "target_url is %d characters long; at most %d are allowed", n, MaxTargetLength)
	}
	if err := checkCharacters(raw); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return broken(RuleSyntax, "target_url is not a valid URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return broken(RuleScheme, "target_url must be an absolute http or https URL")
	default:
		return broken(RuleScheme, "target_url scheme %q is not allowed; use http or https", u.Scheme)
	}
	if u.User != nil {
		return broken(RuleUserinfo, "target_url must not carry userinfo (user@host)")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return broken(RuleHost, "target_url must have a host (scheme://host/…)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return broken(RulePort, "target_url port %s is not a port number from 1 to 65535", p)
		}
	}
	return hosts.check(u.Hostname())
}

// checkCharacters refuses invalid UTF-8, whitespace, control characters and
// characters that render as nothing or reorder text: format characters (Unicode
// category Cf: bidirectional controls U+202A–202E, U+2066–2069, U+200E/F, U+061C;
// zero-width U+200B–200D, U+2060, U+FEFF; U+00AD, U+180E …) and the Hangul fillers.
func checkCharacters(raw string) error {
	if !utf8.ValidString(raw) {
		return broken(RuleCharacters, "target_url is not valid UTF-8")
	}
	for i, r := range raw {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return broken(RuleCharacters, "target_url contains whitespace or a control character (U+%04X at byte %d)", r, i)
		case unicode.Is(unicode.Cf, r) || r == '\u115f' || r == '\u1160' || r == '\u3164' || r == '\uffa0':
			return broken(RuleCharacters, "target_url contains an invisible or bidirectional formatting character (U+%04X at byte %d)", r, i)
		}
	}
	return nil
}

// checkStoredTarget re-applies to a target read from the store the rules that need
// neither parsing nor the network: an http or https URL (any case) with a host, no
// userinfo, and none of the characters checkCharacters refuses. Issuance checked
// more; the resolver checks this much on every redirect, so it scans the string once
// and looks up Unicode tables only for non-ASCII runes.
func checkStoredTarget(raw string) error {
	rest, ok := cutSchemePrefix(raw)
	if !ok {
		return errors.New("target is not an absolute http or https URL")
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	host := authority
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host = authority[:i]
	}
	switch {
	case strings.IndexByte(authority, '@') >= 0:
		return errors.New("target carries userinfo")
	case host == "" || host == "[]":
		return errors.New("target has no host")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("target has a space or control character at byte %d", i)
		} else if c >= utf8.RuneSelf {
			return checkCharacters(raw[i:])
		}
	}
	return nil
}

// cutSchemePrefix removes "http://" or "https://", in any case.
func cutSchemePrefix(s string) (string, bool) {
	for _, p := range [...]string{"https://", "http://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return "", false
}
