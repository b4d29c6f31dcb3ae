package denylist

import (
	"net/netip"
	"net/url"
	"strings"

	"github.com/linoone/linoone/internal/core/hostname"
)

// urlParts are the parts of an http(s) URL a rule compares.
type urlParts struct {
	scheme string // lower case
	host   string // as written, without brackets' port
	port   string // "" when absent or the scheme's default
	rest   string // from the first '/', '?' or '#' after the authority
}

// splitURL cuts an absolute http(s) URL without parsing it whole: the redirect path
// matches every target, so this scans the string once and allocates nothing.
func splitURL(s string) (urlParts, bool) {
	var u urlParts
	i := strings.Index(s, "://")
	if i < 0 {
		return u, false
	}
	switch {
	case strings.EqualFold(s[:i], "https"):
		u.scheme = "https"
	case strings.EqualFold(s[:i], "http"):
		u.scheme = "http"
	default:
		return u, false
	}
	auth := s[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth, u.rest = auth[:j], auth[j:]
	}
	if strings.IndexByte(auth, '@') >= 0 || strings.IndexByte(auth, '\\') >= 0 {
		return u, false
	}
	u.host = auth
	if j := strings.LastIndexByte(auth, ':'); j >= 0 && !strings.Contains(auth[j:], "]") {
		u.host, u.port = auth[:j], auth[j+1:]
	}
	if strings.HasPrefix(u.host, "[") && strings.HasSuffix(u.host, "]") {
		u.host = u.host[1 : len(u.host)-1]
	}
	u.port = strings.TrimLeft(u.port, "0")
	if u.port == "443" && u.scheme == "https" || u.port == "80" && u.scheme == "http" {
		u.port = ""
	}
	return u, u.host != ""
}

// canonical is hostname.Normalize(host), without calling it for a host that is
// already canonical: a lower-case ASCII name of letters, digits, '-' and '.' that
// neither ends in a dot nor in a number nor holds a punycode label. Most targets
// are such names, and Normalize's UTS-46 processing costs more than the lookups.
//
// A host may be written with percent-escapes (https://%65vil.example/): browsers
// read it decoded, so it is compared decoded.
func canonical(host string) (string, bool) {
	if isPlainName(host) {
		return host, true
	}
	if strings.IndexByte(host, '%') >= 0 {
		decoded, err := url.PathUnescape(host)
		if err != nil {
			return "", false
		}
		host = decoded
	}
	c, err := hostname.Normalize(host)
	return c, err == nil
}

// browserPath returns rest (what follows the authority: a path, then any query and
// fragment) as a browser requests it, so that a prefix rule and a target compare
// alike however either was written:
//   - an empty path is "/" (https://evil.example?x requests /?x);
//   - the characters a browser percent-encodes are encoded (non-ASCII bytes, controls,
//     space, '"', '<', '>', '`', '{', '}' in the path; in the query the same but
//     '`', '{' and '}', and with the apostrophe), as browserEscape does; escapes
//     already written stay;
//   - '\' is read as '/', as browsers do in http and https URLs;
//   - "." and ".." segments are removed, also when spelled with %2e.
//
// So /x/../shared/a meets a rule for /shared/, and /geschäft/ one for
// /gesch%C3%A4ft/. Most paths need none of this, and are returned as they are.
func browserPath(rest string) string {
	if rest == "" || rest[0] != '/' {
		rest = "/" + rest
	}
	rest = browserEscape(rest)
	end := strings.IndexAny(rest, "?#")
	if end < 0 {
		end = len(rest)
	}
	path, tail := rest[:end], rest[end:]
	if !strings.ContainsAny(path, ".\\") && !strings.Contains(path, "%2e") && !strings.Contains(path, "%2E") {
		return rest
	}
	segs := strings.Split(strings.ReplaceAll(path, "\\", "/"), "/")[1:] // path starts with '/'
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch lower := strings.ToLower(seg); lower {
		case ".", "%2e":
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
			continue
		}
		if last {
			out = append(out, "") // "/a/b/.." is "/a/"
		}
	}
	return "/" + strings.Join(out, "/") + tail
}

// browserEscape percent-encodes, with upper-case hex, the bytes of rest that the
// WHATWG URL standard encodes in an http(s) URL's path (its path percent-encode
// set), query (special-query set) and fragment (fragment set). It returns rest
// itself when none needs it.
func browserEscape(rest string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	part := byte('/') // which part the scan is in: '/', '?' or '#'
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '?' && part == '/', c == '#' && part != '#':
			part = c
		case escapes(part, c):
			if b == nil {
				b = append(make([]byte, 0, len(rest)+16), rest[:i]...)
			}
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		if b != nil {
			b = append(b, c)
		}
	}
	if b == nil {
		return rest
	}
	return string(b)
}

// escapes says whether a browser percent-encodes byte c in the part of an http(s)
// URL that starts with part ('/' path, '?' query, '#' fragment).
func escapes(part, c byte) bool {
	if c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' {
		return true
	}
	switch part {
	case '/':
		return c == '`' || c == '{' || c == '}'
	case '?':
		return c == '\''
	}
	return c == '`'
}

func isPlainName(h string) bool {
	if h == "" || h[len(h)-1] == '.' || h[0] == '.' || strings.Contains(h, "xn--") || strings.Contains(h, "..") {
		return false
	}
	last := strings.LastIndexByte(h, '.')
	if c := h[last+1]; c >= '0' && c <= '9' { // ends in a number: maybe an IPv4 form
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func isIP(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}
