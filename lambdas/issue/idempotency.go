package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/linoone/linoone/internal/awswire"
)

// idempotencySecret reads the idempotency secret, when a parameter names one. A
// parameter that still holds Terraform's placeholder is logged and leaves
// idempotent issuance off (503 for Idempotency-Key requests); any other failure
// stops the start, as the other parameters do.
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
