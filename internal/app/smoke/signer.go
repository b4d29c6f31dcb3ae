package smoke

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
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
// with the session token of temporary credentials when there is one: the default
// chain's are often temporary (SSO, an assumed role), which sigv4.Credentials, a
// static pair for local mode, has no room for.
func (s Signing) Transport(base http.RoundTripper) http.RoundTripper {
	return &signingTransport{base: base, s: s, signer: v4.NewSigner()}
}

type signingTransport struct {
	base   http.RoundTripper
	s      Signing
	signer *v4.Signer
}

// RoundTrip implements http.RoundTripper, leaving req unmodified.
func (t *signingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("sign request: read body: %w", err)
		}
		body = b
	}
	creds, err := t.s.Provider.Retrieve(req.Context())
	if err != nil {
		return nil, fmt.Errorf("sign request: credentials: %w", err)
	}
	signed := req.Clone(req.Context())
	signed.Body, signed.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if len(body) == 0 {
		signed.Body = http.NoBody
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	signed.Header.Set("X-Amz-Content-Sha256", hash)
	if err := t.signer.SignHTTP(req.Context(), creds, signed, hash, "execute-api", t.s.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign request: %w", err)
	}
	return t.base.RoundTrip(signed)
}
