// Package discoverytest provides loopback fakes for the tests of discovery
// and its adapters: a recursive DNS server answering from a fixed table
// (github.com/miekg/dns on 127.0.0.1 UDP) and an AWS endpoint replaying
// recorded HTTP responses. Nothing leaves the machine.
package discoverytest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Zone is a DNS zone the fake serves: it gets an SOA and the NS records.
type Zone struct {
	Name        string
	NameServers []string
}

// DNSConfig describes what the fake DNS server knows.
type DNSConfig struct {
	Zones []Zone
	// Records in zone-file syntax, e.g.
	// "go.example.com. 300 IN CNAME d111111abcdef8.cloudfront.net.".
	Records []string
	// ServFail lists names answered with SERVFAIL.
	ServFail []string
	// NoChase makes the server answer a CNAME without following it, as some
	// resolvers do.
	NoChase bool
}

// DNSServer is a running fake recursive resolver.
type DNSServer struct {
	// Addr is host:port of the UDP listener.
	Addr string

	cfg     DNSConfig
	records map[string][]dns.RR
	zones   map[string]dns.RR // zone name -> SOA

	mu      sync.Mutex
	queries []string
}

// StartDNS starts a fake recursive DNS server on 127.0.0.1 (UDP) and stops it
// when the test ends.
func StartDNS(t testing.TB, cfg DNSConfig) *DNSServer {
	t.Helper()
	s := &DNSServer{cfg: cfg, records: map[string][]dns.RR{}, zones: map[string]dns.RR{}}
	for _, z := range cfg.Zones {
		name := dns.Fqdn(z.Name)
		soa, err := dns.NewRR(fmt.Sprintf("%s 900 IN SOA %s hostmaster.%s 1 7200 900 1209600 86400", name, dns.Fqdn(first(z.NameServers)), name))
		if err != nil {
			t.Fatalf("soa for %s: %v", z.Name, err)
		}
		s.add(soa)
		s.zones[key(name)] = soa
		for _, ns := range z.NameServers {
			rr, err := dns.NewRR(fmt.Sprintf("%s 172800 IN NS %s", name, dns.Fqdn(ns)))
			if err != nil {
				t.Fatalf("ns for %s: %v", z.Name, err)
			}
			s.add(rr)
		}
	}
	for _, text := range cfg.Records {
		rr, err := dns.NewRR(text)
		if err != nil || rr == nil {
			t.Fatalf("record %q: %v", text, err)
		}
		s.add(rr)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen udp: %v", err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: s, NotifyStartedFunc: func() { close(started) }}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	s.Addr = pc.LocalAddr().String()
	return s
}

// Queries returns the questions asked so far, as "name TYPE".
func (s *DNSServer) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

func (s *DNSServer) add(rr dns.RR) {
	k := key(rr.Header().Name)
	s.records[k] = append(s.records[k], rr)
}

// ServeDNS answers like a recursive resolver: CNAMEs are followed (unless
// NoChase), a missing name is NXDOMAIN, and a negative answer carries the
// enclosing zone's SOA.
func (s *DNSServer) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.RecursionAvailable = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := key(q.Name)
	s.mu.Lock()
	s.queries = append(s.queries, name+" "+dns.TypeToString[q.Qtype])
	s.mu.Unlock()
	for _, bad := range s.cfg.ServFail {
		if key(bad) == name {
			m.Rcode = dns.RcodeServerFailure
			_ = w.WriteMsg(m)
			return
		}
	}
	current := name
	for range 10 {
		rrs := s.records[current]
		if q.Qtype != dns.TypeCNAME {
			if c := cnameOf(rrs); c != nil {
				m.Answer = append(m.Answer, c)
				current = key(c.Target)
				if s.cfg.NoChase {
					break
				}
				continue
			}
		}
		answered := false
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
				answered = true
			}
		}
		if !answered {
			if !s.exists(current) {
				m.Rcode = dns.RcodeNameError
			}
			if soa := s.enclosingSOA(current); soa != nil {
				m.Ns = append(m.Ns, soa)
			}
		}
		break
	}
	_ = w.WriteMsg(m)
}

// exists reports whether name owns records or has names below it.
func (s *DNSServer) exists(name string) bool {
	if len(s.records[name]) > 0 {
		return true
	}
	for owner := range s.records {
		if strings.HasSuffix(owner, "."+name) {
			return true
		}
	}
	return false
}

func (s *DNSServer) enclosingSOA(name string) dns.RR {
	for n := name; n != ""; {
		if soa, ok := s.zones[n]; ok {
			return soa
		}
		_, parent, ok := strings.Cut(n, ".")
		if !ok {
			break
		}
		n = parent
	}
	return nil
}

func cnameOf(rrs []dns.RR) *dns.CNAME {
	for _, rr := range rrs {
		if c, ok := rr.(*dns.CNAME); ok {
			return c
		}
	}
	return nil
}

func key(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

func first(names []string) string {
	if len(names) == 0 {
		return "ns.invalid"
	}
	return names[0]
}

// ClosedUDPAddr returns a loopback UDP address nothing listens on.
func ClosedUDPAddr(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen udp: %v", err)
	}
	addr := pc.LocalAddr().String()
	_ = pc.Close()
	return addr
}
