package client

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// sentinels are every sentinel a Problem may match.
var sentinels = []error{ErrTargetInvalid, ErrTargetBlocked, ErrNotFound, ErrUnauthorized, ErrThrottled,
	ErrUnavailable, ErrIdempotencyKeyReused, ErrInvalidRequest}

// TestProblemMatchesItsSentinels: every problem type of docs/api.md's table, and
// the answers API Gateway gives in its own JSON, match exactly the sentinels a
// producer would branch on.
func TestProblemMatchesItsSentinels(t *testing.T) {
	typed := func(status int, code string) *Problem {
		return &Problem{Type: problemTypePrefix + code, Status: status}
	}
	for _, tt := range []struct {
		p    *Problem
		want []error
	}{
		{typed(400, "target-url-required"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-too-long"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-characters"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-syntax"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-scheme"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-userinfo"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-host"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-port"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-self"), []error{ErrTargetInvalid}},
		{typed(400, "target-url-reserved"), []error{ErrTargetInvalid}},
		{typed(422, "target-url-blocked"), []error{ErrTargetBlocked}},
		{typed(400, "unknown-field"), []error{ErrInvalidRequest}},
		{typed(400, "invalid-request"), []error{ErrInvalidRequest}},
		{typed(400, "idempotency-key-invalid"), []error{ErrInvalidRequest}},
		{typed(400, "stats-date-malformed"), []error{ErrInvalidRequest}},
		{typed(400, "stats-window-order"), []error{ErrInvalidRequest}},
		{typed(400, "stats-window-too-long"), []error{ErrInvalidRequest}},
		{typed(413, "body-too-large"), []error{ErrInvalidRequest}},
		{typed(415, "unsupported-media-type"), []error{ErrInvalidRequest}},
		{typed(403, "signature-invalid"), []error{ErrUnauthorized}},
		{typed(404, "not-found"), []error{ErrNotFound}},
		{typed(405, "method-not-allowed"), nil},
		{typed(422, "idempotency-key-reused"), []error{ErrIdempotencyKeyReused}},
		{typed(500, "internal-error"), []error{ErrUnavailable}},
		{typed(503, "persist-unavailable"), []error{ErrUnavailable}},
		{typed(503, "token-space-busy"), []error{ErrUnavailable}},
		{typed(503, "idempotency-unavailable"), []error{ErrUnavailable}},
		// API Gateway's own answers, {"message": …}, carry no type.
		{&Problem{Status: 403}, []error{ErrUnauthorized}},
		{&Problem{Status: 401}, []error{ErrUnauthorized}},
		{&Problem{Status: 404}, nil}, // a path no route matches is not an unknown token
		{&Problem{Status: 429}, []error{ErrThrottled}},
		{&Problem{Status: 502}, []error{ErrUnavailable}},
		{&Problem{Status: 504}, []error{ErrUnavailable}},
		// A type that is not Linoone's names no rule of Linoone's.
		{&Problem{Type: "about:blank", Status: 404}, nil},
	} {
		t.Run(fmt.Sprintf("%d %s", tt.p.Status, tt.p.Type), func(t *testing.T) {
			err := fmt.Errorf("POST /shorten: %w", tt.p)
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), slices.Contains(tt.want, s); got != want {
					t.Errorf("errors.Is(%v, %q) = %v, want %v", tt.p, s, got, want)
				}
			}
		})
	}
}

// TestProblemOf reads a problem+json answer, API Gateway's {"message"}, and
// anything else as a status with the body quoted.
func TestProblemOf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   Problem
	}{
		{"problem", 400, `{"type":"urn:linoone:problem:target-url-scheme","title":"Bad Request","status":400,"detail":"use http or https"}`,
			Problem{Type: "urn:linoone:problem:target-url-scheme", Status: 400, Title: "Bad Request", Detail: "use http or https"}},
		{"API Gateway", 403, `{"message":"Forbidden"}`, Problem{Status: 403, Title: "Forbidden", Detail: "Forbidden"}},
		{"text", 502, "upstream died\n", Problem{Status: 502, Title: "Bad Gateway", Detail: `"upstream died\n"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemOf(tt.status, []byte(tt.body)); *got != tt.want {
				t.Errorf("problemOf = %+v, want %+v", *got, tt.want)
			}
		})
	}
}
