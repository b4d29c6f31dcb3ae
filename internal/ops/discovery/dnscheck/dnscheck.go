// Package dnscheck looks at a domain the way the public sees it. A Resolver
// follows A, AAAA and CNAME chains and finds the zone that serves a name by
// asking one DNS server (by default the system resolver of /etc/resolv.conf)
// with github.com/miekg/dns; a Prober asks https://<domain>/<token> once,
// without following redirects. Both answer with the discovery package's fact
// types (Resolution, PublicZone, Probe).
package dnscheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/linoone/linoone/internal/ops/discovery"
)

// Errors, matched with errors.Is.
var (
	// ErrUnreachable: the DNS server did not answer.
	ErrUnreachable = errors.New("dns server unreachable")
	// ErrServerFailure: the DNS server answered with an error code
	// (SERVFAIL, REFUSED, ...).
	ErrServerFailure = errors.New("dns server failure")
	// ErrCNAMELoop: a CNAME chain loops or is too long.
	ErrCNAMELoop = errors.New("cname chain loops or is too long")
)

const (
	// DefaultTimeout bounds one DNS exchange.
	DefaultTimeout = 5 * time.Second
	// maxChain bounds the CNAME chain length.
	maxChain = 10
	// DefaultResolvConf is where SystemServer looks for the system resolver.
	DefaultResolvConf = "/etc/resolv.conf"
)

// Resolver asks one DNS server.
type Resolver struct {
	server  string
	timeout time.Duration
}

// NewResolver returns a Resolver asking server (host:port). A zero timeout
// means DefaultTimeout.
func NewResolver(server string, timeout time.Duration) *Resolver {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Resolver{server: server, timeout: timeout}
}

// Server is the address the resolver asks.
func (r *Resolver) Server() string { return r.server }

// SystemServer returns the first name server of a resolv.conf file as
// host:port.
func SystemServer(resolvConf string) (string, error) {
	cfg, err := dns.ClientConfigFromFile(resolvConf)
	if err != nil {
		return "", fmt.Errorf("read system resolver from %s: %w", resolvConf, err)
	}
	if len(cfg.Servers) == 0 {
		return "", fmt.Errorf("read system resolver from %s: no nameserver line", resolvConf)
	}
	return net.JoinHostPort(cfg.Servers[0], cfg.Port), nil
}

// Resolve follows name's CNAME chain and collects the A and AAAA addresses
// at its end. A name that does not exist is not an error: it is reported
// with NXDomain.
func (r *Resolver) Resolve(ctx context.Context, name string) (discovery.Resolution, error) {
	res := discovery.Resolution{Name: norm(name)}
	current := res.Name
	seen := map[string]bool{current: true}
	var addresses []string
	for range maxChain {
		in, err := r.exchange(ctx, current, dns.TypeA)
		if err != nil {
			return discovery.Resolution{}, err
		}
		before := len(res.Chain)
		current, err = follow(in.Answer, current, &res.Chain, seen)
		if err != nil {
			return discovery.Resolution{}, fmt.Errorf("resolve %s: %w", res.Name, err)
		}
		addresses = records(in.Answer, current, dns.TypeA)
		if in.Rcode == dns.RcodeNameError {
			res.NXDomain = true
			return res, nil
		}
		if len(addresses) > 0 || len(res.Chain) == before {
			break
		}
		// The server gave the CNAME without chasing it: ask for its target.
		if len(res.Chain) >= maxChain {
			return discovery.Resolution{}, fmt.Errorf("resolve %s: %w", res.Name, ErrCNAMELoop)
		}
	}
	in, err := r.exchange(ctx, current, dns.TypeAAAA)
	if err != nil {
		return discovery.Resolution{}, err
	}
	res.Addresses = append(addresses, records(in.Answer, current, dns.TypeAAAA)...)
	return res, nil
}

// Zone finds the zone that serves name: the closest enclosing name with an
// SOA record of its own, and that zone's NS records. A zero PublicZone means
// none was found.
func (r *Resolver) Zone(ctx context.Context, name string) (discovery.PublicZone, error) {
	for n := norm(name); n != ""; {
		in, err := r.exchange(ctx, n, dns.TypeSOA)
		if err != nil {
			return discovery.PublicZone{}, err
		}
		for _, rr := range in.Answer {
			if soa, ok := rr.(*dns.SOA); ok && norm(soa.Hdr.Name) == n {
				ns, err := r.nameServers(ctx, n)
				if err != nil {
					return discovery.PublicZone{}, err
				}
				return discovery.PublicZone{Name: n, NameServers: ns}, nil
			}
		}
		_, parent, ok := strings.Cut(n, ".")
		if !ok {
			break
		}
		n = parent
	}
	return discovery.PublicZone{}, nil
}

func (r *Resolver) nameServers(ctx context.Context, zone string) ([]string, error) {
	in, err := r.exchange(ctx, zone, dns.TypeNS)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range in.Answer {
		if ns, ok := rr.(*dns.NS); ok && norm(ns.Hdr.Name) == zone {
			out = append(out, norm(ns.Ns))
		}
	}
	slices.Sort(out)
	return out, nil
}

// exchange sends one recursive query, retrying over TCP when the UDP answer
// is truncated. NOERROR and NXDOMAIN are answers; other codes are errors.
func (r *Resolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	m.SetEdns0(1232, false)
	c := &dns.Client{Net: "udp", Timeout: r.timeout}
	in, _, err := c.ExchangeContext(ctx, m, r.server)
	if err == nil && in.Truncated {
		c.Net = "tcp"
		in, _, err = c.ExchangeContext(ctx, m, r.server)
	}
	typ := dns.TypeToString[qtype]
	if err != nil {
		return nil, fmt.Errorf("query %s %s at %s: %w: %w", name, typ, r.server, ErrUnreachable, err)
	}
	switch in.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
		return in, nil
	}
	return nil, fmt.Errorf("query %s %s at %s: %w: %s", name, typ, r.server, ErrServerFailure, dns.RcodeToString[in.Rcode])
}

// follow walks the CNAME records of an answer from name, appending each target
// to chain, and returns the name at the end.
func follow(answer []dns.RR, name string, chain *[]string, seen map[string]bool) (string, error) {
	for {
		next := ""
		for _, rr := range answer {
			if c, ok := rr.(*dns.CNAME); ok && norm(c.Hdr.Name) == name {
				next = norm(c.Target)
				break
			}
		}
		if next == "" {
			return name, nil
		}
		if seen[next] || len(*chain) >= maxChain {
			return "", ErrCNAMELoop
		}
		seen[next] = true
		*chain = append(*chain, next)
		name = next
	}
}

// records returns the addresses of type qtype owned by name.
func records(answer []dns.RR, name string, qtype uint16) []string {
	var out []string
	for _, rr := range answer {
		if norm(rr.Header().Name) != name || rr.Header().Rrtype != qtype {
			continue
		}
		switch a := rr.(type) {
		case *dns.A:
			out = append(out, a.A.String())
		case *dns.AAAA:
			out = append(out, a.AAAA.String())
		}
	}
	return out
}

func norm(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}
