package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/linoone/linoone/internal/foundation/yield"
)

// SignRequest signs req in place with the SDK's v4 signer, as if at now.
//
// It makes body the request body (setting Body, GetBody and ContentLength, so
// what is sent is what was signed), sets X-Amz-Content-Sha256 to the body's
// SHA-256 and sets X-Amz-Date and Authorization. Every header already on req
// except User-Agent, Expect, Transfer-Encoding and X-Amzn-Trace-Id is signed,
// so set headers before signing and do not change them after.
func SignRequest(ctx context.Context, req *http.Request, body []byte, creds Credentials, region, service string, now time.Time) error {
	if err := signRequest(ctx, v4.NewSigner(), req, body, creds, region, service, now); err != nil {
		return fmt.Errorf("sign request: %w", err)
	}
	return nil
}

func signRequest(ctx context.Context, signer *v4.Signer, req *http.Request, body []byte, creds Credentials, region, service string, now time.Time) error {
	if req == nil || req.URL == nil {
		return errors.New("request or its URL is nil")
	}
	awsCreds, err := creds.retrieve(ctx)
	if err != nil {
		return err
	}
	return signWith(ctx, signer, req, body, awsCreds, region, service, now)
}

// signWith signs req (not nil, with a URL) as SignRequest says, with creds as the
// SDK holds them (a session token included).
func signWith(ctx context.Context, signer *v4.Signer, req *http.Request, body []byte, creds aws.Credentials, region, service string, now time.Time) error {
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	setBody(req, body)
	payloadHash := hashBody(body)
	req.Header.Set(headerContentSHA256, payloadHash)
	req.Header.Del(headerAuthorization)
	return signer.SignHTTP(ctx, creds, req, payloadHash, service, region, now)
}

// retrieve is c as SDK credentials, once c is valid.
func (c Credentials) retrieve(context.Context) (aws.Credentials, error) {
	if err := c.validate(); err != nil {
		return aws.Credentials{}, fmt.Errorf("credentials: %w", err)
	}
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Source: "linoone"}, nil
}

func setBody(req *http.Request, body []byte) {
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

// hashBody is the hex SHA-256 of a body. A click batch is megabytes, which take
// milliseconds to hash: it yields every yield.Interval, for the redirects that share
// the process.
func hashBody(body []byte) string {
	const chunk = 64 << 10
	var pace yield.Point
	h := sha256.New()
	for len(body) > 0 {
		pace.Maybe()
		n := min(len(body), chunk)
		h.Write(body[:n])
		body = body[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Transport returns a RoundTripper that signs every request with c for region
// and service before handing it to base (http.DefaultTransport when nil). It
// reads the whole request body to hash it and leaves the caller's request
// unmodified, so it fits http.Client{Transport: …} and a generated client's
// WithHTTPClient option.
func (c Credentials) Transport(base http.RoundTripper, region, service string) http.RoundTripper {
	return newTransport(base, c.retrieve, region, service)
}

// ProviderTransport is Transport for credentials the SDK provides, such as the
// default chain's: they are often temporary (SSO, an assumed role), and their
// session token is signed with them, which a static Credentials pair has no room
// for.
func ProviderTransport(base http.RoundTripper, p aws.CredentialsProvider, region, service string) http.RoundTripper {
	return newTransport(base, func(ctx context.Context) (aws.Credentials, error) {
		c, err := p.Retrieve(ctx)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("credentials: %w", err)
		}
		return c, nil
	}, region, service)
}

func newTransport(base http.RoundTripper, retrieve func(context.Context) (aws.Credentials, error), region, service string) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, retrieve: retrieve, region: region, service: service, signer: v4.NewSigner(), now: time.Now}
}

var _ http.RoundTripper = (*transport)(nil)

type transport struct {
	base     http.RoundTripper
	retrieve func(context.Context) (aws.Credentials, error)
	region   string
	service  string
	signer   *v4.Signer
	now      func() time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		closeErr := req.Body.Close()
		if err = errors.Join(err, closeErr); err != nil {
			return nil, fmt.Errorf("sigv4 transport: read request body: %w", err)
		}
		body = b
	}
	signed := req.Clone(req.Context())
	creds, err := t.retrieve(req.Context())
	if err == nil {
		err = signWith(req.Context(), t.signer, signed, body, creds, t.region, t.service, t.now())
	}
	if err != nil {
		return nil, fmt.Errorf("sigv4 transport: sign request: %w", err)
	}
	return t.base.RoundTrip(signed)
}
