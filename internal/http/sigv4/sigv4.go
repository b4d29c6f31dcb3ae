// Package sigv4 verifies and produces AWS Signature Version 4 (SigV4) signed
// HTTP requests for Linoone's management API and for local Persist.
//
// In AWS, API Gateway's AWS_IAM authorizer checks the signature before a
// request reaches us. In local mode our own server must do the same: a
// [Verifier] checks the Authorization header of each request against one
// configured pair of [Credentials] and [Verifier.Middleware] rejects anything
// that does not verify. The expected signature is recomputed with the AWS
// SDK's v4 signer rather than a hand-written key chain, so requests signed by
// the SDK (see [SignRequest] and [Credentials.Transport]) and by
// `curl --aws-sigv4` verify alike.
//
// Canonicalisation is the SDK's, which is what API Gateway expects for
// execute-api: the path is escaped once more and the query is decoded,
// re-encoded and sorted. curl 7.88 signs path and query as written, so a
// curl-signed request verifies when its path needs no escaping and its query
// is already canonical (sorted, "%20" not "+", "k=" not "k") — true of every
// management route. Only header signatures are accepted; presigned
// (query-string) requests fail with [ErrPresignUnsupported].
//
// [Pair.LoadOrCreate] bootstraps a local credential pair — the management API's
// ([ManagementPair]) or local Persist's ([PersistPair]) — from the one given in the
// environment (read by the config package) or from a 0600 file it creates on first
// start.
//
// Error messages produced here never contain the secret access key, a
// signature or the Authorization header.
package sigv4

import (
	"errors"
	"fmt"
	"log/slog"
)

// Sentinel errors returned (wrapped with context) by [Verifier.Verify].
// Every one of them means "do not serve this request": the caller maps
// [ErrBodyTooLarge] to 413 and all others to 403.
var (
	// ErrMissingSignature: the request carries no Authorization header.
	ErrMissingSignature = errors.New("request is not signed")
	// ErrPresignUnsupported: the request is signed in the query string
	// (X-Amz-Signature, X-Amz-Credential or X-Amz-Algorithm parameters).
	ErrPresignUnsupported = errors.New("query-string (presigned) sigv4 requests are not supported")
	// ErrMalformedAuthorization: the Authorization header, X-Amz-Date or the
	// signed-header list cannot be parsed or misses a required part.
	ErrMalformedAuthorization = errors.New("malformed sigv4 authorization")
	// ErrUnknownAccessKey: the access key id is not the configured one.
	ErrUnknownAccessKey = errors.New("unknown access key id")
	// ErrScope: the credential scope's date, region or service is wrong.
	ErrScope = errors.New("credential scope mismatch")
	// ErrClockSkew: X-Amz-Date is outside the allowed window around now
	// (an expired or a not-yet-valid request).
	ErrClockSkew = errors.New("request time outside allowed clock skew")
	// ErrBodyHashMismatch: X-Amz-Content-Sha256 does not match the body.
	ErrBodyHashMismatch = errors.New("body hash mismatch")
	// ErrSignatureMismatch: the recomputed signature differs from the
	// presented one, or the request lacks a header it claims to sign.
	ErrSignatureMismatch = errors.New("signature mismatch")
	// ErrBodyTooLarge: the body exceeds the verifier's limit.
	ErrBodyTooLarge = errors.New("request body too large")
)

// Credentials is one static SigV4 key pair.
//
// Its String, GoString and LogValue methods mask the secret, so printing or
// logging a Credentials value never reveals it.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

const redacted = "REDACTED"

// String returns the access key id with the secret masked.
func (c Credentials) String() string {
	return fmt.Sprintf("{AccessKeyID:%s SecretAccessKey:%s}", c.AccessKeyID, mask(c.SecretAccessKey))
}

// GoString masks the secret for the %#v verb.
func (c Credentials) GoString() string {
	return fmt.Sprintf("sigv4.Credentials{AccessKeyID:%q, SecretAccessKey:%q}", c.AccessKeyID, mask(c.SecretAccessKey))
}

// LogValue masks the secret in slog output.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("access_key_id", c.AccessKeyID),
		slog.String("secret_access_key", mask(c.SecretAccessKey)),
	)
}

func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return redacted
}

// validate reports whether the pair can be used to sign or verify.
func (c Credentials) validate() error {
	var errs []error
	if c.AccessKeyID == "" {
		errs = append(errs, errors.New("access key id is empty"))
	} else if !isAccessKeyID(c.AccessKeyID) {
		errs = append(errs, errors.New("access key id must be 1-128 characters of A-Z, a-z, 0-9"))
	}
	if c.SecretAccessKey == "" {
		errs = append(errs, errors.New("secret access key is empty"))
	}
	return errors.Join(errs...)
}

// isAccessKeyID accepts the alphabet AWS uses for access key ids (upper-case
// letters and digits) plus lower case, so the id can sit in a credential
// scope and after `curl --user` without escaping.
func isAccessKeyID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
