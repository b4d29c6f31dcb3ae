package discovery

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	tDomain   = "go.example.com"
	tRegion   = "us-east-1"
	tAPIID    = "a1b2c3d4e5"
	tEndpoint = "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"
	tAPIHost  = "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"
	tTarget   = "d-k4n9w2x7p1.execute-api.us-east-1.amazonaws.com"
	tGoCert   = "arn:aws:acm:us-east-1:123456789012:certificate/0b3e7a52-6c1d-4d8e-9f2a-5b7c8d9e0f1a"
	tCFDomain = "d111111abcdef8.cloudfront.net"
	tZoneID   = "Z0EXAMPLE4KQ2T"
	tBus      = "shared-engagement"
	tBusARN   = "arn:aws:events:us-east-1:123456789012:event-bus/shared-engagement"
)

var (
	tRoute53NS  = []string{"ns-0.awsdns-00.com", "ns-512.awsdns-00.net"}
	tExternalNS = []string{"ns1.dns-provider.test", "ns2.dns-provider.test"}
	tAPIGWAddrs = []string{"192.0.2.10", "192.0.2.11"}
)

// base: the resolver API exists, the domain does not resolve, its zone is
// served outside the account, nothing else exists.
func base() Facts {
	return Facts{
		Domain:        tDomain,
		Region:        tRegion,
		ResolverAPIID: tAPIID,
		ResolverAPI:   &API{ID: tAPIID, Name: "linoone-resolver", Endpoint: tEndpoint, ProtocolType: "HTTP"},
		PublicDNS:     Resolution{Name: tDomain, NXDomain: true},
		PublicZone:    PublicZone{Name: "example.com", NameServers: tExternalNS},
	}
}

type option func(*Facts)

func facts(opts ...option) Facts {
	f := base()
	for _, o := range opts {
		o(&f)
	}
	return f
}

func noDomain(f *Facts) { f.Domain = "" }

func noAPI(f *Facts) { f.ResolverAPIID, f.ResolverAPI = "", nil }

// accountZone makes example.com a delegated Route 53 zone of the account.
func accountZone(records ...RecordSet) option {
	return func(f *Facts) {
		f.PublicZone = PublicZone{Name: "example.com", NameServers: tRoute53NS}
		f.HostedZones = append(f.HostedZones, HostedZone{ID: tZoneID, Name: "example.com", NameServers: tRoute53NS, Records: records})
	}
}

// undelegatedZone puts example.com in the account while public DNS still
// delegates it elsewhere.
func undelegatedZone(f *Facts) {
	f.HostedZones = append(f.HostedZones, HostedZone{ID: tZoneID, Name: "example.com", NameServers: tRoute53NS})
}

func apiDomain(mappings ...APIMapping) option {
	return func(f *Facts) {
		f.APIDomains = append(f.APIDomains, APIDomain{
			Name: tDomain, Target: tTarget, TargetZoneID: "Z1UJRXOUMOOFQ8", EndpointType: "REGIONAL",
			Status: "AVAILABLE", CertificateARN: tGoCert, IPAddressType: "ipv4", Mappings: mappings,
		})
	}
}

func resolverMapping(key string) APIMapping {
	return APIMapping{APIID: tAPIID, Stage: "$default", Key: key}
}

func otherMapping() APIMapping { return APIMapping{APIID: "zz9yy8xx7w", Stage: "prod"} }

func cnameTo(chain ...string) option {
	return func(f *Facts) {
		f.PublicDNS = Resolution{Name: tDomain, Chain: chain, Addresses: []string{"198.51.100.10"}}
	}
}

func addresses(addrs ...string) option {
	return func(f *Facts) { f.PublicDNS = Resolution{Name: tDomain, Addresses: addrs} }
}

func targetAddresses(f *Facts) {
	f.TargetDNS = map[string]Resolution{tTarget: {Name: tTarget, Addresses: tAPIGWAddrs}}
}

func probe(p Probe) option {
	return func(f *Facts) {
		f.ProbeToken = "AbCdEfGh12"
		p.URL = "https://go.example.com/AbCdEfGh12"
		f.Probe = &p
	}
}

