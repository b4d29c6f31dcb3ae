package awsfacts_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/ops/discovery"
	"github.com/linoone/linoone/internal/ops/discovery/awsfacts"
	"github.com/linoone/linoone/internal/ops/discovery/discoverytest"
)

const (
	goCert   = "arn:aws:acm:us-east-1:123456789012:certificate/0b3e7a52-6c1d-4d8e-9f2a-5b7c8d9e0f1a"
	siteCert = "arn:aws:acm:us-east-1:123456789012:certificate/7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6"
	euCert   = "arn:aws:acm:eu-west-1:123456789012:certificate/5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
)

// fullAccount answers for an account that has everything: a delegated zone
// with an alias to the API Gateway domain, a CloudFront site, the API Gateway
// domain name mapped to the resolver, certificates and the shared bus.
func fullAccount() map[string]string {
	return map[string]string{
		"route53 ListHostedZonesByName dnsname=go.example.com":                                                "route53/list-hosted-zones-by-name-go.example.com.http",
		"route53 ListHostedZonesByName dnsname=example.com":                                                   "route53/list-hosted-zones-by-name-example.com.http",
		"route53 ListResourceRecordSets zone=Z0EXAMPLE4KQ2T name=example.com type=NS":                         "route53/list-resource-record-sets-example.com-ns.http",
		"route53 ListResourceRecordSets zone=Z0EXAMPLE4KQ2T name=go.example.com":                              "route53/list-resource-record-sets-go.example.com-alias-apigw.http",
		"cloudfront ListDistributions":                                                                        "cloudfront/list-distributions.http",
		"apigateway GetDomainNames":                                                                           "apigatewayv2/get-domain-names.http",
		"apigateway GetApiMappings domain=go.example.com":                                                     "apigatewayv2/get-api-mappings-go.example.com.http",
		"apigateway GetApi id=a1b2c3d4e5":                                                                     "apigatewayv2/get-api.http",
		"acm ListCertificates region=us-east-1":                                                               "acm/list-certificates-us-east-1.http",
		"acm ListCertificates region=eu-west-1":                                                               "acm/list-certificates-eu-west-1.http",
		"eventbridge DescribeEventBus name=shared-engagement":                                                 "eventbridge/describe-event-bus.http",
		"eventbridge DescribeEventBus name=arn:aws:events:us-east-1:123456789012:event-bus/shared-engagement": "eventbridge/describe-event-bus.http",
	}
}

func newCollector(t *testing.T, endpoint, region string) *awsfacts.Collector {
	t.Helper()
	cfg, err := awsfacts.LoadConfig(context.Background(), awsfacts.Settings{
		Region:          region,
		AccessKeyID:     "AKIDEXAMPLE",
		SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		MaxAttempts:     1,
	})
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return awsfacts.New(cfg, endpoint)
}

func fullQuery() awsfacts.Query {
	return awsfacts.Query{Domain: "go.example.com", ResolverAPIID: "a1b2c3d4e5", Bus: "shared-engagement"}
}

