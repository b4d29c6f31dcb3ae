// Package hostname puts URL hosts in one canonical form, so that two spellings a
// browser treats as the same host compare equal: case, trailing dots, UTS-46 mapping
// (fullwidth letters and digits, ideographic full stops), every IPv4 form the WHATWG
// URL standard accepts (hex, octal, one to four parts) and IPv4-mapped IPv6. It also
// matches canonical hosts against lists of hosts and "*.domain" patterns. It imports
// only the standard library and golang.org/x/net/idna.
package hostname

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrInvalid is matched (errors.Is) by every error Normalize returns.
var ErrInvalid = errors.New("invalid host")

// ErrEmptyLabel is matched, beside ErrInvalid, by the error of a host with an empty
// label before its last: ".evil.example", "evil..example".
var ErrEmptyLabel = errors.New("empty label")

// uts46 is the WHATWG URL standard's "domain to ASCII": UTS-46 non-transitional
// processing with CheckBidi and CheckJoiners, without CheckHyphens,
// UseSTD3ASCIIRules or VerifyDnsLength. Options apply in order: MapForLookup turns
// the STD3 and hyphen checks on and the later options turn them off again.
var uts46 = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
)

// Normalize returns the canonical form of a URL host, as url.URL.Hostname returns
// it (an IPv6 literal may keep its brackets): an IP address as netip.Addr.String
// writes it (an IPv4-mapped IPv6 address as its IPv4 address), or else a lower-case
// ASCII name, non-ASCII labels in punycode, without trailing dots.
//
// It refuses what a browser's URL parser refuses: invalid UTF-8, a host that maps to
// nothing, holds a forbidden code point, fails UTS-46 processing, or ends in a number
// without being an IPv4 address ("example.123", "1.2.3.4.5", "256.0.0.1"); and IPv6
// zones. It also refuses a name with an empty label before its last, which browsers
// parse but no resolver looks up.
// Normalize is idempotent: Normalize(h) == Normalize(Normalize(h)).
func Normalize(host string) (string, error) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		return normalizeIPv6(host, host[1:len(host)-1])
	}
	if strings.Contains(host, ":") {
		return normalizeIPv6(host, host)
	}
	if !utf8.ValidString(host) { // idna would encode the bytes as U+FFFD unchecked
		return "", fmt.Errorf("%w %q: not valid UTF-8", ErrInvalid, host)
	}
	name, err := uts46.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrInvalid, host, err)
	}
	name = strings.TrimRight(name, ".")
	if name == "" {
		return "", fmt.Errorf("%w %q: empty", ErrInvalid, host)
	}
	// An empty label (".evil.example", "evil..example") is a name no DNS resolver
	// looks up, so no target can have it: a deny rule written so would never match
	// (issue 44). Trailing dots are the root's and are dropped above.
	if strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
		return "", fmt.Errorf("%w %q: %w (a leading dot or two dots in a row)", ErrInvalid, host, ErrEmptyLabel)
	}
	if i := strings.IndexFunc(name, forbidden); i >= 0 {
		return "", fmt.Errorf("%w %q: forbidden character %q", ErrInvalid, host, name[i])
	}
	// A punycode label must decode again: ToASCII encodes labels that its own decoder
	// then refuses (a label of some 2,000 ";" and a few letters overflows punycode's
	// decoding), and a host whose ASCII form is refused can be neither resolved nor
	// compared (FuzzNormalize found it).
	if strings.Contains(name, "xn--") {
		if again, err := uts46.ToASCII(name); err != nil || strings.TrimRight(again, ".") != name {
			return "", fmt.Errorf("%w %q: its ASCII form %.80q does not decode again", ErrInvalid, host, name)
		}
	}
	if !endsInNumber(name) {
		return name, nil
	}
	ip, ok := parseIPv4(name)
	if !ok {
		return "", fmt.Errorf("%w %q: ends in a number but is not an IPv4 address", ErrInvalid, host)
	}
	return ip.String(), nil
}

func normalizeIPv6(host, literal string) (string, error) {
	ip, err := netip.ParseAddr(literal)
	if err != nil || !ip.Is6() {
		return "", fmt.Errorf("%w %q: not an IPv6 address", ErrInvalid, host)
	}
	if ip.Zone() != "" {
		return "", fmt.Errorf("%w %q: IPv6 zones are not allowed in URLs", ErrInvalid, host)
	}
	return ip.Unmap().String(), nil
}

// forbidden reports the WHATWG URL standard's forbidden domain code points (after
// UTS-46 mapping every other rune is ASCII).
func forbidden(r rune) bool {
	return r <= 0x20 || r == 0x7f || strings.ContainsRune("#%/:<>?@[\\]^|", r)
}

// IsLoopback reports whether host, as a URL or a listen address carries it (any
// case, brackets removed), reaches only this machine's loopback: "localhost" or a
// loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127.x). Unlike IsLocal, an
// unspecified address (which listens on every interface) is not loopback.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// IsLocal reports whether a canonical host (from Normalize) names this machine:
// localhost or a name under .localhost (RFC 6761; browsers resolve them to loopback
// without DNS), the loopback names Linux distributions put in /etc/hosts
// (localhost.localdomain, ip6-localhost, …), a loopback address (127.0.0.0/8, ::1),
// or an unspecified address (0.0.0.0, ::), which connects to this machine. The
// machine's own hostname is not known here: see shorturl's MachineNames.
func IsLocal(host string) bool {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || loopbackNames[host]
}

// loopbackNames are the conventional names of the loopback in /etc/hosts.
var loopbackNames = map[string]bool{
	"localhost.localdomain": true, "localhost4": true, "localhost4.localdomain4": true,
	"localhost6": true, "localhost6.localdomain6": true, "ip6-localhost": true, "ip6-loopback": true,
}
