package localpersist

import (
	"errors"
	"io"
	"net/http"
	"strconv"
)

// Authenticator verifies a request's signature before it reaches a Persist route;
// *sigv4.Verifier is one (service execute-api, as the real Persist behind API
// Gateway's AWS_IAM authorizer). Verify may read the body, but must leave r.Body
// readable again, and must accept bodies up to the store's MaxBodyBytes. Its error
// may say which check failed; it must never contain a secret or a signature.
type Authenticator interface {
	Verify(r *http.Request) error
}

// ReadBody is an r.Body that an Authenticator has read whole, as *sigv4.Body is:
// the routes take its bytes with Unread instead of copying them again. Unread returns
// the bytes not read yet, which the caller then owns, and consumes them.
type ReadBody interface {
	io.Reader
	Unread() []byte
}

// rejectedMessage is the whole body detail of a 403: like API Gateway, it does not
// say which check failed.
const rejectedMessage = "request refused: it is unsigned or its SigV4 signature does not verify"

// authenticate lets through only requests that a verifies; GET /healthz, the
// liveness probe, needs no signature. A nil a lets everything through.
func (s *Store) authenticate(a Authenticator, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > s.maxBody {
			writeJSONError(w, http.StatusRequestEntityTooLarge, "request body exceeds "+strconv.FormatInt(s.maxBody, 10)+" bytes")
			return
		}
		body := &watchedBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.maxBody)}
		r.Body = body
		if err := a.Verify(r); err != nil {
			if body.tooLarge {
				writeJSONError(w, http.StatusRequestEntityTooLarge, "request body exceeds "+strconv.FormatInt(s.maxBody, 10)+" bytes")
				return
			}
			// The reason names the failed check, never the secret, the signature
			// or the Authorization header; anyone can send unsigned requests as fast
			// as they like, so few lines a second.
			if ok, leftOut := s.refusals.Take(); ok {
				s.log.WarnContext(r.Context(), "local persist request refused: signature",
					"method", r.Method, "path", r.URL.Path, "remote_addr", r.RemoteAddr, "reason", err.Error(),
					"refusals_left_out_before", leftOut)
			}
			writeJSONError(w, http.StatusForbidden, rejectedMessage)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// watchedBody remembers whether a read went past the http.MaxBytesReader limit.
type watchedBody struct {
	io.ReadCloser
	tooLarge bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.tooLarge = true
	}
	return n, err
}
