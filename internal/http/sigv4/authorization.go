package sigv4

import (
	"fmt"
	"strings"
)

const (
	algorithm       = "AWS4-HMAC-SHA256"
	scopeTerminator = "aws4_request"
	// maxAuthorizationLen bounds the header we are willing to parse.
	maxAuthorizationLen = 4096
	signatureHexLen     = 64
)

// authorization is a parsed `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=…` header value.
type authorization struct {
	AccessKeyID   string
	Date          string // YYYYMMDD from the credential scope
	Region        string
	Service       string
	SignedHeaders []string // lower case, sorted, unique
	Signature     string   // 64 lower-case hex digits
}

// signedHeadersString returns the list in its wire form, "a;b;c".
func (a authorization) signedHeadersString() string {
	return strings.Join(a.SignedHeaders, ";")
}

func (a authorization) signs(name string) bool {
	for _, h := range a.SignedHeaders {
		if h == name {
			return true
		}
	}
	return false
}

// parseAuthorization parses an Authorization header value strictly. The
// errors it returns wrap [ErrMalformedAuthorization] and never quote the
// value itself.
func parseAuthorization(value string) (authorization, error) {
	var a authorization
	if len(value) > maxAuthorizationLen {
		return a, fmt.Errorf("%w: header longer than %d bytes", ErrMalformedAuthorization, maxAuthorizationLen)
	}
	scheme, rest, ok := strings.Cut(value, " ")
	if !ok || scheme != algorithm {
		return a, fmt.Errorf("%w: scheme is not %s", ErrMalformedAuthorization, algorithm)
	}

	var credential, signedHeaders, signature string
	var seenCredential, seenSignedHeaders, seenSignature bool
	for part := range strings.SplitSeq(rest, ",") {
		part = strings.Trim(part, " ")
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			return a, fmt.Errorf("%w: component without '='", ErrMalformedAuthorization)
		}
		var dst *string
		var seen *bool
		switch key {
		case "Credential":
			dst, seen = &credential, &seenCredential
		case "SignedHeaders":
			dst, seen = &signedHeaders, &seenSignedHeaders
		case "Signature":
			dst, seen = &signature, &seenSignature
		default:
			return a, fmt.Errorf("%w: unknown component", ErrMalformedAuthorization)
		}
		if *seen {
			return a, fmt.Errorf("%w: duplicate %s component", ErrMalformedAuthorization, key)
		}
		*dst, *seen = val, true
	}
	var missing []string
	for _, c := range []struct {
		name string
		seen bool
	}{{"Credential", seenCredential}, {"SignedHeaders", seenSignedHeaders}, {"Signature", seenSignature}} {
		if !c.seen {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return a, fmt.Errorf("%w: missing %s", ErrMalformedAuthorization, strings.Join(missing, ", "))
	}

	if err := a.parseCredential(credential); err != nil {
		return authorization{}, err
	}
	headers, err := parseSignedHeaders(signedHeaders)
	if err != nil {
		return authorization{}, err
	}
	a.SignedHeaders = headers
	if !isLowerHex(signature, signatureHexLen) {
		return authorization{}, fmt.Errorf("%w: signature is not %d lower-case hex digits", ErrMalformedAuthorization, signatureHexLen)
	}
	a.Signature = signature
	return a, nil
}

// parseCredential parses "AKID/YYYYMMDD/region/service/aws4_request".
func (a *authorization) parseCredential(s string) error {
	parts := strings.Split(s, "/")
	if len(parts) != 5 {
		return fmt.Errorf("%w: credential must have 5 '/'-separated parts", ErrMalformedAuthorization)
	}
	if !isAccessKeyID(parts[0]) {
		return fmt.Errorf("%w: credential access key id", ErrMalformedAuthorization)
	}
	if !isDigits(parts[1], 8) {
		return fmt.Errorf("%w: credential date is not YYYYMMDD", ErrMalformedAuthorization)
	}
	if !isScopeName(parts[2]) {
		return fmt.Errorf("%w: credential region", ErrMalformedAuthorization)
	}
	if !isScopeName(parts[3]) {
		return fmt.Errorf("%w: credential service", ErrMalformedAuthorization)
	}
	if parts[4] != scopeTerminator {
		return fmt.Errorf("%w: credential scope does not end in %s", ErrMalformedAuthorization, scopeTerminator)
	}
	a.AccessKeyID, a.Date, a.Region, a.Service = parts[0], parts[1], parts[2], parts[3]
	return nil
}

// parseSignedHeaders parses "host;x-amz-date": lower-case header names,
// strictly ascending (so sorted and without duplicates), as SigV4 requires.
func parseSignedHeaders(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: no signed headers", ErrMalformedAuthorization)
	}
	names := strings.Split(s, ";")
	for i, n := range names {
		if !isLowerToken(n) {
			return nil, fmt.Errorf("%w: signed header name is not a lower-case token", ErrMalformedAuthorization)
		}
		if i > 0 && names[i-1] >= n {
			return nil, fmt.Errorf("%w: signed headers not sorted or not unique", ErrMalformedAuthorization)
		}
	}
	return names, nil
}

func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isScopeName accepts region and service names: 1-64 of a-z, 0-9, '-'.
func isScopeName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isLowerToken accepts an RFC 9110 token without upper-case letters.
func isLowerToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
