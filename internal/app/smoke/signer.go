package smoke

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// Signing is who signs the management calls, in which region.
type Signing struct {
	Provider aws.CredentialsProvider
	Region   string
	Source   string // whose credentials, for the report: never the secret
}

// ResolveSigning picks the credentials as the other commands do, then AWS's:
// LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY if set; else, for a
// management API on this machine, the pair serve wrote to the data dir; else the
// AWS default credential chain (environment, shared config and SSO, the instance's
// role). The region is region if given, else the one in an execute-api host name,
// else the chain's, else LINOONE_REGION or AWS_REGION.
func ResolveSigning(ctx context.Context, cfg config.Shorten, management, region string) (Signing, error) {
	if region == "" {
		region = RegionOf(management)
	}
	if cfg.Credentials != (sigv4.Credentials{}) {
		return static(cfg.Credentials, or(region, cfg.Region), sigv4.EnvAccessKeyID+" and "+sigv4.EnvSecretAccessKey), nil
	}
	if isLoopback(management) {
		file := filepath.Join(cfg.DataDir, sigv4.CredentialsFile)
		if _, err := os.Stat(file); err == nil {
			creds, err := datadir.ProducerCredentials(cfg.DataDir, sigv4.Credentials{})
			if err != nil {
				return Signing{}, err
			}
			return static(creds, or(region, cfg.Region), "the pair serve wrote to "+file), nil
		}
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithLogger(logging.Nop{})) // its warnings would interleave with the report
	if err != nil {
		return Signing{}, fmt.Errorf("AWS default configuration: %w", err)
	}
	c, err := awsCfg.Credentials.Retrieve(ctx)
	if err != nil {
		return Signing{}, fmt.Errorf("no credentials to sign the management calls: set %s and %s, or AWS credentials the default chain finds (AWS_ACCESS_KEY_ID, AWS_PROFILE, SSO, an instance role): %w",
			sigv4.EnvAccessKeyID, sigv4.EnvSecretAccessKey, err)
	}
	return Signing{Provider: awsCfg.Credentials, Region: or(region, awsCfg.Region, cfg.Region),
		Source: fmt.Sprintf("AWS default credential chain (%s, access key %s)", c.Source, c.AccessKeyID)}, nil
}

func static(c sigv4.Credentials, region, source string) Signing {
	return Signing{Provider: credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, ""), Region: region, Source: source}
}

func or(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Transport signs every request for execute-api in s.Region before base sends it,
// with the session token of temporary credentials when there is one.
func (s Signing) Transport(base http.RoundTripper) http.RoundTripper {
	return sigv4.ProviderTransport(base, s.Provider, s.Region, "execute-api")
}
