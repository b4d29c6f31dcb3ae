package sigv4

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Defaults for a [Verifier] built without options.
const (
	DefaultSkew         = 5 * time.Minute
	DefaultMaxBodyBytes = 64 << 10
)

const (
	amzDateLayout   = "20060102T150405Z"
	scopeDateLayout = "20060102"

	headerAuthorization = "Authorization"
	headerAmzDate       = "X-Amz-Date"
	headerContentSHA256 = "X-Amz-Content-Sha256"
)

// Verifier checks SigV4 header signatures made with one key pair for one
// region and service. It is safe for concurrent use.
type Verifier struct {
	creds   Credentials
	region  string
	service string
	now     func() time.Time
	skew    time.Duration
	maxBody int64
	// unverified bounds the bodies read at once before their signature can be
	// checked (MaxUnverifiedReads).
	unverified gate
	// perAddress bounds them per remote address (MaxUnverifiedPerAddress).
	perAddress *addressGate
	signer     *v4.Signer
	awsCreds   aws.Credentials
}

// Option configures a [Verifier].
type Option func(*Verifier)

// WithClock sets the clock used for the skew check (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(v *Verifier) { v.now = now }
}

// WithSkew sets how far X-Amz-Date may be from the clock, either way
// (default [DefaultSkew]).
func WithSkew(d time.Duration) Option {
	return func(v *Verifier) { v.skew = d }
}

// WithMaxBodyBytes sets the largest body the verifier reads and hashes
// (default [DefaultMaxBodyBytes]); a larger one fails with [ErrBodyTooLarge].
func WithMaxBodyBytes(n int64) Option {
	return func(v *Verifier) { v.maxBody = n }
}

// New returns a Verifier accepting requests signed with creds for region and
// service (for the management API, "execute-api").
func New(creds Credentials, region, service string, opts ...Option) (*Verifier, error) {
	v := &Verifier{
		creds:      creds,
		region:     region,
		service:    service,
		now:        time.Now,
		skew:       DefaultSkew,
		maxBody:    DefaultMaxBodyBytes,
		unverified: make(gate, MaxUnverifiedReads),
		perAddress: newAddressGate(MaxUnverifiedPerAddress),
	}
	for _, opt := range opts {
		opt(v)
	}
	var errs []error
	if err := creds.validate(); err != nil {
		errs = append(errs, fmt.Errorf("credentials: %w", err))
	}
	if !isScopeName(region) {
		errs = append(errs, fmt.Errorf("region %q: want 1-64 characters of a-z, 0-9, '-'", region))
	}
	if !isScopeName(service) {
		errs = append(errs, fmt.Errorf("service %q: want 1-64 characters of a-z, 0-9, '-'", service))
	}
	if v.now == nil {
		errs = append(errs, errors.New("clock is nil"))
	}
	if v.skew <= 0 {
		errs = append(errs, fmt.Errorf("skew %s: must be positive", v.skew))
	}
	if v.maxBody < 0 {
		errs = append(errs, fmt.Errorf("max body bytes %d: must not be negative", v.maxBody))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("new sigv4 verifier: %w", err)
	}
	v.signer = v4.NewSigner()
	v.awsCreds = aws.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, Source: "linoone"}
	return v, nil
}

// Verify checks the SigV4 Authorization header of r. It reads the body (at
// most the configured limit) to hash it and replaces r.Body with an
// equivalent reader, so handlers after it can read the body again. A request
// that declares its body's hash (X-Amz-Content-Sha256, as this package's
// signer sends) has its signature checked before the body is read.
//
// A nil error means the request was signed with the configured credentials
// for the configured region and service, within the allowed clock skew, and
// that its method, path, query, signed headers and body are the ones signed.
// Otherwise the error wraps one of the package's sentinel errors.
func (v *Verifier) Verify(r *http.Request) error { return v.verify(nil, r) }

// VerifyRequest is Verify for a request a server is reading: an unverified body
// (no X-Amz-Content-Sha256 to check first) must also arrive at UnverifiedMinRate
// after UnverifiedGrace, within UnverifiedDeadline, or it fails with
// [ErrBodyTooSlow]; w's connection read deadline enforces it.
func (v *Verifier) VerifyRequest(w http.ResponseWriter, r *http.Request) error {
	return v.verify(http.NewResponseController(w), r)
}

