// Command issue is the Issue Lambda: the management API (POST /shorten,
// POST /shorten/batch, GET /links/{token}, GET /links/{token}/stats) behind API
// Gateway's AWS_IAM authorizer, and its public routes (GET /healthz,
// GET /openapi.yaml, GET /docs).
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/linoone/linoone/internal/app/awswire"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

func main() { awswire.Start("issue", setup) }

// setup reads the configuration and wires the management API into a Lambda handler.
func setup(ctx context.Context, getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	cfg, err := config.LoadIssueFunction(getenv)
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
	store, err := awswire.Persist(cfg.Persist, cfg.Region, awsCfg, lat)
	if err != nil {
		return nil, fmt.Errorf("persist client: %w", err)
	}
	counters := &shorturl.ScreenCounters{}
	ssmc := ssm.NewFromConfig(awsCfg)
	deny, refresh := awswire.DenyList(ctx, awswire.RefreshClient(awsCfg), cfg.DenyListParam, cfg.DenyListRefresh, log, counters)
	secret, err := idempotencySecret(ctx, ssmc, cfg.IdempotencySecretParam, log)
	if err != nil {
		return nil, fmt.Errorf("idempotency secret: %w", err)
	}
	issuer, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: store, Batch: store, ResolverBaseURL: cfg.ResolverBaseURL, Rand: rand.Reader,
		ReservedHosts: cfg.ReservedHosts, Screening: shorturl.Screening{Screen: deny, Counters: counters, Logger: log}, IdempotencySecret: secret})
	if err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	var poller *secretPoller
	if secret == nil && cfg.IdempotencySecretParam != "" {
		poller = &secretPoller{api: ssmc, param: cfg.IdempotencySecretParam, issuer: issuer, log: log,
			interval: secretPollInterval, next: time.Now().Add(secretPollInterval)}
	}
	emf, err := metrics.New(os.Stdout, cfg.MetricsNamespace, cfg.Environment, metrics.Screening(counters)...)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	// API Gateway verified the SigV4 signature (AWS_IAM) before invoking us.
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: issuer, Clicker: store, Lister: store, DenyList: deny, Logger: log, Caller: callerARN})
	if err != nil {
		return nil, fmt.Errorf("management api: %w", err)
	}
	before := func(ctx context.Context) {
		refresh(ctx)     // starts a read of the deny list parameter when one is due
		poller.poll(ctx) // the idempotency secret, while it is not set
	}
	// The screening line is written only when something was blocked or the list was
	// unreadable; a latency line per kind of Persist call the invocation made.
	return awswire.HTTP("issue", h, before, metrics.Group{emf, lat}.Flush, log), nil
}
