package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

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
// authorizer reports it in the HTTP API (payload 2.0) request context.
func callerARN(r *http.Request) string {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.IAM == nil {
		return ""
	}
	return rc.Authorizer.IAM.UserARN
}
