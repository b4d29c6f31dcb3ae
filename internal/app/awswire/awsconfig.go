package awswire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"
)

// LambdaAWS is a function's AWS configuration, built from what Lambda puts in its
// environment (getenv): the execution role's credentials (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and region, with the SDK's own defaults
// for the rest (standard retries, its HTTP client, legacy defaults mode). It also
// reads the variables that config.LoadDefaultConfig reads there and a function's
// test or operator may set: AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> (the
// emulator tests reach local servers through them), AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE and AWS_ACCOUNT_ID. TestLambdaAWSIsTheDefaultConfig holds it equal
// to LoadDefaultConfig's in that environment.
//
// It does not link the SDK's config module: that module's credential chain (shared
// files, SSO, web identity, credential processes, IMDS) links the sso, ssooidc,
// sts and signin clients, whose package init every function paid at each cold start
// and whose code was in every zip, for sources a Lambda function never uses (see
// docs/aws.md). Without the role's keys in the environment it fails, naming them,
// where LoadDefaultConfig would have gone looking for credentials elsewhere.
func LambdaAWS(getenv func(string) string, region string) (aws.Config, error) {
	creds := aws.Credentials{
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
		AccountID:       getenv("AWS_ACCOUNT_ID"),
		Source:          "EnvConfigCredentials", // config.CredentialsSourceName
	}
	var errs []error
	if !creds.HasKeys() {
		errs = append(errs, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: required (the execution role's credentials)"))
	}
	cfg := aws.Config{
		Region: region,
		Credentials: aws.NewCredentialsCache(credentials.StaticCredentialsProvider{
			Value: creds, Source: []aws.CredentialSource{aws.CredentialSourceEnvVars}}),
		Logger:                      logging.NewStandardLogger(os.Stderr),
		ConfigSources:               []any{envEndpoints(getenv)},
		DefaultsMode:                aws.DefaultsModeLegacy,
		RequestMinCompressSizeBytes: 10240,
		AccountIDEndpointMode:       aws.AccountIDEndpointModePreferred,
		RequestChecksumCalculation:  aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation:  aws.ResponseChecksumValidationWhenSupported,
		RestrictFilePermissions:     aws.RestrictFilePermissionsUserReadWrite,
	}
	if v := getenv("AWS_ENDPOINT_URL"); v != "" {
		cfg.BaseEndpoint = aws.String(v)
	}
	if v := getenv("AWS_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("AWS_MAX_ATTEMPTS %q: want a whole number", v))
		}
		cfg.RetryMaxAttempts = n
	}
	if v := getenv("AWS_RETRY_MODE"); v != "" {
		m, err := aws.ParseRetryMode(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("AWS_RETRY_MODE: %w", err))
		}
		cfg.RetryMode = m
	}
	if err := errors.Join(errs...); err != nil {
		return aws.Config{}, fmt.Errorf("aws config: %w", err)
	}
	return cfg, nil
}

// envEndpoints is the configuration source each service client asks for its
// endpoint override (the SDK's ServiceBaseEndpointProvider): AWS_ENDPOINT_URL_ and
// the client's SDK ID in capitals, spaces as underscores (AWS_ENDPOINT_URL_SSM), as
// config.EnvConfig answers it.
type envEndpoints func(string) string

// GetServiceBaseEndpoint returns the override of the service sdkID, if one is set.
func (getenv envEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := getenv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}
