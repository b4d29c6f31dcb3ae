package shorturl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTargetLength is the longest target URL accepted, in bytes.
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
	RuleSelf       Rule = "target-url-self"
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
// at most MaxTargetLength bytes, no whitespace or control characters, no userinfo, and
// not on resolverHost (the host of the resolver base URL; a redirect there would loop).
// Hosts compare case-insensitively, without a trailing dot, on any port.
func CheckTarget(raw, resolverHost string) error {
	if raw == "" {
		return broken(RuleRequired, "target_url is required")
	}
	if len(raw) > MaxTargetLength {
		return broken(RuleLength, "target_url is %d bytes long; at most %d are allowed", len(raw), MaxTargetLength)
	}
	if !utf8.ValidString(raw) {
		return broken(RuleCharacters, "target_url is not valid UTF-8")
	}
	for i, r := range raw {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u200b' || r == '\ufeff' {
			return broken(RuleCharacters, "target_url contains whitespace or a control character (U+%04X at byte %d)", r, i)
		}
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
	if u.Opaque != "" || u.Host == "" {
		return broken(RuleHost, "target_url must have a host (scheme://host/…)")
	}
	host := normalHost(u.Hostname())
	if host == "" {
		return broken(RuleHost, "target_url must have a host (scheme://host/…)")
	}
	if rh := normalHost(resolverHost); rh != "" && host == rh {
		return broken(RuleSelf, "target_url points at the resolver's own host %s; the redirect would loop", u.Hostname())
	}
	return nil
}

func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
