package httpapi

import (
	"strings"
)

// Problem codes of idempotent and batch issuance (issue 10).
const (
	CodeIdempotencyKeyInvalid  = "idempotency-key-invalid"
	CodeIdempotencyKeyReused   = "idempotency-key-reused"
	CodeIdempotencyUnavailable = "idempotency-unavailable"
)

// UnknownFieldError is a JSON object with members the API does not accept: a
// batch item other than exactly {"target_url": "…"}, which fails alone.
type UnknownFieldError struct {
	Names []string // the members besides target_url
}

func (e *UnknownFieldError) Error() string {
	return "unknown member(s) " + strings.Join(e.Names, ", ") + `; an item is exactly {"target_url": "…"}`
}

// ItemError is a batch item that is an object but not one the API reads: a member
// of the wrong type or one given twice (400 invalid-request, that item only).
type ItemError struct {
	Detail string
}

func (e *ItemError) Error() string { return e.Detail }

// ProblemOf is problemFor for errors that are not the response of an operation:
// the per-item problems of a batch, answered through the same table.
func ProblemOf(err error) Problem { return problemFor(err) }
