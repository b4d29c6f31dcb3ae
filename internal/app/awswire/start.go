package awswire

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Setup builds a function's handler from its environment (getenv): what each
// function's main hands to Start.
type Setup[E, R any] func(ctx context.Context, getenv func(string) string) (func(context.Context, E) (R, error), error)

// Start is every function's main. A function that cannot start logs why as JSON
// and exits 1, which Lambda reports as an init error; otherwise the Lambda runtime
// takes the handler.
func Start[E, R any](name string, setup Setup[E, R]) {
	h, err := setup(context.Background(), os.Getenv)
	if err != nil {
		slog.New(slog.NewJSONHandler(os.Stdout, nil)).Error(name+": init failed", "err", err)
		os.Exit(1)
	}
	lambda.Start(h)
}

// HTTP answers API Gateway v2 HTTP events with h, as the issue and resolve functions
// do. Each invocation's work ends before its deadline (AnswerBy); before runs first,
// for the refreshes a function makes between invocations (the deny list, the
// idempotency secret); a path API Gateway handed on decoded is escaped again
// (EscapeRawPath); and, since nothing runs after the handler returns, flush emits
// the invocation's metrics last.
func HTTP(name string, h http.Handler, before func(context.Context), flush func(time.Time) error, log *slog.Logger) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(h)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ctx, cancel := AnswerBy(ctx)
		defer cancel()
		before(ctx)
		EscapeRawPath(&ev)
		resp, err := proxy.ProxyWithContext(ctx, ev)
		if ferr := flush(time.Now()); ferr != nil {
			log.Error(name+": emit metrics", "err", ferr)
		}
		return resp, err
	}
}
