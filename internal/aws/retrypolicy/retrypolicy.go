// Package retrypolicy holds the SDK retry policy of calls made inside a visitor's
// request (the Resolve function's PutEvents and its click DLQ send): at most one
// retry, soon, of a transient failure (a 5xx, a reset connection), and never a retry
// of throttling. A throttled bus or queue is one that more calls make worse, and
// every retry would spend the redirect's time budget (issue 48): the fact goes to the
// next place in line instead (the DLQ, then the log).
package retrypolicy

import (
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// InRequestMaxAttempts is the attempts an in-request call makes at most.
const InRequestMaxAttempts = 2

// InRequestMaxBackoff bounds the wait before the retry: a few milliseconds, not the
// standard retryer's up to 20 s, which no redirect can afford.
const InRequestMaxBackoff = 20 * time.Millisecond

// InRequest is the retryer of an in-request call. The caller's context still bounds
// every attempt and the wait between them.
func InRequest() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = InRequestMaxAttempts
		o.MaxBackoff = InRequestMaxBackoff
		o.BaseDelay = 5 * time.Millisecond
		o.Retryables = append([]retry.IsErrorRetryable{NoThrottleRetry{}}, o.Retryables...)
	})
}

// NoThrottleRetry refuses to retry a throttling error: an error code the SDK counts
// as throttling (ThrottlingException, TooManyRequestsException, …) or an HTTP 429.
// It answers unknown for anything else, leaving it to the standard checks.
type NoThrottleRetry struct{}

// IsErrorRetryable implements retry.IsErrorRetryable.
func (NoThrottleRetry) IsErrorRetryable(err error) aws.Ternary {
	if IsThrottle(err) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
}

// IsThrottle reports whether err is a throttling answer.
func IsThrottle(err error) bool {
	if (retry.ThrottleErrorCode{Codes: retry.DefaultThrottleErrorCodes}).IsErrorThrottle(err) == aws.TrueTernary {
		return true
	}
	var st interface{ HTTPStatusCode() int }
	return errors.As(err, &st) && st.HTTPStatusCode() == http.StatusTooManyRequests
}
