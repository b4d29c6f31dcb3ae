// Package signing decides which credentials sign the CLI's management API calls
// (shorten and the other producer commands, console, smoke) and says whose they
// are: the Linoone pair of the environment, the pair a serve on this machine wrote
// to its data dir, or the AWS default credential chain for a deployed API.
package signing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/core/hostname"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// Service is the SigV4 service of the management API, on AWS (API Gateway's
// AWS_IAM authorization) and locally.
const Service = "execute-api"

// retrieveTimeout bounds the chain's first retrieval, which may wait on an
// instance metadata service or an SSO token refresh that never answers.
const retrieveTimeout = 10 * time.Second

// Request is what a command knows when it picks its credentials.
type Request struct {
	// Endpoint is the management API named on the command line; "" for the one
	// the configuration names, the local serve's.
	Endpoint string
	// Region is the SigV4 region named on the command line; "" to derive it.
	Region string
	// Config holds the Linoone pair of the environment, the data dir, the
	// configured management URL and region.
	Config config.Shorten
	// Getenv reads AWS_PROFILE for the description; nil is os.Getenv.
	Getenv func(string) string
}

// Signing is who signs the management calls, for which API, in which region.
type Signing struct {
	Base     string // the management API's base URL, without a trailing slash
	Region   string
	Provider aws.CredentialsProvider
	// Source is where the credentials come from, as an error tells to check
	// them ("LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY").
	Source string
	// Identity is one line naming the credentials for a report: the access key's
	// prefix and Source, and the ARN once Confirm knows it. Never the secret.
	Identity string
	aws      *aws.Config // the chain's configuration, for Confirm; nil for a pair
}

// Resolve picks the credentials, in this order:
//
//   - LINOONE_ACCESS_KEY_ID and LINOONE_SECRET_ACCESS_KEY, when set, for any API;
//   - without an Endpoint (the configured local serve's API), the pair serve wrote
//     to the data dir, else an error saying to start serve or set the pair;
//   - for an Endpoint on this machine, that pair if serve wrote one;
//   - else the AWS default credential chain (environment, profile, SSO, an
//     instance's role), retrieved once here so that missing credentials fail now.
//
// The region is Region if given, else the one in an execute-api host name, else
// (for the chain) the AWS configuration's, else the configured one.
func Resolve(ctx context.Context, r Request) (Signing, error) {
	cfg := r.Config
	s := Signing{Base: strings.TrimRight(cmp.Or(r.Endpoint, cfg.ManagementURL), "/")}
	region := cmp.Or(r.Region, RegionOf(s.Base))
	file := filepath.Join(cfg.DataDir, sigv4.CredentialsFile)
	if cfg.Credentials == (sigv4.Credentials{}) && r.Endpoint != "" && !(isLoopback(s.Base) && exists(file)) {
		return s, s.chain(ctx, r, region)
	}
	creds, err := datadir.ProducerCredentials(cfg.DataDir, cfg.Credentials)
	if err != nil {
		return Signing{}, err
	}
	s.Source = sigv4.EnvAccessKeyID + " and " + sigv4.EnvSecretAccessKey
	if cfg.Credentials == (sigv4.Credentials{}) {
		s.Source = fmt.Sprintf("the pair serve wrote to %s (LINOONE_DATA_DIR)", file)
	}
	s.Provider = credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, "")
	s.Region = cmp.Or(region, cfg.Region)
	s.Identity = describe(creds.AccessKeyID, s.Source)
	return s, nil
}

// chain fills s with the AWS default credential chain's credentials.
func (s *Signing) chain(ctx context.Context, r Request, region string) error {
	// The SDK's warnings would interleave with what the command prints.
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithLogger(logging.Nop{}))
	if err != nil {
		return fmt.Errorf("AWS default configuration: %w", err)
	}
	if awsCfg.Credentials == nil {
		return s.noCredentials(r, errors.New("the chain found no credential source"))
	}
	rctx, cancel := context.WithTimeout(ctx, retrieveTimeout)
	defer cancel()
	c, err := awsCfg.Credentials.Retrieve(rctx)
	if err != nil {
		return s.noCredentials(r, err)
	}
	from := cmp.Or(c.Source, "unknown source")
	getenv := r.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv("AWS_PROFILE"); p != "" {
		from += ", profile " + p
	}
	s.Provider, s.aws = awsCfg.Credentials, &awsCfg
	s.Region = cmp.Or(region, awsCfg.Region, r.Config.Region)
	s.Source = "the AWS default credential chain (" + from + ")"
	s.Identity = describe(c.AccessKeyID, s.Source)
	return nil
}

// noCredentials says every way to give a command credentials for s.Base.
func (s *Signing) noCredentials(r Request, err error) error {
	serve := ""
	if isLoopback(s.Base) {
		serve = ", " + datadir.StartServeFirst(r.Config.DataDir)
	}
	return fmt.Errorf("no credentials to sign the calls to %s: set %s and %s%s, or AWS credentials the default chain finds (AWS_ACCESS_KEY_ID, AWS_PROFILE, SSO, an instance role): %w",
		s.Base, sigv4.EnvAccessKeyID, sigv4.EnvSecretAccessKey, serve, err)
}

// Confirm asks STS whose the chain's credentials are and puts the ARN in
// Identity. A failed call is said in Identity, not returned: the API may be
// reachable where STS is not. A Linoone pair has no ARN to ask for.
func (s *Signing) Confirm(ctx context.Context) {
	if s.aws == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	client := sts.NewFromConfig(*s.aws, func(o *sts.Options) {
		o.RetryMaxAttempts = 1
		o.Region = cmp.Or(o.Region, s.Region)
	})
	out, err := client.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		s.Identity += "; STS GetCallerIdentity failed, so the identity is unconfirmed"
		return
	}
	s.Identity = fmt.Sprintf("AWS identity %s, %s", aws.ToString(out.Arn), s.Identity)
}

// Transport signs every request for the management API in s.Region before base
// (http.DefaultTransport when nil) sends it, with the session token of
// temporary credentials when there is one.
func (s Signing) Transport(base http.RoundTripper) http.RoundTripper {
	return sigv4.ProviderTransport(base, s.Provider, s.Region, Service)
}

// describe names credentials by their access key's prefix and source.
func describe(accessKeyID, source string) string {
	return fmt.Sprintf("access key %s from %s", keyPrefix(accessKeyID), source)
}

// keyPrefix is enough of an access key id to tell keys apart, never all of it.
func keyPrefix(id string) string {
	if len(id) <= 8 {
		return "…"
	}
	return id[:8] + "…"
}

// RegionOf is the region in an API Gateway endpoint's host name
// (abc123.execute-api.eu-west-1.amazonaws.com), or "".
func RegionOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	parts := strings.Split(u.Hostname(), ".")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "execute-api" && strings.HasPrefix(parts[i+2], "amazonaws") {
			return parts[i+1]
		}
	}
	return ""
}

// isLoopback reports whether endpoint's host is this machine's loopback.
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	return err == nil && hostname.IsLoopback(u.Hostname())
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