func certificate(region, status string, names ...string) option {
	return func(f *Facts) {
		f.Certificates = append(f.Certificates, Certificate{ARN: "arn:aws:acm:" + region + ":123456789012:certificate/" + status, Region: region, DomainName: names[0], SANs: names, Status: status})
	}
}

// site is a CloudFront distribution of the account serving example.com's
// site from S3, with /api/* to another origin.
func site(aliases []string, behaviors ...Behavior) option {
	return func(f *Facts) {
		f.Distributions = append(f.Distributions, Distribution{
			ID: "E2QWRUHAPOMQZL", DomainName: tCFDomain, Status: "Deployed", Enabled: true, Aliases: aliases,
			Origins: []Origin{
				{ID: "site-bucket", DomainName: "example-site.s3.us-east-1.amazonaws.com"},
				{ID: "app-api", DomainName: "app.example-backend.net"},
				{ID: "linoone-resolver", DomainName: tAPIHost},
			},
			DefaultOriginID: "site-bucket",
			Behaviors:       append(behaviors, Behavior{PathPattern: "/api/*", OriginID: "app-api"}),
		})
	}
}

func bus(requested string, found bool) option {
	return func(f *Facts) {
		f.Bus = Bus{Requested: requested, Found: found}
		if found {
			f.Bus.Name, f.Bus.ARN = tBus, tBusARN
		}
	}
}

func sandbox(f *Facts) { f.Sandbox = true }

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

func domainVars(name string, routable bool, cert string) TerraformVars {
	return TerraformVars{CustomDomainName: strp(name), CustomDomainRoutable: boolp(routable), CustomDomainCertificateARN: strp(cert)}
}

type want struct {
	kind    Kind
	vars    TerraformVars
	actions int
	baseURL string
	// record and cloudFront, when set, must match exactly.
	record     *DNSRecord
	cloudFront *CloudFrontChange
	// evidence and action substrings that must appear.
	evidence  []string
	actionHas []string
	nextSteps int
	bus       BusDecision
	noRecord  bool
}

