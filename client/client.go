package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/linoone/linoone/api/management"
)

// Client calls one Linoone deployment's management API. It is safe for concurrent
// use; make one and share it.
type Client struct {
	api   *management.Client
	retry retryPolicy
	// inFlight bounds the batch requests of one ShortenBatch call.
	inFlight int
	// sleep waits between attempts; tests replace it to see the waits.
	sleep func(ctx context.Context, d time.Duration) error
}

// Defaults of the options.
const (
	DefaultRegion      = "us-east-1"
	DefaultAttempts    = 4
	DefaultBaseDelay   = 200 * time.Millisecond
	DefaultMaxDelay    = 5 * time.Second
	DefaultBatchFlight = 4
	// DefaultTimeout bounds one attempt of a request when no *http.Client is
	// given: a full batch of 1,000 URLs takes well under that.
	DefaultTimeout = 30 * time.Second
)

// settings are what the options set.
type settings struct {
	creds    aws.CredentialsProvider
	region   string
	hc       *http.Client
	retry    retryPolicy
	inFlight int
}

// An Option configures a Client made by New.
type Option func(*settings)

// WithCredentials signs with this access key pair instead of the AWS default
// credential chain (environment, shared files, SSO, container or instance role).
// Locally, `linoone serve` writes its pair to credentials.json in its data dir.
func WithCredentials(accessKeyID, secretAccessKey string) Option {
	return WithCredentialsProvider(credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, ""))
}

// WithCredentialsProvider signs with the credentials p retrieves, such as an
// assumed role's (aws.Config.Credentials).
func WithCredentialsProvider(p aws.CredentialsProvider) Option {
	return func(s *settings) { s.creds = p }
}

// WithRegion is the region requests are signed for. Without it, the region is the
// one in an endpoint of the form https://ID.execute-api.REGION.amazonaws.com, else
// the AWS default configuration's (AWS_REGION, the shared config file), else
// DefaultRegion, which is also what `linoone serve` verifies by default.
func WithRegion(region string) Option {
	return func(s *settings) { s.region = region }
}

// WithHTTPClient sends the requests through hc: its Transport, Timeout and
// redirect policy. The client signs each request before hc sees it.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) { s.hc = hc }
}

// WithRetry sets how often a request is sent at most (attempts, 1 for no retry)
// and the backoff between attempts: the n-th wait is drawn between half and all of
// min(maxDelay, baseDelay·2ⁿ⁻¹), unless the answer's Retry-After asks for another.
func WithRetry(attempts int, baseDelay, maxDelay time.Duration) Option {
	return func(s *settings) { s.retry = retryPolicy{attempts: attempts, base: baseDelay, max: maxDelay} }
}

// WithBatchConcurrency bounds how many batch requests of one ShortenBatch call are
// in flight at once.
func WithBatchConcurrency(n int) Option {
	return func(s *settings) { s.inFlight = n }
}

// New returns a client of the management API at endpoint, such as
// https://abcdef1234.execute-api.us-east-1.amazonaws.com or, locally,
// http://127.0.0.1:8081. Without WithCredentials or WithCredentialsProvider it
// loads the AWS default configuration for its credential chain (credentials are
// retrieved, and refreshed, when a request is signed).
func New(endpoint string, opts ...Option) (*Client, error) {
	base, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	s := settings{
		retry:    retryPolicy{attempts: DefaultAttempts, base: DefaultBaseDelay, max: DefaultMaxDelay},
		inFlight: DefaultBatchFlight,
	}
	for _, o := range opts {
		o(&s)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := s.resolve(base); err != nil {
		return nil, err
	}
	sign := &signer{creds: s.creds, region: s.region, v4: v4.NewSigner()}
	api, err := management.NewClient(base.String(),
		management.WithHTTPClient(s.hc), management.WithRequestEditorFn(sign.sign))
	if err != nil {
		return nil, fmt.Errorf("linoone client: %w", err)
	}
	return &Client{api: api, retry: s.retry, inFlight: s.inFlight, sleep: sleep}, nil
}

// parseEndpoint accepts an absolute http or https URL with a host and nothing
// after its path.
func parseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return nil, fmt.Errorf("linoone client: endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, fmt.Errorf("linoone client: endpoint %q: want an absolute http or https URL", endpoint)
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return nil, fmt.Errorf("linoone client: endpoint %q: want no userinfo, query or fragment", endpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

func (s settings) check() error {
	var errs []error
	if s.retry.attempts < 1 || s.retry.base <= 0 || s.retry.max < s.retry.base {
		errs = append(errs, fmt.Errorf("WithRetry(%d, %v, %v): want attempts ≥ 1 and 0 < baseDelay ≤ maxDelay", s.retry.attempts, s.retry.base, s.retry.max))
	}
	if s.inFlight < 1 {
		errs = append(errs, fmt.Errorf("WithBatchConcurrency(%d): want at least 1", s.inFlight))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("linoone client: %w", err)
	}
	return nil
}

// executeAPIHost is the host of an API Gateway endpoint, whose region it names.
var executeAPIHost = regexp.MustCompile(`^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$`)

// resolve fills in what the options left out: the HTTP client, the region and the
// credential chain.
func (s *settings) resolve(base *url.URL) error {
	if s.hc == nil {
		s.hc = &http.Client{Timeout: DefaultTimeout}
	}
	if s.region == "" {
		if m := executeAPIHost.FindStringSubmatch(base.Hostname()); m != nil {
			s.region = m[1]
		}
	}
	if s.creds != nil && s.region != "" {
		return nil
	}
	// New has no context to take: loading the configuration reads the environment
	// and the shared files only; the chain's network calls wait for a request's.
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		return fmt.Errorf("linoone client: AWS default configuration: %w", err)
	}
	if s.creds == nil {
		if cfg.Credentials == nil {
			return errors.New("linoone client: the AWS default configuration has no credential chain: use WithCredentials")
		}
		s.creds = cfg.Credentials
	}
	if s.region == "" {
		s.region = cmp.Or(cfg.Region, DefaultRegion)
	}
	return nil
}