func (v *Verifier) verify(rc *http.ResponseController, r *http.Request) error {
	auth, signingTime, declared, err := v.head(r)
	if err != nil {
		return fmt.Errorf("verify request: %w", err)
	}
	if declared != "" {
		// The signature covers the body's hash the request declares, so it was
		// checked first (head): a forged request gets no buffer the size of the
		// Content-Length it claims. Then the body must have that hash.
		body, err := v.readBody(r, r.ContentLength)
		if err != nil {
			return fmt.Errorf("verify request: %w", err)
		}
		if hashBody(body) != declared {
			return fmt.Errorf("verify request: %w: X-Amz-Content-Sha256 does not match the body", ErrBodyHashMismatch)
		}
		return nil
	}
	// Nothing signed vouches for the body yet: it is read before the signature can be
	// checked, by anyone who names the access key id (which serve logs). So few are
	// read at once, and the buffer grows with what arrives, not with the
	// Content-Length the request claims.
	// Its own address's turn first: one address waits on its own turns, never
	// holding the shared ones while it waits.
	releaseOwn, err := v.perAddress.acquire(r.Context(), addressKey(r))
	if err != nil {
		return fmt.Errorf("verify request: %w", err)
	}
	defer releaseOwn()
	release, err := v.unverified.acquire(r.Context())
	if err != nil {
		return fmt.Errorf("verify request: %w", err)
	}
	defer release()
	if rc != nil && r.Body != nil && r.Body != http.NoBody {
		d := deadlines{rc: rc, start: time.Now()}
		defer d.clear()
		r.Body = readCloser{Reader: &pacedReader{r: r.Body, d: d}, Closer: r.Body}
	}
	body, err := v.readBody(r, min(r.ContentLength, unverifiedPresize))
	if err != nil {
		return fmt.Errorf("verify request: %w", err)
	}
	payloadHash := hashBody(body)
	if err := checkContentSHA256(r.Header, payloadHash); err != nil {
		return fmt.Errorf("verify request: %w", err)
	}
	if err := v.checkSignature(r, auth, payloadHash, signingTime); err != nil {
		return fmt.Errorf("verify request: %w", err)
	}
	return nil
}

// head runs the checks that need no body, and returns the parsed Authorization, the
// signing time and the body hash the request declares ("" if none), whose signature
// it has checked.
func (v *Verifier) head(r *http.Request) (authorization, time.Time, string, error) {
	query, queryErr := url.ParseQuery(r.URL.RawQuery)
	if isPresigned(query) {
		return authorization{}, time.Time{}, "", ErrPresignUnsupported
	}
	auth, err := v.checkAuthorization(r)
	if err != nil {
		return authorization{}, time.Time{}, "", err
	}
	signingTime, err := v.checkDate(r, auth)
	if err != nil {
		return authorization{}, time.Time{}, "", err
	}
	for _, required := range []string{"host", "x-amz-date"} {
		if !auth.signs(required) {
			return authorization{}, time.Time{}, "", fmt.Errorf("%w: %s is not a signed header", ErrMalformedAuthorization, required)
		}
	}
	if queryErr != nil {
		return authorization{}, time.Time{}, "", fmt.Errorf("%w: query string cannot be canonicalised", ErrMalformedAuthorization)
	}
	declared, ok := declaredHash(r.Header)
	if !ok {
		return auth, signingTime, "", nil
	}
	if err := v.checkSignature(r, auth, declared, signingTime); err != nil {
		return authorization{}, time.Time{}, "", err
	}
	return auth, signingTime, declared, nil
}

// MaxUnverifiedReads bounds the bodies a Verifier reads at once before their
// signature can be checked: each may be as large as the body bound (8 MiB by
// default): an auditor's 100 such requests to local Persist held 1.3 GB, and 200
// to the management API 1.9 GB.
// Requests past it wait for a turn (until their context ends), holding no buffer.
const MaxUnverifiedReads = 8

// gate is a counting semaphore.
type gate chan struct{}

// acquire takes a turn, or fails when ctx ends first.
func (g gate) acquire(ctx context.Context) (release func(), err error) {
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to read an unverified body: %w", ctx.Err())
	}
}