func TestDecideDomain(t *testing.T) {
	notChecked := BusDecision{Status: BusNotChecked}
	tests := []struct {
		name  string
		facts Facts
		want  want
	}{
		// --- no custom domain ---
		{
			name:  "no domain requested",
			facts: facts(noDomain),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, evidence: []string{"no custom domain requested"}},
		},
		{
			name:  "no domain and no resolver api yet",
			facts: facts(noDomain, noAPI),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: "", nextSteps: 1, evidence: []string{"not deployed yet"}},
		},

		// --- DNS routes to the API Gateway custom domain ---
		{
			name:  "cname to the api gateway target, mapped to the resolver",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping(""))),
			want: want{kind: UseCustomDomain, vars: domainVars(tDomain, true, tGoCert), baseURL: "https://go.example.com",
				evidence: []string{"is a CNAME to " + tTarget, "API mapping go.example.com -> API a1b2c3d4e5", "no --probe-token"}},
		},
		{
			name:  "alias record answering the target's addresses, probe saw 302",
			facts: facts(accountZone(), addresses(tAPIGWAddrs...), targetAddresses, apiDomain(resolverMapping("")), probe(Probe{Status: 302, Location: "https://target.example.org/", RequestID: "Qx1Y="})),
			want: want{kind: UseCustomDomain, vars: domainVars(tDomain, true, tGoCert), baseURL: "https://go.example.com",
				evidence: []string{"the addresses of " + tTarget + " (alias record)", "answered 302 Location https://target.example.org/, apigw-requestid Qx1Y="}},
		},
		{
			name:  "routed, probe saw the resolver's 404",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("")), probe(Probe{Status: 404, ContentType: "application/problem+json"})),
			want:  want{kind: UseCustomDomain, vars: domainVars(tDomain, true, tGoCert), baseURL: "https://go.example.com", evidence: []string{"answered 404"}},
		},
		{
			// API Gateway's own route miss is a 404 too, and proves nothing.
			name:  "routed, probe saw a 404 that is not the resolver's",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("")), probe(Probe{Status: 404, ContentType: "application/json", RequestID: "Qx1Y="})),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				evidence: []string{"not the resolver's problem+json"}},
		},
		{
			name:  "routed, probe failed on TLS",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("")), probe(Probe{Err: "tls: failed to verify certificate"})),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				evidence: []string{"failed: tls: failed to verify certificate"}, actionHas: []string{"does not answer like the resolver"}},
		},
		{
			name:  "routed, probe saw something else",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("")), probe(Probe{Status: 403})),
			want:  want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, evidence: []string{"answered 403, not the resolver's 302 or 404"}},
		},
		{
			name:  "routed, probe did not run",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("")), func(f *Facts) { f.ProbeToken = "AbCdEfGh12" }),
			want:  want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, evidence: []string{"probe: did not run"}},
		},
		{
			// The stack's custom_domain_name is a host: short URLs under /s cannot be
			// expressed, so the domain is not used as it is.
			name:  "routed, resolver mapped under a path key",
			facts: facts(cnameTo(tTarget), apiDomain(otherMapping(), resolverMapping("s")), func(f *Facts) { f.PathPrefix = "s" }),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				actionHas: []string{"https://go.example.com/s/", "empty mapping key"}},
		},
		{
			name:  "routed, mapping key differs from the requested prefix",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("l")), func(f *Facts) { f.PathPrefix = "s" }),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				actionHas: []string{"https://go.example.com/l/", "empty mapping key"}},
		},
		{
			name: "routed through a wildcard domain name",
			facts: facts(cnameTo(tTarget), func(f *Facts) {
				f.APIDomains = []APIDomain{{Name: "*.example.com", Target: tTarget, CertificateARN: tGoCert, Mappings: []APIMapping{resolverMapping("")}}}
			}),
			want: want{kind: UseCustomDomain, vars: domainVars(tDomain, true, ""), baseURL: "https://go.example.com", evidence: []string{"wildcard domain name *.example.com"}},
		},
		{
			name:  "routed, but no resolver api id to prove the mapping",
			facts: facts(noAPI, cnameTo(tTarget), apiDomain(resolverMapping(""))),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: "", nextSteps: 2, evidence: []string{"cannot be proven"}},
		},
		{
			name:  "routed, domain mapped to another api",
			facts: facts(cnameTo(tTarget), apiDomain(otherMapping())),
			want: want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 1,
				actionHas: []string{"already serves other APIs (go.example.com -> zz9yy8xx7w)"}},
		},
		{
			name:  "routed, domain name without any mapping",
			facts: facts(cnameTo(tTarget), apiDomain()),
			want:  want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, actionHas: []string{"no API mapping"}},
		},

		// --- CloudFront already serves the domain ---
		{
			name:  "cname to a distribution of the account",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain, "www.example.com"})),
			want: want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1,
				cloudFront: &CloudFrontChange{
					DistributionID: "E2QWRUHAPOMQZL", DistributionDomain: tCFDomain, AddBehavior: true, PathPattern: "/??????????", Precedence: 1,
					OriginID: "linoone-resolver", OriginDomain: tAPIHost, OriginProtocol: "https-only",
					CachePolicy: cachingDisabled, OriginRequestPolicy: allViewerExceptHost, AllowedMethods: []string{"GET", "HEAD"},
					Warnings: []string{"the pattern also matches other ten-character paths of the site, such as /robots.txt and /index.html, which would then reach the resolver (404): check the site has none, or use --path-prefix"},
				},
				evidence:  []string{"points at CloudFront distribution E2QWRUHAPOMQZL", "(behavior default (*)) to origin site-bucket"},
				actionHas: []string{"add to distribution E2QWRUHAPOMQZL a cache behavior /?????????? at precedence 1", "keep the distribution"}},
		},
		{
			name:  "route 53 alias to a distribution of the account",
			facts: facts(accountZone(RecordSet{Name: tDomain, Type: "A", AliasTarget: tCFDomain, AliasZoneID: "Z2FDTNDATAQYW2"}), addresses("198.51.100.10"), site([]string{tDomain})),
			want:  want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1, evidence: []string{"Route 53 A alias record"}},
		},
		{
			name:  "cname to a distribution of another account",
			facts: facts(cnameTo(tCFDomain)),
			want: want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1,
				evidence: []string{"which is not a distribution in this account"}, actionHas: []string{"ask the owner of CloudFront distribution " + tCFDomain}},
		},
		{
			name:  "distribution without the domain as alternate name",
			facts: facts(cnameTo(tCFDomain), site([]string{"www.example.com"}), certificate("us-east-1", "ISSUED", "*.example.com")),
			want: want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 2,
				actionHas: []string{"add go.example.com as an alternate domain name of distribution E2QWRUHAPOMQZL", "arn:aws:acm:us-east-1:123456789012:certificate/ISSUED in us-east-1 covers it"}},
		},
		{
			name:  "distribution already routes short links to the resolver",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain}, Behavior{PathPattern: "/??????????", OriginID: "linoone-resolver"})),
			want: want{kind: UseCustomDomain, vars: domainVars(tDomain, true, ""), baseURL: "https://go.example.com",
				evidence: []string{"(behavior /??????????) to origin linoone-resolver (" + tAPIHost + "): the resolver", "CloudFront terminates TLS"}},
		},
		{
			name:  "distribution routes to the resolver but lacks the alias",
			facts: facts(cnameTo(tCFDomain), site([]string{"www.example.com"}, Behavior{PathPattern: "/??????????", OriginID: "linoone-resolver"})),
			want: want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"as an alternate domain name"},
				cloudFront: &CloudFrontChange{
					DistributionID: "E2QWRUHAPOMQZL", DistributionDomain: tCFDomain, AddAlias: tDomain, PathPattern: "/??????????",
					OriginID: "linoone-resolver", OriginDomain: tAPIHost, OriginProtocol: "https-only",
					CachePolicy: cachingDisabled, OriginRequestPolicy: allViewerExceptHost, AllowedMethods: []string{"GET", "HEAD"},
				}},
		},
		{
			name:  "distribution routes to the resolver, probe fails",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain}, Behavior{PathPattern: "/??????????", OriginID: "linoone-resolver"}), probe(Probe{Status: 502})),
			want:  want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"Host header must not be forwarded"}},
		},
		{
			name:  "existing ten-character behavior points elsewhere",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain}, Behavior{PathPattern: "/??????????", OriginID: "app-api"})),
			want: want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1,
				actionHas: []string{"point the existing cache behavior /?????????? at a new origin linoone-resolver"}},
		},
		{
			name:  "catch-all behavior before the default gets precedence 0",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain}, Behavior{PathPattern: "*", OriginID: "app-api"})),
			want:  want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"at precedence 0"}},
		},
		{
			name:  "prefixed short links through cloudfront",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain}, Behavior{PathPattern: "/s/??????????", OriginID: "linoone-resolver"}), func(f *Facts) { f.PathPrefix = "s" }),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1,
				actionHas: []string{"https://go.example.com/s/", "without --path-prefix"}},
		},
		{
			name:  "prefix requested, behavior to add",
			facts: facts(cnameTo(tCFDomain), site([]string{tDomain}), func(f *Facts) { f.PathPrefix = "s" }),
			want:  want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"a cache behavior /s/?????????? at precedence 1"}},
		},
		{
			name:  "cloudfront before the resolver api exists",
			facts: facts(noAPI, cnameTo(tCFDomain), site([]string{tDomain})),
			want:  want{kind: AddCloudFrontBehavior, vars: domainVars(tDomain, false, ""), baseURL: "", actions: 1, nextSteps: 1, actionHas: []string{"new origin linoone-resolver (unknown"}},
		},

		// --- DNS in a Route 53 zone of this account ---
		{
			name:  "account zone, domain name mapped, alias record missing",
			facts: facts(accountZone(), apiDomain(resolverMapping(""))),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				record:    &DNSRecord{Zone: "example.com", HostedZoneID: tZoneID, Name: tDomain, Type: "A", Value: tTarget, AliasHostedZoneID: "Z1UJRXOUMOOFQ8"},
				actionHas: []string{"create in Route 53 zone example.com (Z0EXAMPLE4KQ2T) an A alias record go.example.com -> " + tTarget}},
		},
		{
			name:  "account zone, dual-stack domain name",
			facts: facts(accountZone(), apiDomain(resolverMapping("")), func(f *Facts) { f.APIDomains[0].IPAddressType = "dualstack" }),
			want:  want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, actionHas: []string{"A and AAAA alias records"}},
		},
		{
			name:  "account zone, domain name mapped to another api",
			facts: facts(accountZone(), apiDomain(otherMapping())),
			want:  want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 2, actionHas: []string{"already serves other APIs", "create in Route 53 zone"}},
		},
		{
			name:  "account zone, nothing yet, certificate issued",
			facts: facts(accountZone(), certificate(tRegion, "ISSUED", tDomain)),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, "arn:aws:acm:us-east-1:123456789012:certificate/ISSUED"), baseURL: tEndpoint, nextSteps: 2, noRecord: true,
				evidence: []string{"ACM certificate arn:aws:acm:us-east-1:123456789012:certificate/ISSUED (ISSUED) in us-east-1 covers go.example.com"}},
		},
		{
			name:  "account zone, nothing yet, certificate only in another region",
			facts: facts(accountZone(), certificate("eu-west-1", "ISSUED", tDomain)),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"request an ACM certificate for go.example.com in us-east-1"}},
		},
		{
			name:  "account zone, nothing yet, certificate pending validation",
			facts: facts(accountZone(), certificate(tRegion, "PENDING_VALIDATION", tDomain)),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"complete DNS validation of ACM certificate"}},
		},
		{
			name:  "account zone, nothing yet, no certificate",
			facts: facts(accountZone()),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"request an ACM certificate", "in Route 53 zone example.com"}},
		},
		{
			name:  "account zone, name already in use elsewhere",
			facts: facts(accountZone(RecordSet{Name: tDomain, Type: "CNAME", TTL: 300, Values: []string{"links.hosted-shortener.example.net"}}), cnameTo("links.hosted-shortener.example.net")),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 1, noRecord: true, actionHas: []string{"already in use (CNAME links.hosted-shortener.example.net)"}},
		},
		{
			// The alias discovery asked for exists; public DNS still has the old answer cached.
			name: "account zone, the alias record exists, public DNS not caught up",
			facts: facts(accountZone(RecordSet{Name: tDomain, Type: "A", AliasTarget: tTarget + ".", AliasZoneID: "Z1UJRXOUMOOFQ8"}),
				apiDomain(resolverMapping(""))),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, noRecord: true,
				actionHas: []string{"wait until public DNS answers"}},
		},
		{
			name:  "account zone, name in use, domain name exists",
			facts: facts(accountZone(), addresses("203.0.113.7"), targetAddresses, apiDomain(resolverMapping(""))),
			want: want{kind: UseAPIEndpoint, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				record: &DNSRecord{Zone: "example.com", HostedZoneID: tZoneID, Name: tDomain, Type: "A", Value: tTarget, AliasHostedZoneID: "Z1UJRXOUMOOFQ8", Replaces: []string{"A 203.0.113.7"}}},
		},

		// --- DNS outside the account ---
		{
			name:  "external dns, domain name exists",
			facts: facts(apiDomain(resolverMapping(""))),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				record:    &DNSRecord{Zone: "example.com", Name: tDomain, Type: "CNAME", Value: tTarget, TTL: 300},
				actionHas: []string{"ask whoever manages DNS for zone example.com to create go.example.com 300 IN CNAME " + tTarget + ", then re-run discovery"}},
		},
		{
			name:  "external dns, name resolves elsewhere today",
			facts: facts(addresses("203.0.113.7"), apiDomain(resolverMapping(""))),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				record: &DNSRecord{Zone: "example.com", Name: tDomain, Type: "CNAME", Value: tTarget, TTL: 300, Replaces: []string{"A 203.0.113.7"}}, actionHas: []string{"(replacing A 203.0.113.7)"}},
		},
		{
			name:  "external dns, alias answers other addresses than the target",
			facts: facts(addresses("192.0.2.10", "203.0.113.9"), targetAddresses, apiDomain(resolverMapping(""))),
			want:  want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1},
		},
		{
			name: "external dns at the zone apex",
			facts: facts(func(f *Facts) {
				f.Domain = "example.com"
				f.APIDomains = []APIDomain{{Name: "example.com", Target: tTarget, CertificateARN: tGoCert, Mappings: []APIMapping{resolverMapping("")}}}
			}),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars("example.com", false, tGoCert), baseURL: tEndpoint, actions: 1,
				record: &DNSRecord{Zone: "example.com", Name: "example.com", Type: "ALIAS", Value: tTarget, TTL: 300, Note: "zone apex: a CNAME is not allowed here; use the DNS provider's ALIAS, ANAME or flattened CNAME record"}},
		},
		{
			name:  "external dns, domain name mapped to another api",
			facts: facts(apiDomain(otherMapping())),
			want:  want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 2, actionHas: []string{"already serves other APIs", "IN CNAME"}},
		},
		{
			name:  "external dns, no domain name yet, certificate issued",
			facts: facts(certificate(tRegion, "ISSUED", "*.example.com")),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, "arn:aws:acm:us-east-1:123456789012:certificate/ISSUED"), baseURL: tEndpoint, actions: 2,
				actionHas: []string{"run terraform apply with these variables", "re-run discovery for the exact CNAME value"}},
		},
		{
			name:  "external dns, no domain name, no certificate",
			facts: facts(),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 3,
				actionHas: []string{"request an ACM certificate for go.example.com in us-east-1", "in zone example.com", "once the certificate is issued"}},
		},
		{
			name:  "account zone not delegated counts as external",
			facts: facts(undelegatedZone, apiDomain(resolverMapping(""))),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				evidence: []string{"but public DNS delegates example.com to ns1.dns-provider.test, ns2.dns-provider.test"}},
		},
		{
			name: "account zone for another level than public dns",
			facts: facts(apiDomain(resolverMapping("")), func(f *Facts) {
				f.HostedZones = []HostedZone{{ID: "Z0GO", Name: "go.example.com", NameServers: tRoute53NS}}
			}),
			want: want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1,
				evidence: []string{"Route 53 zone go.example.com (Z0GO) is in this account, but public DNS serves go.example.com from zone example.com"}},
		},
		{
			name:  "external dns with no public zone found",
			facts: facts(func(f *Facts) { f.PublicZone = PublicZone{} }, apiDomain(resolverMapping(""))),
			want:  want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, evidence: []string{"no zone found"}, actionHas: []string{"zone unknown"}},
		},
		{
			name:  "distribution lists the domain but dns points elsewhere",
			facts: facts(site([]string{tDomain}), apiDomain(resolverMapping(""))),
			want:  want{kind: ExternalDNSActionRequired, vars: domainVars(tDomain, false, tGoCert), baseURL: tEndpoint, actions: 1, evidence: []string{"lists go.example.com as an alternate domain name, but DNS does not point at it"}},
		},

		// --- the resolver API's own endpoint ---
		{
			name:  "execute-api endpoint disabled while no custom domain is proven",
			facts: facts(noDomain, func(f *Facts) { f.ResolverAPI.ExecuteAPIDisabled = true }),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: tEndpoint, actions: 1, actionHas: []string{"execute-api endpoint disabled"}},
		},
		{
			name:  "execute-api endpoint disabled behind a proven custom domain",
			facts: facts(cnameTo(tTarget), apiDomain(resolverMapping("")), func(f *Facts) { f.ResolverAPI.ExecuteAPIDisabled = true }),
			want:  want{kind: UseCustomDomain, vars: domainVars(tDomain, true, tGoCert), baseURL: "https://go.example.com"},
		},
		{
			name:  "api id without api details gives the computed endpoint",
			facts: facts(noDomain, func(f *Facts) { f.ResolverAPI = nil; f.Region = "cn-north-1" }),
			want:  want{kind: UseAPIEndpoint, vars: domainVars("", false, ""), baseURL: "https://a1b2c3d4e5.execute-api.cn-north-1.amazonaws.com.cn"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.bus = notChecked
			check(t, Decide(tt.facts), tt.want)
		})
	}
}

