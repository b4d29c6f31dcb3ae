package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/linoone/linoone/internal/app/awswire"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// idempotencySecret reads the idempotency secret, when a parameter names one. A
// parameter that still holds Terraform's placeholder is logged and leaves
// idempotent issuance off (503 for Idempotency-Key requests) until secretPoller
// finds the secret put; any other failure stops the start, as the other parameters
// do.
func idempotencySecret(ctx context.Context, api awswire.GetParameterAPI, param string, log *slog.Logger) ([]byte, error) {
	if param == "" {
		log.Warn("issue: no LINOONE_IDEMPOTENCY_SECRET_PARAM: requests with an Idempotency-Key answer 503")
		return nil, nil
	}
	secret, err := awswire.IdempotencySecret(ctx, api, param)
	if errors.Is(err, awswire.ErrSecretUnset) {
		log.Error("issue: the idempotency secret is not set: requests with an Idempotency-Key answer 503", "param", param)
		return nil, nil
	}
	return secret, err
}

// secretPollInterval is how often an instance without an idempotency secret reads
// its parameter again.
var secretPollInterval = defaultSecretPollInterval

const defaultSecretPollInterval = 30 * time.Second

// secretPoller reads the idempotency secret parameter again, at most once every
// interval, while the issuer has no secret. Terraform writes a placeholder and the
// operator puts the secret out of band, after the functions may have started: without
// this, an instance that started before the put would answer Idempotency-Key
// requests 503 for as long as it lives. Once the issuer has the secret it never reads
// the parameter again (rotating a secret that is set takes new instances).
type secretPoller struct {
	api      awswire.GetParameterAPI
	param    string
	issuer   *shorturl.Issuer
	log      *slog.Logger
	interval time.Duration

	mu   sync.Mutex
	next time.Time // when the parameter may be read again
	set  bool
}

// poll reads the parameter if the issuer has no secret and the interval has passed
// since the last read; the handler calls it at the start of each invocation.
func (p *secretPoller) poll(ctx context.Context) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set || time.Now().Before(p.next) {
		return
	}
	p.next = time.Now().Add(p.interval)
	rctx, cancel := context.WithTimeout(ctx, awswire.ParamReadTimeout) // as the deny list's reads
	defer cancel()
	secret, err := awswire.IdempotencySecret(rctx, p.api, p.param)
	if errors.Is(err, awswire.ErrSecretUnset) {
		return // logged at start; the requests say it too (503 idempotency-unavailable)
	}
	if err == nil {
		err = p.issuer.SetIdempotencySecret(secret)
	}
	if err != nil {
		p.log.Error("issue: the idempotency secret parameter could not be read again", "param", p.param, "err", err)
		return
	}
	p.set = true
	p.log.Info("issue: the idempotency secret is set now: requests with an Idempotency-Key are served", "param", p.param)
}

// callerARN is the IAM principal that signed the request, as API Gateway's AWS_IAM
// authorizer reports it in the HTTP API (payload 2.0) request context, with an
// assumed role's session name left out (principal).
func callerARN(r *http.Request) string {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.IAM == nil {
		return ""
	}
	return principal(rc.Authorizer.IAM.UserARN)
}

// principal is the identity an ARN names, for deriving tokens: an assumed role's ARN
// (arn:PARTITION:sts::ACCOUNT:assumed-role/ROLE/SESSION) without its session name,
// every other ARN as it is. The session name is the caller's to choose and most
// callers do not keep it: the AWS SDKs draw one for each process
// (aws-go-sdk-<nanoseconds>), ECS names it after the task and EC2 after the
// instance. With it, a producer's retry from a restarted process would derive
// another token and issue a second short URL.
func principal(arn string) string {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 || f[0] != "arn" || f[2] != "sts" {
		return arn
	}
	rest, ok := strings.CutPrefix(f[5], "assumed-role/")
	if !ok {
		return arn
	}
	role, _, ok := strings.Cut(rest, "/")
	if !ok || role == "" {
		return arn
	}
	return strings.Join(f[:5], ":") + ":assumed-role/" + role
}
