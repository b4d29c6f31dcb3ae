package awsfacts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Error kinds, matched with errors.Is.
var (
	// ErrAccessDenied: AWS refused the call or the credentials.
	ErrAccessDenied = errors.New("access denied")
	// ErrUnreachable: the endpoint could not be reached.
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrTimeout: no answer in time.
	ErrTimeout = errors.New("timed out")
	// ErrAPINotFound: the resolver API id does not exist in the region.
	ErrAPINotFound = errors.New("resolver api not found")
	// ErrConfig: the AWS configuration could not be loaded.
	ErrConfig = errors.New("aws configuration")
)

// Error is a failed AWS call: which service and operation, what kind of
// failure, and a one-line detail.
type Error struct {
	Service   string
	Operation string
	// Kind is one of the Err* values, or nil for other API errors.
	Kind   error
	Detail string
	cause  error
}

func (e *Error) Error() string {
	if e.Kind != nil {
		return fmt.Sprintf("%s %s: %s: %s", e.Service, e.Operation, e.Kind, e.Detail)
	}
	return fmt.Sprintf("%s %s: %s", e.Service, e.Operation, e.Detail)
}

// Unwrap exposes the kind and the SDK error.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// wrap classifies an SDK error.
func wrap(service, operation string, err error) error {
	e := &Error{Service: service, Operation: operation, cause: err}
	var apiErr smithy.APIError
	var sendErr *smithyhttp.RequestSendError
	var opErr *net.OpError
	switch {
	case errors.As(err, &apiErr):
		e.Detail = apiErr.ErrorCode()
		if msg := apiErr.ErrorMessage(); msg != "" && msg != apiErr.ErrorCode() {
			e.Detail += ": " + msg
		}
		if accessDenied(apiErr.ErrorCode()) {
			e.Kind = ErrAccessDenied
		}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		e.Kind = ErrTimeout
		e.Detail = "no answer before the deadline"
	case errors.As(err, &opErr):
		e.Kind = ErrUnreachable
		e.Detail = opErr.Error()
	case errors.As(err, &sendErr):
		e.Kind = ErrUnreachable
		e.Detail = sendErr.Err.Error()
	default:
		e.Detail = err.Error()
	}
	e.Detail = oneLine(e.Detail)
	return e
}

func wrapConfig(err error) error {
	return &Error{Service: "aws", Operation: "LoadConfig", Kind: ErrConfig, Detail: oneLine(err.Error()), cause: err}
}

func accessDenied(code string) bool {
	switch code {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
		"UnrecognizedClientException", "InvalidClientTokenId", "InvalidSignatureException",
		"SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException",
		"MissingAuthenticationToken", "MissingAuthenticationTokenException":
		return true
	}
	return false
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
