package discoverytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Request is one call the fake AWS endpoint received.
type Request struct {
	// Key names the operation and its parameters, as used in replies, e.g.
	// "route53 ListHostedZonesByName dnsname=example.com".
	Key string
	// Operation is the key without parameters, e.g.
	// "route53 ListHostedZonesByName".
	Operation string
	// Region and Service come from the SigV4 credential scope.
	Region  string
	Service string
}

// AWS is a fake AWS endpoint for every service discovery calls. It answers
// with recorded raw HTTP responses (status line, headers, body) from a
// testdata directory.
type AWS struct {
	// URL is the base endpoint to give the SDK clients.
	URL string

	t       testing.TB
	dir     string
	replies map[string]string

	mu       sync.Mutex
	requests []Request
}

// defaultReply is the recorded answer used when a test gives none for an
// operation: nothing found.
func defaultReply(operation string) (string, bool) {
	switch operation {
	case "route53 ListHostedZonesByName":
		return "route53/list-hosted-zones-by-name-none.http", true
	case "route53 ListResourceRecordSets":
		return "route53/list-resource-record-sets-none.http", true
	case "cloudfront ListDistributions":
		return "cloudfront/list-distributions-empty.http", true
	case "apigateway GetDomainNames":
		return "apigatewayv2/get-domain-names-empty.http", true
	case "apigateway GetApiMappings":
		return "apigatewayv2/get-api-mappings-empty.http", true
	case "apigateway GetApi":
		return "apigatewayv2/get-api-not-found.http", true
	case "acm ListCertificates":
		return "acm/list-certificates-empty.http", true
	case "eventbridge DescribeEventBus":
		return "eventbridge/describe-event-bus-not-found.http", true
	}
	return "", false
}

// StartAWS starts the fake endpoint. replies maps a request key (with or
// without parameters) to a response file under dir; answers that nothing was
// found fill the rest.
func StartAWS(t testing.TB, dir string, replies map[string]string) *AWS {
	t.Helper()
	a := &AWS{t: t, dir: dir, replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// Requests returns the calls received so far.
func (a *AWS) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

func (a *AWS) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := identify(r, body)
	service, region, ok := credentialScope(r.Header.Get("Authorization"))
	if !ok {
		a.t.Errorf("%s %s: request not signed with SigV4 (Authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
	}
	req.Service, req.Region = service, region
	if req.Operation == "acm ListCertificates" {
		// The same client asks two regions: tell them apart.
		req.Key += " region=" + region
	}
	a.mu.Lock()
	a.requests = append(a.requests, req)
	a.mu.Unlock()
	if req.Operation == "" {
		a.t.Errorf("unexpected request %s %s (target %q)", r.Method, r.URL, r.Header.Get("X-Amz-Target"))
		http.Error(w, "unexpected request", http.StatusNotImplemented)
		return
	}
	file, ok := a.replies[req.Key]
	if !ok {
		file, ok = a.replies[req.Operation]
	}
	if !ok {
		file, ok = defaultReply(req.Operation)
	}
	if !ok {
		a.t.Errorf("no reply for %s", req.Key)
		http.Error(w, "no reply", http.StatusNotImplemented)
		return
	}
	a.replay(w, r, file)
}

// replay writes a recorded raw HTTP response.
func (a *AWS) replay(w http.ResponseWriter, r *http.Request, file string) {
	raw, err := os.ReadFile(filepath.Join(a.dir, file))
	if err != nil {
		a.t.Errorf("read reply: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), r)
	if err != nil {
		a.t.Errorf("parse reply %s: %v", file, err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Errorf("read reply body %s: %v", file, err)
	}
	for k, vs := range resp.Header {
		if k == "Content-Length" || k == "Transfer-Encoding" {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// identify names the operation a request calls, from its path, query and
// X-Amz-Target header, as the SDK serializers build them.
func identify(r *http.Request, body []byte) Request {
	q := r.URL.Query()
	segs := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	unescape := func(s string) string {
		u, err := url.PathUnescape(s)
		if err != nil {
			return s
		}
		return u
	}
	op := func(name string, params ...string) Request {
		k := name
		for i := 0; i+1 < len(params); i += 2 {
			if params[i+1] != "" {
				k += " " + params[i] + "=" + params[i+1]
			}
		}
		return Request{Key: k, Operation: name}
	}
	switch target := r.Header.Get("X-Amz-Target"); {
	case target == "CertificateManager.ListCertificates":
		return op("acm ListCertificates")
	case target == "AWSEvents.DescribeEventBus":
		var in struct{ Name string }
		_ = json.Unmarshal(body, &in)
		return op("eventbridge DescribeEventBus", "name", in.Name)
	case target != "":
		return Request{Key: target}
	}
	switch {
	case r.Method != http.MethodGet:
	case len(segs) == 2 && segs[0] == "2013-04-01" && segs[1] == "hostedzonesbyname":
		return op("route53 ListHostedZonesByName", "dnsname", q.Get("dnsname"))
	case len(segs) == 4 && segs[0] == "2013-04-01" && segs[1] == "hostedzone" && segs[3] == "rrset":
		return op("route53 ListResourceRecordSets", "zone", unescape(segs[2]), "name", q.Get("name"), "type", q.Get("type"))
	case len(segs) == 2 && segs[0] == "2020-05-31" && segs[1] == "distribution":
		return op("cloudfront ListDistributions")
	case len(segs) == 2 && segs[0] == "v2" && segs[1] == "domainnames":
		return op("apigateway GetDomainNames", "nexttoken", q.Get("nextToken"))
	case len(segs) == 4 && segs[0] == "v2" && segs[1] == "domainnames" && segs[3] == "apimappings":
		return op("apigateway GetApiMappings", "domain", unescape(segs[2]))
	case len(segs) == 3 && segs[0] == "v2" && segs[1] == "apis":
		return op("apigateway GetApi", "id", unescape(segs[2]))
	}
	return Request{Key: r.Method + " " + r.URL.Path}
}

// credentialScope reads service and region from a SigV4 Authorization header:
// "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/route53/aws4_request, ...".
func credentialScope(auth string) (service, region string, ok bool) {
	rest, found := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
	if !found {
		return "", "", false
	}
	cred, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return "", "", false
	}
	return parts[3], parts[2], true
}

// ClosedURL returns an http URL on loopback where nothing listens.
func ClosedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}