func TestCollectFullAccount(t *testing.T) {
	fake := discoverytest.StartAWS(t, "testdata", fullAccount())
	got, err := newCollector(t, fake.URL, "us-east-1").Collect(context.Background(), fullQuery())
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	want := awsfacts.Snapshot{
		HostedZones: []discovery.HostedZone{{
			ID:          "Z0EXAMPLE4KQ2T",
			Name:        "example.com",
			NameServers: []string{"ns-1536.awsdns-00.co.uk", "ns-0.awsdns-00.com", "ns-1024.awsdns-00.org", "ns-512.awsdns-00.net"},
			Records: []discovery.RecordSet{{
				Name: "go.example.com", Type: "A",
				AliasTarget: "d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com", AliasZoneID: "Z1UJRXOUMOOFQ8",
			}},
		}},
		Distributions: []discovery.Distribution{
			{
				ID: "E1UNRELATED9XZ", DomainName: "d2222222abcdef.cloudfront.net", Status: "Deployed", Enabled: true,
				Aliases:         []string{"assets.example.org"},
				Origins:         []discovery.Origin{{ID: "assets", DomainName: "assets-bucket.s3.us-east-1.amazonaws.com"}},
				DefaultOriginID: "assets",
			},
			{
				ID: "E2QWRUHAPOMQZL", DomainName: "d111111abcdef8.cloudfront.net", Status: "Deployed", Enabled: true,
				Aliases: []string{"go.example.com", "www.example.com"},
				Origins: []discovery.Origin{
					{ID: "site-bucket", DomainName: "example-site.s3.us-east-1.amazonaws.com"},
					{ID: "app-api", DomainName: "app.example-backend.net"},
				},
				DefaultOriginID: "site-bucket",
				Behaviors:       []discovery.Behavior{{PathPattern: "/api/*", OriginID: "app-api"}},
			},
		},
		APIDomains: []discovery.APIDomain{{
			Name: "go.example.com", Target: "d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com", TargetZoneID: "Z1UJRXOUMOOFQ8",
			EndpointType: "REGIONAL", Status: "AVAILABLE", CertificateARN: goCert, IPAddressType: "ipv4",
			Mappings: []discovery.APIMapping{{APIID: "a1b2c3d4e5", Stage: "$default", Key: ""}},
		}},
		ResolverAPI: &discovery.API{
			ID: "a1b2c3d4e5", Name: "linoone-resolver", Endpoint: "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com", ProtocolType: "HTTP",
		},
		Certificates: []discovery.Certificate{
			{ARN: goCert, Region: "us-east-1", DomainName: "go.example.com", SANs: []string{"go.example.com"}, Status: "ISSUED"},
			{ARN: siteCert, Region: "us-east-1", DomainName: "example.com", SANs: []string{"example.com", "*.example.com"}, Status: "ISSUED"},
		},
		Bus: &discovery.Bus{Requested: "shared-engagement", Found: true, Name: "shared-engagement", ARN: "arn:aws:events:us-east-1:123456789012:event-bus/shared-engagement"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestCollectIsReadOnlyAndSigned(t *testing.T) {
	fake := discoverytest.StartAWS(t, "testdata", fullAccount())
	if _, err := newCollector(t, fake.URL, "eu-west-1").Collect(context.Background(), fullQuery()); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	services := map[string]string{}
	for _, r := range fake.Requests() {
		op := strings.Fields(r.Operation)
		if len(op) != 2 || !(strings.HasPrefix(op[1], "List") || strings.HasPrefix(op[1], "Get") || strings.HasPrefix(op[1], "Describe")) {
			t.Errorf("request %q is not a read", r.Key)
		}
		services[r.Key] = r.Service + "@" + r.Region
	}
	// ACM is asked in the region and in us-east-1, where CloudFront's
	// certificates live; the signing scope shows which.
	for key, want := range map[string]string{
		"acm ListCertificates region=eu-west-1":               "acm@eu-west-1",
		"acm ListCertificates region=us-east-1":               "acm@us-east-1",
		"apigateway GetApi id=a1b2c3d4e5":                     "apigateway@eu-west-1",
		"eventbridge DescribeEventBus name=shared-engagement": "events@eu-west-1",
	} {
		if got := services[key]; got != want {
			t.Errorf("%s signed for %q, want %q", key, got, want)
		}
	}
}

func TestCollectRegionalCertificates(t *testing.T) {
	fake := discoverytest.StartAWS(t, "testdata", fullAccount())
	got, err := newCollector(t, fake.URL, "eu-west-1").Collect(context.Background(), awsfacts.Query{Domain: "go.example.com"})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	want := []discovery.Certificate{
		{ARN: euCert, Region: "eu-west-1", DomainName: "go.example.com", SANs: []string{"go.example.com"}, Status: "ISSUED"},
		{ARN: goCert, Region: "us-east-1", DomainName: "go.example.com", SANs: []string{"go.example.com"}, Status: "ISSUED"},
		{ARN: siteCert, Region: "us-east-1", DomainName: "example.com", SANs: []string{"example.com", "*.example.com"}, Status: "ISSUED"},
	}
	if diff := cmp.Diff(want, got.Certificates); diff != "" {
		t.Errorf("certificates (-want +got):\n%s", diff)
	}
}

func TestCollectNothingFound(t *testing.T) {
	fake := discoverytest.StartAWS(t, "testdata", nil)
	got, err := newCollector(t, fake.URL, "us-east-1").Collect(context.Background(), awsfacts.Query{Domain: "go.example.com", Bus: "shared-engagement"})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	want := awsfacts.Snapshot{Bus: &discovery.Bus{Requested: "shared-engagement"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestCollectSkipsWhatWasNotAsked(t *testing.T) {
	fake := discoverytest.StartAWS(t, "testdata", fullAccount())
	got, err := newCollector(t, fake.URL, "us-east-1").Collect(context.Background(), awsfacts.Query{ResolverAPIID: "a1b2c3d4e5"})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if got.ResolverAPI == nil || got.HostedZones != nil || got.Distributions != nil || got.Bus != nil {
		t.Errorf("snapshot = %+v, want only the resolver API", got)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (GetApi)", n)
	}
}

func TestCollectPaginatesDomainNames(t *testing.T) {
	replies := fullAccount()
	replies["apigateway GetDomainNames"] = "apigatewayv2/get-domain-names-page1.http"
	replies["apigateway GetDomainNames nexttoken=eyJkb21haW5OYW1lIjoiYXBpLmV4YW1wbGUub3JnIn0"] = "apigatewayv2/get-domain-names.http"
	fake := discoverytest.StartAWS(t, "testdata", replies)
	got, err := newCollector(t, fake.URL, "us-east-1").Collect(context.Background(), awsfacts.Query{Domain: "go.example.com"})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if len(got.APIDomains) != 1 || got.APIDomains[0].Name != "go.example.com" {
		t.Errorf("API domains = %+v, want go.example.com from the second page", got.APIDomains)
	}
}

func TestCollectWildcardDomainName(t *testing.T) {
	fake := discoverytest.StartAWS(t, "testdata", fullAccount())
	got, err := newCollector(t, fake.URL, "us-east-1").Collect(context.Background(), awsfacts.Query{Domain: "api.example.org"})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if len(got.APIDomains) != 1 || got.APIDomains[0].Target != "d-9z8y7x6w5v.execute-api.us-east-1.amazonaws.com" {
		t.Errorf("API domains = %+v", got.APIDomains)
	}
}

func TestCollectErrors(t *testing.T) {
	tests := []struct {
		name     string
		override map[string]string
		query    awsfacts.Query
		kind     error
		message  string
	}{
		{
			name:     "route53 access denied",
			override: map[string]string{"route53 ListHostedZonesByName dnsname=go.example.com": "route53/error-access-denied.http"},
			query:    fullQuery(),
			kind:     awsfacts.ErrAccessDenied,
			message:  "route53 ListHostedZonesByName: access denied: AccessDenied: User: arn:aws:iam::123456789012:user/discover is not authorized",
		},
		{
			name:     "cloudfront access denied",
			override: map[string]string{"cloudfront ListDistributions": "cloudfront/error-access-denied.http"},
			query:    fullQuery(),
			kind:     awsfacts.ErrAccessDenied,
			message:  "cloudfront ListDistributions: access denied: AccessDenied: User:",
		},
		{
			name:     "api gateway access denied",
			override: map[string]string{"apigateway GetDomainNames": "apigatewayv2/error-access-denied.http"},
			query:    fullQuery(),
			kind:     awsfacts.ErrAccessDenied,
			message:  "apigateway GetDomainNames: access denied: AccessDeniedException: User:",
		},
		{
			name:     "acm access denied",
			override: map[string]string{"acm ListCertificates region=us-east-1": "acm/error-access-denied.http"},
			query:    fullQuery(),
			kind:     awsfacts.ErrAccessDenied,
			message:  "acm ListCertificates (us-east-1): access denied: AccessDeniedException: User:",
		},
		{
			name:     "eventbridge access denied",
			override: map[string]string{"eventbridge DescribeEventBus name=shared-engagement": "eventbridge/error-access-denied.http"},
			query:    fullQuery(),
			kind:     awsfacts.ErrAccessDenied,
			message:  "eventbridge DescribeEventBus: access denied: AccessDeniedException: User:",
		},
		{
			name:     "resolver api not found",
			override: map[string]string{"apigateway GetApi id=a1b2c3d4e5": "apigatewayv2/get-api-not-found.http"},
			query:    fullQuery(),
			kind:     awsfacts.ErrAPINotFound,
			message:  "apigateway GetApi: resolver api not found: no API a1b2c3d4e5 in us-east-1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := fullAccount()
			for k, v := range tt.override {
				replies[k] = v
			}
			fake := discoverytest.StartAWS(t, "testdata", replies)
			_, err := newCollector(t, fake.URL, "us-east-1").Collect(context.Background(), tt.query)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error = %v, want %v", err, tt.kind)
			}
			if !strings.HasPrefix(err.Error(), tt.message) || strings.Contains(err.Error(), "\n") {
				t.Errorf("message = %q, want one line starting %q", err, tt.message)
			}
		})
	}
}

func TestCollectUnreachable(t *testing.T) {
	_, err := newCollector(t, discoverytest.ClosedURL(t), "us-east-1").Collect(context.Background(), fullQuery())
	if !errors.Is(err, awsfacts.ErrUnreachable) {
		t.Fatalf("error = %v, want ErrUnreachable", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "apigateway GetApi: endpoint unreachable: dial tcp 127.0.0.1:") || !strings.Contains(msg, "connection refused") {
		t.Errorf("message = %q", msg)
	}
}

func TestLoadConfigStaticCredentials(t *testing.T) {
	cfg, err := awsfacts.LoadConfig(context.Background(), awsfacts.Settings{Region: "eu-west-1", AccessKeyID: "AKID", SecretAccessKey: "SECRET", SessionToken: "TOKEN", MaxAttempts: 2})
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatalf("Retrieve: %v", err)
	}
	if cfg.Region != "eu-west-1" || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "SECRET" || creds.SessionToken != "TOKEN" || cfg.RetryMaxAttempts != 2 {
		t.Errorf("config = region %q creds %+v attempts %d", cfg.Region, creds, cfg.RetryMaxAttempts)
	}
}
