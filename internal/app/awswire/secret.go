package awswire

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// ErrSecretUnset reports an idempotency secret parameter that still holds
// Terraform's placeholder (or anything shorter than shorturl.MinIdempotencySecretBytes):
// the operator has not put the secret yet.
var ErrSecretUnset = errors.New("idempotency secret parameter holds no secret yet")

// IdempotencySecret reads the SecureString parameter param, decrypted. The HMAC key
// is the value's bytes without surrounding whitespace. Neither the value nor
// anything derived from it appears in an error.
func IdempotencySecret(ctx context.Context, api GetParameterAPI, param string) ([]byte, error) {
	out, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(param), WithDecryption: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("ssm parameter %s: %w", param, err)
	}
	if out.Parameter == nil {
		return nil, fmt.Errorf("ssm parameter %s: %w", param, ErrSecretUnset)
	}
	v := strings.TrimSpace(aws.ToString(out.Parameter.Value))
	if len(v) < shorturl.MinIdempotencySecretBytes {
		return nil, fmt.Errorf("ssm parameter %s: %w (want at least %d bytes)", param, ErrSecretUnset, shorturl.MinIdempotencySecretBytes)
	}
	return []byte(v), nil
}
