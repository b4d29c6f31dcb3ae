package awswire

import (
	"context"
	"crypto/subtle"
	"net/netip"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// OriginVerifyHeader is the header CloudFront adds to every request it sends the
// resolver API when Terraform's cdn option is on (terraform/modules/cdn), holding
// the origin secret. A request that carries it came through the distribution; one
// without it reached API Gateway directly.
const OriginVerifyHeader = "X-Linoone-Origin-Verify"

// ViewerAddressHeader is the header in which CloudFront reports the viewer's
// address and source port: "198.51.100.10:46532", an IPv6 address with its port
// after the last colon ("2001:db8::1:46532"), or in brackets ("[2001:db8::1]:46532").
const ViewerAddressHeader = "CloudFront-Viewer-Address"

// VisitorFromCloudFront wraps a resolve handler whose API sits behind CloudFront:
// API Gateway's source address is then an edge server's, and the visitor's is in
// ViewerAddressHeader. Each event's source IP becomes that address, but only when
// the event also carries OriginVerifyHeader with secret (compared in constant
// time): a client that calls API Gateway directly can send any header, and must
// not choose the visitor_ip_address of its own clicks. A missing or wrong secret,
// or a header that is not one valid address, leaves API Gateway's source IP: the
// redirect never fails on it. OriginVerifyHeader is removed from every event, so
// nothing after this (handler, logs) sees the secret.
func VisitorFromCloudFront[R any](secret string, h func(context.Context, events.APIGatewayV2HTTPRequest) (R, error)) func(context.Context, events.APIGatewayV2HTTPRequest) (R, error) {
	want := []byte(secret)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (R, error) {
		got, verified := takeHeader(ev.Headers, OriginVerifyHeader)
		verified = verified && len(want) > 0 && subtle.ConstantTimeCompare([]byte(got), want) == 1
		if v, ok := header(ev.Headers, ViewerAddressHeader); verified && ok {
			if ip, ok := ParseViewerAddress(v); ok {
				ev.RequestContext.HTTP.SourceIP = ip.String()
			}
		}
		return h(ctx, ev)
	}
}

// ParseViewerAddress reads a CloudFront-Viewer-Address value: an IP address and a
// port (see ViewerAddressHeader). Anything else, several values joined by API
// Gateway included, is refused. An IPv4-mapped IPv6 address is returned as IPv4.
func ParseViewerAddress(v string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return validViewer(ap.Addr())
	}
	i := strings.LastIndexByte(v, ':')
	if i < 0 || !validPort(v[i+1:]) {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(v[:i])
	if err != nil || !ip.Is6() {
		return netip.Addr{}, false // an IPv4 address with a port parsed above
	}
	return validViewer(ip)
}

// validViewer takes ip unless it has a zone, which no address from the internet has.
func validViewer(ip netip.Addr) (netip.Addr, bool) {
	if !ip.IsValid() || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// validPort reports a decimal port, 0 to 65535, without sign or leading space.
func validPort(s string) bool {
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n <= 65535
}

// header returns the value of the header named name (case-insensitive: API Gateway
// hands HTTP API headers on in lower case).
func header(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// takeHeader returns the header named name and removes it, in any case, from h.
// Several spellings of it in one map are refused (ok false), as a value repeated by
// a client would be.
func takeHeader(h map[string]string, name string) (v string, ok bool) {
	n := 0
	for k, val := range h {
		if strings.EqualFold(k, name) {
			v, n = val, n+1
			delete(h, k)
		}
	}
	return v, n == 1
}
