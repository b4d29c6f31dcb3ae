package persist

import (
	"errors"
	"fmt"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// ErrRejected reports a request Persist refused or answered outside the contract (a
// 4xx, or a 200 that is not a Gremlin or ingest answer): a bug on our side or a
// Persist that does not speak the contract.
var ErrRejected = errors.New("persist rejected the request")

// ErrInvalidDocument reports a request Persist refused for its content (HTTP 400 or
// 422): sending it again cannot succeed, unlike a refusal for authentication,
// routing or size. It also matches ErrRejected.
var ErrInvalidDocument = errors.New("persist refused the document as invalid")

// Kind says what went wrong with a Persist call.
type Kind uint8

// The kinds of failure, from "try again" to "never again".
const (
	// KindUnavailable: no answer, a 5xx or 429, a timeout: the call may succeed later.
	KindUnavailable Kind = iota
	// KindRejected: a 4xx other than 400/422 (authentication, routing, size).
	KindRejected
	// KindInvalidDocument: a 400 or 422: Persist refused the content.
	KindInvalidDocument
	// KindMalformed: an answer that is not the contract's (undecodable, wrong shape).
	KindMalformed
)

func (k Kind) String() string {
	switch k {
	case KindUnavailable:
		return "unavailable"
	case KindRejected:
		return "rejected"
	case KindInvalidDocument:
		return "invalid document"
	case KindMalformed:
		return "malformed answer"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is every failure of a Persist call: the operation, the HTTP status Persist
// answered (0 when none), what kind of failure it is, and the cause. Whatever the
// kind, the operation did not happen, so every Error matches shorturl.ErrUnavailable;
// it matches ErrRejected for every kind but KindUnavailable, and ErrInvalidDocument
// for KindInvalidDocument.
type Error struct {
	Op     string // "lookup", "clicks", "ingest"
	Status int
	Kind   Kind
	Err    error
}

func (e *Error) Error() string {
	s := "persist " + e.Op + ": " + e.Kind.String()
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinels the Error's kind stands for.
func (e *Error) Is(target error) bool {
	switch target {
	case shorturl.ErrUnavailable:
		return true
	case ErrRejected:
		return e.Kind != KindUnavailable
	case ErrInvalidDocument:
		return e.Kind == KindInvalidDocument
	}
	return false
}

// kindOf classifies an HTTP status other than 200.
func kindOf(status int) Kind {
	switch {
	case status == 400 || status == 422:
		return KindInvalidDocument
	case status >= 400 && status < 500 && status != 429:
		return KindRejected
	}
	return KindUnavailable
}
