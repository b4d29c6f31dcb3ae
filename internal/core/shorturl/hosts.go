package shorturl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/linoone/linoone/internal/core/hostname"
)

// HostRules are the hosts a target URL must not point at: this service's own hosts
// (RuleSelf: the resolver's, whose redirect would loop, and the management API's)
// and the reserved hosts (RuleReserved). Hosts compare in hostname.Normalize's
// canonical form. When an own host is on this machine (localhost, loopback,
// unspecified), every host that reaches this machine counts as own. The zero
// HostRules refuses no valid host.
type HostRules struct {
	self     map[string]bool
	own      string // one more own host, canonical: the Host a request was sent to
	local    bool
	machine  map[string]bool // names of this machine, canonical: own hosts when local
	reserved hostname.List
}

// withMachineNames adds names of this machine (its hostname, /etc/hosts' loopback
// names), which count as own hosts when an own host is on this machine; an invalid
// one is passed over.
func (h HostRules) withMachineNames(names []string) HostRules {
	for _, n := range names {
		c, err := hostname.Normalize(n)
		if err != nil {
			continue
		}
		if h.machine == nil {
			h.machine = map[string]bool{}
		}
		h.machine[c] = true
	}
	return h
}

// withRequestHost adds the host a request reached this service at (host or
// host:port) to the own hosts; an invalid one adds nothing.
func (h HostRules) withRequestHost(requestHost string) HostRules {
	host := hostPart(requestHost)
	if host == "" {
		return h
	}
	if c, err := hostname.Normalize(host); err == nil {
		h.own = c
		h.local = h.local || hostname.IsLocal(c)
	}
	return h
}

// NewHostRules builds HostRules from this service's own hosts, each a host or
// host:port ("s.example.com", "127.0.0.1:8081", "[::1]:8081"; ":8081", a listen
// address on every interface, is this machine; "" is skipped), and from reserved
// host patterns (hostname.NewList: hosts and "*.domain"). It reports every invalid
// entry at once.
func NewHostRules(self, reserved []string) (HostRules, error) {
	h := HostRules{self: map[string]bool{}}
	var errs []error
	for _, s := range self {
		if s == "" {
			continue
		}
		host := hostPart(s)
		if host == "" { // ":8081"
			h.local = true
			continue
		}
		c, err := hostname.Normalize(host)
		if err != nil {
			errs = append(errs, fmt.Errorf("own host %q: %w", s, err))
			continue
		}
		h.self[c] = true
		h.local = h.local || hostname.IsLocal(c)
	}
	l, err := hostname.NewList(reserved)
	if err != nil {
		errs = append(errs, fmt.Errorf("reserved hosts: %w", err))
	}
	h.reserved = l
	return h, errors.Join(errs...)
}

// hostPart strips an optional port and IPv6 brackets: "h:1" → "h", "[::1]:1" →
// "::1"; a bare IPv6 address (two or more colons) is kept whole.
func hostPart(s string) string {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, ']'); i > 0 {
			return s[1:i]
		}
	}
	if i := strings.IndexByte(s, ':'); i >= 0 && strings.Count(s, ":") == 1 {
		return s[:i]
	}
	return s
}

// check applies the host rules to a URL's Hostname().
func (h HostRules) check(host string) error {
	c, err := hostname.Normalize(host)
	if err != nil {
		return broken(RuleHost, "target_url host %q is not a valid host name", host)
	}
	shown := host
	if c != host {
		shown = fmt.Sprintf("%s (%s)", host, c)
	}
	if h.self[c] || c == h.own || h.local && (hostname.IsLocal(c) || h.machine[c]) {
		return broken(RuleSelf, "target_url host %s is this service's own host; a short URL must not point back at it", shown)
	}
	if h.reserved.Match(c) {
		return broken(RuleReserved, "target_url host %s is reserved", shown)
	}
	return nil
}
