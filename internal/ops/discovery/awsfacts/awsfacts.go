// Package awsfacts collects, read-only, what an AWS account knows about a
// custom domain and an event bus: public Route 53 zones and record sets,
// CloudFront distributions, API Gateway v2 custom domain names with their API
// mappings, the resolver API, ACM certificates in the region and in us-east-1
// (CloudFront's), and the EventBridge bus. It only lists, gets and describes;
// the interfaces it consumes contain no write operation. What it finds is
// returned in the discovery package's fact types.
package awsfacts

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	"github.com/aws/aws-sdk-go-v2/service/apigatewayv2"
	"github.com/aws/aws-sdk-go-v2/service/cloudfront"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/route53"
)

// DefaultHTTPTimeout bounds one AWS request.
const DefaultHTTPTimeout = 15 * time.Second

// cloudFrontRegion is where CloudFront's ACM certificates live.
const cloudFrontRegion = "us-east-1"

// Settings configure LoadConfig.
type Settings struct {
	Region string
	// AccessKeyID and SecretAccessKey (and SessionToken), when both are set,
	// are used as static credentials and no shared config file is read;
	// otherwise the SDK's default chain applies.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Profile selects a shared config profile for the default chain.
	Profile string
	// MaxAttempts bounds attempts per request; 0 keeps the SDK default.
	MaxAttempts int
	// HTTPTimeout bounds one request; 0 means DefaultHTTPTimeout.
	HTTPTimeout time.Duration
}

// LoadConfig builds the AWS configuration the collector's clients use.
func LoadConfig(ctx context.Context, s Settings) (aws.Config, error) {
	timeout := s.HTTPTimeout
	if timeout <= 0 {
		timeout = DefaultHTTPTimeout
	}
	httpClient := awshttp.NewBuildableClient().WithTimeout(timeout)
	if s.AccessKeyID != "" && s.SecretAccessKey != "" {
		return aws.Config{
			Region:           s.Region,
			Credentials:      aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, s.SessionToken)),
			HTTPClient:       httpClient,
			RetryMaxAttempts: s.MaxAttempts,
		}, nil
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(s.Region), config.WithHTTPClient(httpClient)}
	if s.MaxAttempts > 0 {
		opts = append(opts, config.WithRetryMaxAttempts(s.MaxAttempts))
	}
	if s.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, wrapConfig(err)
	}
	return cfg, nil
}

// The read-only operations the collector uses, one interface per service.
type (
	route53API interface {
		ListHostedZonesByName(context.Context, *route53.ListHostedZonesByNameInput, ...func(*route53.Options)) (*route53.ListHostedZonesByNameOutput, error)
		ListResourceRecordSets(context.Context, *route53.ListResourceRecordSetsInput, ...func(*route53.Options)) (*route53.ListResourceRecordSetsOutput, error)
	}
	cloudFrontAPI interface {
		ListDistributions(context.Context, *cloudfront.ListDistributionsInput, ...func(*cloudfront.Options)) (*cloudfront.ListDistributionsOutput, error)
	}
	apiGatewayAPI interface {
		GetDomainNames(context.Context, *apigatewayv2.GetDomainNamesInput, ...func(*apigatewayv2.Options)) (*apigatewayv2.GetDomainNamesOutput, error)
		GetApiMappings(context.Context, *apigatewayv2.GetApiMappingsInput, ...func(*apigatewayv2.Options)) (*apigatewayv2.GetApiMappingsOutput, error)
		GetApi(context.Context, *apigatewayv2.GetApiInput, ...func(*apigatewayv2.Options)) (*apigatewayv2.GetApiOutput, error)
	}
	acmAPI interface {
		ListCertificates(context.Context, *acm.ListCertificatesInput, ...func(*acm.Options)) (*acm.ListCertificatesOutput, error)
	}
	eventBridgeAPI interface {
		DescribeEventBus(context.Context, *eventbridge.DescribeEventBusInput, ...func(*eventbridge.Options)) (*eventbridge.DescribeEventBusOutput, error)
	}
)

var (
	_ route53API     = (*route53.Client)(nil)
	_ cloudFrontAPI  = (*cloudfront.Client)(nil)
	_ apiGatewayAPI  = (*apigatewayv2.Client)(nil)
	_ acmAPI         = (*acm.Client)(nil)
	_ eventBridgeAPI = (*eventbridge.Client)(nil)
)

// Collector gathers the facts of one region.
type Collector struct {
	region     string
	route53    route53API
	cloudFront cloudFrontAPI // nil where CloudFront is not offered
	apiGateway apiGatewayAPI
	acm        acmAPI
	acmGlobal  acmAPI // us-east-1, for CloudFront; nil when region is us-east-1 or outside the aws partition
	events     eventBridgeAPI
}

// New builds the service clients from cfg. A non-empty endpoint replaces the
// base endpoint of every client (local test servers, proxies).
func New(cfg aws.Config, endpoint string) *Collector {
	var base *string
	if endpoint != "" {
		base = aws.String(endpoint)
	}
	c := &Collector{
		region: cfg.Region,
		route53: route53.NewFromConfig(cfg, func(o *route53.Options) {
			o.BaseEndpoint = base
		}),
		apiGateway: apigatewayv2.NewFromConfig(cfg, func(o *apigatewayv2.Options) {
			o.BaseEndpoint = base
		}),
		acm: acm.NewFromConfig(cfg, func(o *acm.Options) {
			o.BaseEndpoint = base
		}),
		events: eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) {
			o.BaseEndpoint = base
		}),
	}
	switch partitionOf(cfg.Region) {
	case "aws":
		c.cloudFront = cloudfront.NewFromConfig(cfg, func(o *cloudfront.Options) {
			o.BaseEndpoint = base
		})
		if cfg.Region != cloudFrontRegion {
			c.acmGlobal = acm.NewFromConfig(cfg, func(o *acm.Options) {
				o.BaseEndpoint = base
				o.Region = cloudFrontRegion
			})
		}
	case "aws-cn":
		c.cloudFront = cloudfront.NewFromConfig(cfg, func(o *cloudfront.Options) {
			o.BaseEndpoint = base
		})
	}
	return c
}

func partitionOf(region string) string {
	switch {
	case len(region) > 3 && region[:3] == "cn-":
		return "aws-cn"
	case len(region) > 7 && region[:7] == "us-gov-":
		return "aws-us-gov"
	case len(region) > 5 && region[:5] == "eusc-":
		return "aws-eusc"
	}
	return "aws"
}
