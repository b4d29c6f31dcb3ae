package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/linoone/linoone/api/management"
)

// The sentinels a [*Problem] matches with errors.Is, for the refusals a producer
// handles. The problem types behind each are in openapi.yaml and docs/api.md's
// table of problem types.
var (
	// ErrTargetInvalid: the target URL breaks one of the issuance rules (the
	// target-url-* problem types of status 400: scheme, host, length, …). Sending it
	// again fails the same way.
	ErrTargetInvalid = errors.New("target URL breaks an issuance rule")
	// ErrTargetBlocked: the target URL matches a rule of the operator's deny list
	// (target-url-blocked, 422). Nothing was written.
	ErrTargetBlocked = errors.New("target URL is blocked by the deny list")
	// ErrNotFound: no short URL has this token (not-found, 404).
	ErrNotFound = errors.New("no short URL has this token")
	// ErrUnauthorized: the signature was refused (signature-invalid, or a 401 or
	// 403 that API Gateway answered): wrong credentials, region or endpoint.
	ErrUnauthorized = errors.New("credentials refused")
	// ErrThrottled: 429, after the retries.
	ErrThrottled = errors.New("throttled")
	// ErrUnavailable: any 5xx (persist-unavailable, token-space-busy, a Lambda
	// that failed or timed out at API Gateway), after the retries. A later call may
	// succeed; with the same Idempotency-Key it returns what a lost answer held.
	ErrUnavailable = errors.New("service unavailable")
	// ErrIdempotencyKeyReused: the Idempotency-Key already names a short URL with
	// another target (idempotency-key-reused, 422).
	ErrIdempotencyKeyReused = errors.New("idempotency key names another target")
	// ErrInvalidRequest: a request the API refuses whatever its target, for
	// instance an invalid Idempotency-Key or stats window, or a body a proxy changed
	// (invalid-request, unknown-field, idempotency-key-invalid, stats-*,
	// body-too-large, unsupported-media-type).
	ErrInvalidRequest = errors.New("request refused")
)

// problemTypePrefix starts every problem type URN Linoone sends.
const problemTypePrefix = "urn:linoone:problem:"

// invalidRequestCodes are the problem types of ErrInvalidRequest, less the
// stats-* family.
var invalidRequestCodes = []string{"invalid-request", "unknown-field", "idempotency-key-invalid", "body-too-large", "unsupported-media-type"}

// Problem is a refusal of the API: the RFC 9457 problem of its
// application/problem+json answer, or, where something in front of Linoone
// answered (API Gateway's own {"message": …}), the status with that message as
// Detail and no Type.
type Problem struct {
	// Type is the URN naming the rule, such as
	// "urn:linoone:problem:target-url-scheme"; empty when Linoone did not answer.
	Type   string
	Status int
	Title  string
	Detail string
}

// Error is the problem on one line.
func (p *Problem) Error() string {
	if p.Type == "" {
		return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail)
	}
	return fmt.Sprintf("%d %s: %s (%s)", p.Status, p.Title, p.Detail, p.Type)
}

// Code is Type without its "urn:linoone:problem:" prefix ("target-url-scheme"),
// or "" when the answer was not Linoone's.
func (p *Problem) Code() string {
	code, ok := strings.CutPrefix(p.Type, problemTypePrefix)
	if !ok {
		return ""
	}
	return code
}

// Is reports whether the problem is one the sentinel target stands for.
func (p *Problem) Is(target error) bool {
	code := p.Code()
	switch target {
	case ErrTargetInvalid:
		return strings.HasPrefix(code, "target-url-") && code != "target-url-blocked"
	case ErrTargetBlocked:
		return code == "target-url-blocked"
	case ErrNotFound:
		return code == "not-found"
	case ErrUnauthorized:
		return code == "signature-invalid" || p.Type == "" && (p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden)
	case ErrThrottled:
		return p.Status == http.StatusTooManyRequests
	case ErrUnavailable:
		return p.Status >= 500
	case ErrIdempotencyKeyReused:
		return code == "idempotency-key-reused"
	case ErrInvalidRequest:
		return slices.Contains(invalidRequestCodes, code) || strings.HasPrefix(code, "stats-")
	}
	return false
}

// fromAPI is a problem as the generated types hold it (a batch item's).
func fromAPI(p management.Problem) *Problem {
	return &Problem{Type: p.Type, Status: p.Status, Title: p.Title, Detail: p.Detail}
}

// problemOf reads the problem of an answer that is not a success: its
// problem+json body, or else the status and what the body says.
func problemOf(status int, body []byte) *Problem {
	var p management.Problem
	if err := json.Unmarshal(body, &p); err == nil && p.Type != "" {
		if p.Status == 0 {
			p.Status = status
		}
		return fromAPI(p)
	}
	var gateway struct {
		Message string `json:"message"`
	}
	detail := fmt.Sprintf("%.200q", body)
	if err := json.Unmarshal(body, &gateway); err == nil && gateway.Message != "" {
		detail = gateway.Message
	}
	return &Problem{Status: status, Title: http.StatusText(status), Detail: detail}
}