// Middleware returns a middleware that lets only verified requests reach the
// next handler. For any other it calls onReject with the [Verify] error and
// does not call next. A nil onReject answers 413 for [ErrBodyTooLarge] and
// 403 otherwise, with a body that says nothing about the cause.
func (v *Verifier) Middleware(onReject func(w http.ResponseWriter, r *http.Request, err error)) func(http.Handler) http.Handler {
	if onReject == nil {
		onReject = rejectPlain
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := v.VerifyRequest(w, r); err != nil {
				onReject(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func rejectPlain(w http.ResponseWriter, _ *http.Request, err error) {
	code := http.StatusForbidden
	if errors.Is(err, ErrBodyTooLarge) {
		code = http.StatusRequestEntityTooLarge
	}
	http.Error(w, http.StatusText(code), code)
}

// isPresigned reports whether the query carries SigV4 query-string auth.
func isPresigned(query url.Values) bool {
	for k := range query {
		switch strings.ToLower(k) {
		case "x-amz-signature", "x-amz-credential", "x-amz-algorithm":
			return true
		}
	}
	return false
}

// checkAuthorization parses the header and checks access key and scope.
func (v *Verifier) checkAuthorization(r *http.Request) (authorization, error) {
	values := r.Header.Values(headerAuthorization)
	switch len(values) {
	case 0:
		return authorization{}, ErrMissingSignature
	case 1:
	default:
		return authorization{}, fmt.Errorf("%w: more than one Authorization header", ErrMalformedAuthorization)
	}
	if values[0] == "" {
		return authorization{}, ErrMissingSignature
	}
	auth, err := parseAuthorization(values[0])
	if err != nil {
		return authorization{}, err
	}
	if subtle.ConstantTimeCompare([]byte(auth.AccessKeyID), []byte(v.creds.AccessKeyID)) != 1 {
		return authorization{}, ErrUnknownAccessKey
	}
	// Region and service passed parseAuthorization's character check, so
	// they are safe to quote.
	if auth.Region != v.region {
		return authorization{}, fmt.Errorf("%w: region %q, want %q", ErrScope, auth.Region, v.region)
	}
	if auth.Service != v.service {
		return authorization{}, fmt.Errorf("%w: service %q, want %q", ErrScope, auth.Service, v.service)
	}
	return auth, nil
}

// checkDate parses X-Amz-Date, checks it against the clock and the scope
// date, and returns it as the signing time.
func (v *Verifier) checkDate(r *http.Request, auth authorization) (time.Time, error) {
	values := r.Header.Values(headerAmzDate)
	if len(values) != 1 {
		return time.Time{}, fmt.Errorf("%w: want exactly one X-Amz-Date header, got %d", ErrMalformedAuthorization, len(values))
	}
	t, err := time.Parse(amzDateLayout, values[0])
	if err != nil || t.Format(amzDateLayout) != values[0] {
		return time.Time{}, fmt.Errorf("%w: X-Amz-Date is not YYYYMMDDTHHMMSSZ", ErrMalformedAuthorization)
	}
	now := v.now()
	if t.Before(now.Add(-v.skew)) || t.After(now.Add(v.skew)) {
		return time.Time{}, fmt.Errorf("%w: X-Amz-Date %s is %s from server time, allowed %s",
			ErrClockSkew, values[0], t.Sub(now).Round(time.Second), v.skew)
	}
	if d := t.Format(scopeDateLayout); auth.Date != d {
		return time.Time{}, fmt.Errorf("%w: credential date %s, X-Amz-Date day %s", ErrScope, auth.Date, d)
	}
	return t, nil
}

// unverifiedPresize bounds the buffer a body is first read into before anything
// signed vouches for its Content-Length.
const unverifiedPresize = 64 << 10

// declaredHash is the body's SHA-256 as the request's one X-Amz-Content-Sha256
// header declares it, in lower case, when that is a hash (not UNSIGNED-PAYLOAD or
// a streaming mode, which checkContentSHA256 refuses once the body is read).
func declaredHash(h http.Header) (string, bool) {
	values := h.Values(headerContentSHA256)
	if len(values) != 1 || len(values[0]) != sha256.Size*2 {
		return "", false
	}
	declared := strings.ToLower(values[0])
	if _, err := hex.DecodeString(declared); err != nil {
		return "", false
	}
	return declared, true
}

// readBody reads the whole body, bounded, into a buffer first sized for presize
// bytes, and leaves an equivalent r.Body.
func (v *Verifier) readBody(r *http.Request, presize int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > v.maxBody {
		return nil, fmt.Errorf("%w: content-length %d exceeds %d bytes", ErrBodyTooLarge, r.ContentLength, v.maxBody)
	}
	orig := r.Body
	// A declared length sizes the buffer once: io.ReadAll would start small and
	// copy a batch of megabytes a dozen times over as it grows. The limit still
	// applies to what is actually read.
	buf := bytes.NewBuffer(make([]byte, 0, max(presize, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(orig, v.maxBody+1))
	body := buf.Bytes()
	// Put back what was read in front of what was not, so the body looks
	// untouched to whoever reads it next.
	r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(body), orig), Closer: orig}
	if int64(len(body)) > v.maxBody {
		return nil, fmt.Errorf("%w: body exceeds %d bytes", ErrBodyTooLarge, v.maxBody)
	}
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, fmt.Errorf("%w: body exceeds %d bytes", ErrBodyTooLarge, mbe.Limit)
		}
		return nil, fmt.Errorf("read body: %w", err)
	}
	r.Body = &Body{Reader: bytes.NewReader(body), whole: body, Closer: orig}
	return body, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// Body is what [Verifier.Verify] leaves in r.Body once it has read and checked a
// whole body: a reader over the bytes it hashed. A handler that wants the body whole
// takes it with Unread instead of copying it again (local Persist's click batches
// are megabytes).
type Body struct {
	*bytes.Reader
	whole []byte
	io.Closer
}

// Unread returns the bytes not read yet and consumes them, as reading them would:
// the caller owns them, and the next Read reports io.EOF.
func (b *Body) Unread() []byte {
	rest := b.whole[len(b.whole)-b.Len():]
	b.Reset(nil)
	return rest
}

// checkContentSHA256 compares an X-Amz-Content-Sha256 header, when present,
// with the hash of the body actually received.
func checkContentSHA256(h http.Header, payloadHash string) error {
	values := h.Values(headerContentSHA256)
	switch len(values) {
	case 0:
		return nil
	case 1:
	default:
		return fmt.Errorf("%w: more than one X-Amz-Content-Sha256 header", ErrBodyHashMismatch)
	}
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(values[0])), []byte(payloadHash)) != 1 {
		return fmt.Errorf("%w: X-Amz-Content-Sha256 does not match the body", ErrBodyHashMismatch)
	}
	return nil
}

// checkSignature rebuilds the request from the signed parts only, signs it
// with the SDK signer and compares the signatures.
func (v *Verifier) checkSignature(r *http.Request, auth authorization, payloadHash string, signingTime time.Time) error {
	clone, err := signedOnly(r, auth)
	if err != nil {
		return err
	}
	err = v.signer.SignHTTP(r.Context(), v.awsCreds, clone, payloadHash, v.service, v.region, signingTime,
		func(o *v4.SignerOptions) {
			o.DisableURIPathEscaping = false // execute-api escapes the path again
			o.DisableHeaderHoisting = true
			o.DisableSessionToken = true
			o.LogSigning = false
		})
	if err != nil {
		return fmt.Errorf("recompute signature: %w", err)
	}
	want, err := parseAuthorization(clone.Header.Get(headerAuthorization))
	if err != nil {
		return fmt.Errorf("recompute signature: %w", err)
	}
	if got := auth.signedHeadersString(); want.signedHeadersString() != got {
		return fmt.Errorf("%w: signed headers %s cannot be reproduced (reproduced %s)",
			ErrSignatureMismatch, got, want.signedHeadersString())
	}
	if !hmac.Equal([]byte(want.Signature), []byte(auth.Signature)) {
		return ErrSignatureMismatch
	}
	return nil
}

// signedOnly returns a request with r's method, host, path and query and
// only the headers auth says are signed, ready for the SDK signer.
func signedOnly(r *http.Request, auth authorization) (*http.Request, error) {
	if r.Host == "" {
		return nil, fmt.Errorf("%w: request has no Host", ErrSignatureMismatch)
	}
	clone := &http.Request{
		Method: r.Method,
		URL: &url.URL{
			Path:     r.URL.Path,
			RawPath:  r.URL.RawPath,
			RawQuery: r.URL.RawQuery,
		},
		// No scheme: the signer must not strip a port from Host, which the
		// client signed exactly as it sent it.
		Host:   r.Host,
		Header: make(http.Header, len(auth.SignedHeaders)),
		Body:   http.NoBody,
	}
	for _, name := range auth.SignedHeaders {
		switch name {
		case "host":
			// The signer takes host from clone.Host.
		case "content-length":
			// The signer takes content-length from clone.ContentLength and
			// signs it only when positive.
			if r.ContentLength <= 0 {
				return nil, fmt.Errorf("%w: signed content-length cannot be reproduced", ErrSignatureMismatch)
			}
			clone.ContentLength = r.ContentLength
		default:
			values := r.Header.Values(name)
			if len(values) == 0 {
				return nil, fmt.Errorf("%w: signed header %s is missing", ErrSignatureMismatch, name)
			}
			clone.Header[textproto.CanonicalMIMEHeaderKey(name)] = values
		}
	}
	return clone, nil
}