func TestDecideBus(t *testing.T) {
	tests := []struct {
		name  string
		facts Facts
		want  want
	}{
		{
			name:  "no bus given",
			facts: facts(noDomain),
			want:  want{bus: BusDecision{Status: BusNotChecked}, vars: domainVars("", false, "")},
		},
		{
			name:  "shared bus found by name",
			facts: facts(noDomain, bus(tBus, true)),
			want: want{bus: BusDecision{Status: BusImport, Name: tBus, ARN: tBusARN},
				vars: TerraformVars{CustomDomainName: strp(""), CustomDomainRoutable: boolp(false), CustomDomainCertificateARN: strp(""), EventBusName: strp(tBus), CreateBus: boolp(false)}},
		},
		{
			name:  "shared bus found by arn",
			facts: facts(noDomain, bus(tBusARN, true)),
			want: want{bus: BusDecision{Status: BusImport, Name: tBus, ARN: tBusARN},
				vars: TerraformVars{CustomDomainName: strp(""), CustomDomainRoutable: boolp(false), CustomDomainCertificateARN: strp(""), EventBusName: strp(tBusARN), CreateBus: boolp(false)}},
		},
		{
			name:  "sandbox imports an existing bus too",
			facts: facts(noDomain, bus(tBus, true), sandbox),
			want: want{bus: BusDecision{Status: BusImport, Name: tBus, ARN: tBusARN},
				vars: TerraformVars{CustomDomainName: strp(""), CustomDomainRoutable: boolp(false), CustomDomainCertificateARN: strp(""), EventBusName: strp(tBus), CreateBus: boolp(false)}},
		},
		{
			name:  "shared bus missing",
			facts: facts(noDomain, bus(tBus, false)),
			want:  want{bus: BusDecision{Status: BusMissing, Name: tBus}, vars: domainVars("", false, ""), actions: 1, actionHas: []string{"the shared event bus shared-engagement was not found in us-east-1"}},
		},
		{
			name:  "shared bus arn missing",
			facts: facts(noDomain, bus(tBusARN, false)),
			want:  want{bus: BusDecision{Status: BusMissing, Name: tBus, ARN: tBusARN}, vars: domainVars("", false, ""), actions: 1},
		},
		{
			name:  "sandbox creates a missing bus",
			facts: facts(noDomain, bus("linoone-sandbox", false), sandbox),
			want: want{bus: BusDecision{Status: BusCreate, Name: "linoone-sandbox"},
				vars: TerraformVars{CustomDomainName: strp(""), CustomDomainRoutable: boolp(false), CustomDomainCertificateARN: strp(""), EventBusName: strp("linoone-sandbox"), CreateBus: boolp(true)}},
		},
		{
			name:  "sandbox creates a missing bus named by arn",
			facts: facts(noDomain, bus(tBusARN, false), sandbox),
			want: want{bus: BusDecision{Status: BusCreate, Name: tBus},
				vars: TerraformVars{CustomDomainName: strp(""), CustomDomainRoutable: boolp(false), CustomDomainCertificateARN: strp(""), EventBusName: strp(tBus), CreateBus: boolp(true)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.kind = UseAPIEndpoint
			tt.want.baseURL = tEndpoint
			check(t, Decide(tt.facts), tt.want)
		})
	}
}

func check(t *testing.T, got Decision, w want) {
	t.Helper()
	if got.Kind != w.kind {
		t.Errorf("kind = %s, want %s\nevidence:\n  %s\nactions:\n  %s", got.Kind, w.kind, strings.Join(got.Evidence, "\n  "), strings.Join(got.Actions, "\n  "))
	}
	if diff := cmp.Diff(w.vars, got.TerraformVars); diff != "" {
		t.Errorf("terraform vars (-want +got):\n%s", diff)
	}
	if len(got.Actions) != w.actions || got.ActionRequired != (w.actions > 0) {
		t.Errorf("%d actions (action_required %v), want %d:\n  %s", len(got.Actions), got.ActionRequired, w.actions, strings.Join(got.Actions, "\n  "))
	}
	if len(got.NextSteps) != w.nextSteps {
		t.Errorf("%d next steps, want %d:\n  %s", len(got.NextSteps), w.nextSteps, strings.Join(got.NextSteps, "\n  "))
	}
	if got.ResolverBaseURL != w.baseURL {
		t.Errorf("resolver base URL = %q, want %q", got.ResolverBaseURL, w.baseURL)
	}
	if diff := cmp.Diff(w.bus, got.Bus); diff != "" {
		t.Errorf("bus (-want +got):\n%s", diff)
	}
	if w.record != nil {
		if diff := cmp.Diff(w.record, got.Record); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
	}
	if w.noRecord && got.Record != nil {
		t.Errorf("record = %+v, want none", got.Record)
	}
	if w.cloudFront != nil {
		if diff := cmp.Diff(w.cloudFront, got.CloudFront); diff != "" {
			t.Errorf("cloudfront (-want +got):\n%s", diff)
		}
	}
	if (got.Kind == AddCloudFrontBehavior) != (got.CloudFront != nil) {
		t.Errorf("cloudfront change %+v with decision %s", got.CloudFront, got.Kind)
	}
	for _, s := range w.evidence {
		if !containsPart(got.Evidence, s) {
			t.Errorf("no evidence contains %q:\n  %s", s, strings.Join(got.Evidence, "\n  "))
		}
	}
	for _, s := range w.actionHas {
		if !containsPart(got.Actions, s) {
			t.Errorf("no action contains %q:\n  %s", s, strings.Join(got.Actions, "\n  "))
		}
	}
}

func containsPart(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

func TestDecideIsPure(t *testing.T) {
	f := facts(accountZone(), addresses(tAPIGWAddrs...), targetAddresses, apiDomain(resolverMapping("")), site([]string{tDomain}), bus(tBus, true))
	before := facts(accountZone(), addresses(tAPIGWAddrs...), targetAddresses, apiDomain(resolverMapping("")), site([]string{tDomain}), bus(tBus, true))
	first, second := Decide(f), Decide(f)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two decisions differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(before, f); diff != "" {
		t.Errorf("Decide changed its facts (-before +after):\n%s", diff)
	}
}

func TestEveryDecisionStatesItsDomainVariables(t *testing.T) {
	for _, f := range []Facts{facts(), facts(noDomain), facts(cnameTo(tCFDomain)), facts(cnameTo(tTarget), apiDomain(resolverMapping("")))} {
		d := Decide(f)
		v := d.TerraformVars
		if v.CustomDomainName == nil || v.CustomDomainRoutable == nil || v.CustomDomainCertificateARN == nil {
			t.Errorf("%s: domain variables not all decided: %+v", d.Kind, v)
			continue
		}
		if *v.CustomDomainRoutable != (d.Kind == UseCustomDomain) {
			t.Errorf("%s: custom_domain_routable = %v", d.Kind, *v.CustomDomainRoutable)
		}
		if *v.CustomDomainName == "" && *v.CustomDomainCertificateARN != "" {
			t.Errorf("%s: a certificate without a domain name", d.Kind)
		}
	}
}

func TestPathMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"/??????????", "/AbCdEfGh12", true},
		{"/??????????", "/robots.txt", true},
		{"/??????????", "/AbCdEfGh1", false},
		{"/??????????", "/AbCdEfGh123", false},
		{"??????????", "/AbCdEfGh12", true},
		{"/api/*", "/api/v1/x", true},
		{"/api/*", "/AbCdEfGh12", false},
		{"*", "/AbCdEfGh12", true},
		{"/*.jpg", "/a/b.jpg", true},
		{"/*.jpg", "/a/b.png", false},
		{"/s/??????????", "/s/AbCdEfGh12", true},
		{"/S/*", "/s/AbCdEfGh12", false},
		{"/a*b*c", "/aXbYc", true},
		{"/a*b*c", "/aXbY", false},
	}
	for _, tt := range tests {
		if got := pathMatch(tt.pattern, tt.path); got != tt.want {
			t.Errorf("pathMatch(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"go.example.com", "GO.example.com.", true},
		{"*.example.com", "go.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "a.go.example.com", false},
		{"", "go.example.com", false},
	}
	for _, tt := range tests {
		if got := covers(tt.pattern, tt.name); got != tt.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

// TestDecisionCoreIsPure keeps the decision files free of I/O: standard
// library only, no network clients, no file system, no AWS SDK.
func TestDecisionCoreIsPure(t *testing.T) {
	forbidden := map[string]bool{"net/http": true, "os": true, "os/exec": true, "io/fs": true, "log": true, "time": true}
	for _, file := range []string{"facts.go", "decision.go", "decide.go", "validate.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", file, err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.Split(path, "/")[0], ".") || forbidden[path] {
				t.Errorf("%s imports %s", file, path)
			}
		}
	}
}
