package sigv4

import "net/http"

// Caller returns the access key id a request's Authorization header names, or ""
// when it has none that parses. It checks nothing: call it only on a request
// [Verifier.Verify] accepted, where the id is the caller's identity.
func Caller(r *http.Request) string {
	a, err := parseAuthorization(r.Header.Get(headerAuthorization))
	if err != nil {
		return ""
	}
	return a.AccessKeyID
}
