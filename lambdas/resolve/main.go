// Command resolve is the Resolve Lambda: the public resolver (GET /{token},
// GET /healthz). Each redirect publishes a GraphFactProduced fact to the shared bus
// inside the invocation; a failed publish goes to the click DLQ.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/events"

	"github.com/linoone/linoone/internal/app/awswire"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/resolverstack"
	"github.com/linoone/linoone/internal/aws/clickdlq"
	"github.com/linoone/linoone/internal/aws/eventbridge"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/shorturl"
)

func main() { awswire.Start("resolve", setup) }

// setup reads the configuration and wires the resolver, the bus and the click DLQ
// into a Lambda handler.
func setup(ctx context.Context, getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	cfg, err := config.LoadResolveFunction(getenv)
	if err != nil {
		return nil, fmt.Errorf("bad configuration: %w", err)
	}
	awsCfg, log, err := awswire.Load(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	lat, err := awswire.PersistLatency(cfg.MetricsNamespace, cfg.Environment)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	pc, err := awswire.Persist(cfg.Persist, cfg.Region, awsCfg, lat)
	if err != nil {
		return nil, fmt.Errorf("persist client: %w", err)
	}
	pub, err := eventbridge.New(eventbridge.NewRequestClient(awsCfg, ""), cfg.EventBus)
	if err != nil {
		return nil, fmt.Errorf("event bus: %w", err)
	}
	dlq, err := clickdlq.New(clickdlq.NewRequestClient(awsCfg, ""), cfg.ClickDLQURL)
	if err != nil {
		return nil, fmt.Errorf("click dlq: %w", err)
	}
	// No click buffer (ClickBufferBytes 0): nothing runs after the handler returns
	// and a frozen or reaped environment would take buffered facts with it, so a
	// fact that neither EventBridge nor SQS takes is logged whole at once.
	counters := &shorturl.ScreenCounters{}
	// The deny list is read in the background (awswire.DenyList): a redirect never
	// waits on SSM, and a first read that fails serves, counted in DenyListMissing.
	deny, refresh := awswire.DenyList(ctx, awswire.RefreshClient(awsCfg), cfg.DenyListParam, cfg.DenyListRefresh, log, counters)
	rs, err := resolverstack.New(resolverstack.Deps{Store: pc, Publisher: pub, DeadLetters: dlq, CacheSize: cfg.CacheSize,
		PublishTimeout: cfg.PublishTimeout, DLQTimeout: cfg.DLQTimeout, Logger: log, MetricsOut: os.Stdout, Namespace: cfg.MetricsNamespace, Environment: cfg.Environment,
		Screening: shorturl.Screening{Screen: deny, Counters: counters, Logger: log}})
	if err != nil {
		return nil, err
	}
	// refresh starts a read of the deny list parameter when one is due, never waiting.
	// A hit writes no latency line; a miss adds one beside the click-fact line.
	h := awswire.HTTP("resolve", rs.Handler, refresh, metrics.Group{rs.Metrics, lat}.Flush, log)
	if cfg.VisitorIPFromCloudFront { // Terraform's cdn option: the visitor is CloudFront's viewer
		h = awswire.VisitorFromCloudFront(cfg.OriginVerifySecret, h)
	}
	return h, nil
}
