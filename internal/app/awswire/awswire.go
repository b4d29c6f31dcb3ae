// Package awswire holds the wiring the three Lambda functions share: the AWS
// configuration, the deny list and the idempotency secret kept in SSM parameters,
// and the Persist client signed with the function's role.
package awswire

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/persist"
)

// Function is a function's typed configuration (*config.IssueFunction, …): the part
// every function reads.
type Function interface {
	Shared() config.Function
}

var (
	_ Function = (*config.IssueFunction)(nil)
	_ Function = (*config.ResolveFunction)(nil)
	_ Function = (*config.ReplayFunction)(nil)
)

// Load is the start of every function, after its configuration is read: the AWS
// configuration (LambdaAWS) and the logger LINOONE_LOG_LEVEL asks for. It calls no
// AWS service: what a function must know to start comes in its environment (issue 48).
func Load(ctx context.Context, fn Function) (aws.Config, *slog.Logger, error) {
	shared := fn.Shared()
	awsCfg, err := LambdaAWS(os.Getenv, shared.Region)
	if err != nil {
		return aws.Config{}, nil, fmt.Errorf("configuration: %w", err)
	}
	return awsCfg, shared.Logger(os.Stdout), nil
}

// AnswerMargin is what a function keeps of its invocation's time to answer once the
// work AnswerBy bounds has ended: the response's conversion, the metrics line and
// the call to the runtime API.
const AnswerMargin = 250 * time.Millisecond

// AnswerBy bounds an invocation's work so that the function answers before Lambda
// stops it: ctx's deadline (the invocation's end) less AnswerMargin. A Persist call
// that would run past it fails in time (503 problem+json), and a click's publish and
// dead letter share what is left (shorturl.Recorder), instead of the function being
// stopped with nothing answered and nothing logged. Without a deadline, ctx is
// returned as it is.
func AnswerBy(ctx context.Context) (context.Context, context.CancelFunc) {
	end, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, end.Add(-AnswerMargin))
}

// EscapeRawPath makes ev's rawPath one a URL parser takes, as the path it names,
// and its rawQueryString one too. API Gateway's HTTP API hands some paths on decoded
// (a visitor's "/%25" arrives as "/%", "/%0A" as a newline, "/%23" as "#"): the
// Lambda adapter cannot make a request of some of them and fails the invocation,
// which API Gateway answers 500 and the functions' error alarm counts, and it reads a
// decoded '#' or '?' as the end of the path ("/7BTadEDkJ8#x" resolved 7BTadEDkJ8,
// where serve answers 404). Escaped, such a path gets the handler's own answer (404:
// no token, no route). Any other path is left as it is: no encoded path holds '#' or
// '?'. A query holding a control character or a '#' (none that a URL's query holds
// raw) has those bytes escaped, so that it fails no invocation either.
func EscapeRawPath(ev *events.APIGatewayV2HTTPRequest) {
	if ev.RawPath != "" {
		if _, err := url.ParseRequestURI(ev.RawPath); err != nil || strings.ContainsAny(ev.RawPath, "#?") {
			ev.RawPath = (&url.URL{Path: ev.RawPath}).EscapedPath()
		}
	}
	if strings.IndexFunc(ev.RawQueryString, notInQuery) >= 0 {
		var b strings.Builder
		for _, c := range []byte(ev.RawQueryString) {
			if notInQuery(rune(c)) {
				fmt.Fprintf(&b, "%%%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
		ev.RawQueryString = b.String()
	}
}

// notInQuery reports a byte that url.Parse refuses in a query, or reads as its end.
func notInQuery(c rune) bool { return c < 0x20 || c == 0x7f || c == '#' }

// GetParameterAPI is the SSM call the deny list and the idempotency secret need.
type GetParameterAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

var _ GetParameterAPI = (*ssm.Client)(nil)

// Persist builds the Persist client; with LINOONE_PERSIST_SIGV4 it signs every call
// with the function role's credentials (service execute-api) for region. Each call's
// duration goes to lat (PersistLatency) unless it is nil.
func Persist(p config.Persist, region string, awsCfg aws.Config, lat *metrics.Latency) (*persist.Client, error) {
	pc := persist.Config{BaseURL: p.URL, Timeout: p.Timeout, InlineLiterals: p.InlineLiterals}
	if lat != nil {
		pc.Observe = lat.Observe
	}
	if p.SigV4 {
		pc.SigV4 = &persist.SigV4{Credentials: awsCfg.Credentials, Region: region}
	}
	return persist.New(pc)
}

// PersistLatency is the EMF writer of the Persist client's call durations on stdout:
// metrics.PersistLatency by Operation, one of persist.Calls. Flush it with the
// function's other metrics at the end of each invocation.
func PersistLatency(namespace, environment string) (*metrics.Latency, error) {
	return metrics.NewLatency(os.Stdout, namespace, environment, metrics.PersistLatency, metrics.DimensionOperation, persist.Calls...)
}
