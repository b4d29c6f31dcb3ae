package hostname

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// List matches canonical hosts against patterns: a host (a name or an IP literal,
// compared after Normalize) or "*.domain", which matches the domain itself and every
// name under it. The zero List matches nothing.
type List struct {
	exact   map[string]bool
	domains []string // "*.domain" patterns without the "*."
}

// NewList normalises patterns into a List; it reports every invalid pattern at once.
func NewList(patterns []string) (List, error) {
	l := List{exact: map[string]bool{}}
	var errs []error
	for _, p := range patterns {
		c, err := normalizePattern(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d, ok := strings.CutPrefix(c, "*."); ok {
			l.domains = append(l.domains, d)
		} else {
			l.exact[c] = true
		}
	}
	return l, errors.Join(errs...)
}

// Match reports whether the canonical host (from Normalize) matches a pattern.
func (l List) Match(host string) bool {
	if l.exact[host] {
		return true
	}
	for _, d := range l.domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// ParseList reads a comma-separated list of host patterns (the format of
// LINOONE_RESERVED_HOSTS, e.g. "admin.example.com, *.internal.example, 10.0.0.1"),
// ignoring spaces and empty entries, and returns the patterns in canonical form for
// NewList. It reports every invalid pattern at once.
func ParseList(s string) ([]string, error) {
	var out []string
	var errs []error
	for p := range strings.SplitSeq(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		c, err := normalizePattern(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// normalizePattern returns a host pattern in canonical form: Normalize(host), or
// "*." + Normalize(domain) for a domain name.
func normalizePattern(p string) (string, error) {
	d, wild := strings.CutPrefix(p, "*.")
	c, err := Normalize(d)
	if err != nil {
		return "", fmt.Errorf("host pattern %q: %w", p, err)
	}
	if strings.Contains(c, "*") {
		return "", fmt.Errorf("host pattern %q: %w: '*' is allowed only as a leading \"*.\"", p, ErrInvalid)
	}
	if !wild {
		return c, nil
	}
	if _, err := netip.ParseAddr(c); err == nil {
		return "", fmt.Errorf("host pattern %q: %w: \"*.\" needs a domain name, not an IP address", p, ErrInvalid)
	}
	return "*." + c, nil
}
