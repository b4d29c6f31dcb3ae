// Package awswire holds the wiring the three Lambda functions share: the AWS
// configuration, configuration values kept in SSM parameters, and the Persist client
// signed with the function's role.
package awswire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/linoone/linoone/internal/config"
	"github.com/linoone/linoone/internal/persist"
)

// LoadAWS loads the default AWS configuration (the Lambda role, AWS_ENDPOINT_URL_*
// overrides) for the configured region.
func LoadAWS(ctx context.Context, cfg config.Config) (aws.Config, error) {
	c, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cfg.Region))
	if err != nil {
		return aws.Config{}, fmt.Errorf("load aws config: %w", err)
	}
	return c, nil
}

// GetParameterAPI is the SSM call ResolveParams needs.
type GetParameterAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

var _ GetParameterAPI = (*ssm.Client)(nil)

// ResolveParams fills the Persist URL and the resolver base URL from the SSM
// parameters named in the configuration, when they are, and checks them like the
// environment variables they replace.
func ResolveParams(ctx context.Context, cfg *config.Config, api GetParameterAPI) error {
	if cfg.LocalPersist { // config.Load's local-mode default is no Persist for a function
		return errors.New("LINOONE_PERSIST_URL: required (or LINOONE_PERSIST_URL_PARAM naming an SSM parameter)")
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{cfg.PersistSSM, &cfg.PersistURL}, {cfg.ResolverBaseSSM, &cfg.ResolverBaseURL}} {
		if p.name == "" {
			continue
		}
		out, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(p.name)})
		if err != nil {
			return fmt.Errorf("ssm parameter %s: %w", p.name, err)
		}
		if out.Parameter == nil || strings.TrimSpace(aws.ToString(out.Parameter.Value)) == "" {
			return fmt.Errorf("ssm parameter %s is empty", p.name)
		}
		*p.dst = strings.TrimSpace(aws.ToString(out.Parameter.Value))
	}
	return nil
}

// Persist builds the Persist client; with LINOONE_PERSIST_SIGV4 it signs every call
// with the function role's credentials (service execute-api).
func Persist(cfg config.Config, awsCfg aws.Config) (*persist.Client, error) {
	pc := persist.Config{BaseURL: cfg.PersistURL, Timeout: cfg.PersistTimeout, InlineLiterals: cfg.PersistInline}
	if cfg.PersistSigV4 {
		pc.SigV4 = &persist.SigV4{Credentials: awsCfg.Credentials, Region: cfg.Region}
	}
	return persist.New(pc)
}

// Load is the start of every function: the configuration with the variables the
// function requires, the AWS configuration, and — for functions that talk to
// Persist — the values kept in SSM parameters. The logger follows LINOONE_LOG_LEVEL.
func Load(ctx context.Context, getenv func(string) string, withPersist bool, required ...string) (config.Config, aws.Config, *slog.Logger, error) {
	cfg, err := config.Load(getenv)
	if err == nil && len(required) > 0 {
		err = cfg.Require(required...)
	}
	if err != nil {
		return config.Config{}, aws.Config{}, nil, fmt.Errorf("bad configuration: %w", err)
	}
	awsCfg, err := LoadAWS(ctx, cfg)
	if err == nil && withPersist {
		err = ResolveParams(ctx, &cfg, ssm.NewFromConfig(awsCfg))
	}
	if err != nil {
		return config.Config{}, aws.Config{}, nil, fmt.Errorf("configuration: %w", err)
	}
	return cfg, awsCfg, cfg.Logger(os.Stdout), nil
}
