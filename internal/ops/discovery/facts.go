// Package discovery decides how Linoone's public resolver is reached in one AWS
// environment, and whether the shared event bus is imported or (sandbox only)
// created.
//
// The adapters in awsfacts (read-only AWS calls) and dnscheck (public DNS and an
// optional HTTPS probe) collect Facts; Decide judges them without any I/O and
// returns one of four decisions: use-custom-domain, add-cloudfront-behavior,
// external-dns-action-required or use-api-endpoint, with its evidence, the
// actions a person must take and the Terraform variables it settles.
// discoverycli wires both into the `linoone discover` command. This package
// imports only the standard library, so the adapters can speak its types. The
// procedure is written down in rules/infrastructure-discovery.md.
package discovery

// Facts is everything discovery learned about one environment. Host names are
// lower case without a trailing dot.
type Facts struct {
	// Domain is the requested custom domain; "" means none was requested.
	Domain string
	// Region is the AWS region of the resolver API.
	Region string
	// ResolverAPIID is the API Gateway id of the resolver HTTP API; "" when it
	// is not deployed yet.
	ResolverAPIID string
	// PathPrefix is an optional path segment in front of the token; "" = none.
	PathPrefix string
	// ProbeToken is the token the HTTPS probe asked for; "" = no probe.
	ProbeToken string
	// Sandbox allows the stack to create the bus when it is missing.
	Sandbox bool

	// ResolverAPI is the resolver API as API Gateway describes it; nil when
	// no id was given.
	ResolverAPI *API
	// HostedZones are the public Route 53 zones of the account whose name is
	// Domain or one of its parents.
	HostedZones []HostedZone
	// PublicDNS is how public DNS answers for Domain.
	PublicDNS Resolution
	// PublicZone is the zone that serves Domain in public DNS.
	PublicZone PublicZone
	// TargetDNS holds the public DNS answers for API Gateway target domain
	// names, keyed by target name.
	TargetDNS map[string]Resolution
	// Distributions are the CloudFront distributions of the account.
	Distributions []Distribution
	// APIDomains are the API Gateway v2 custom domain names in Region whose
	// name is Domain or a wildcard covering it.
	APIDomains []APIDomain
	// Certificates are ACM certificates in Region and in us-east-1.
	Certificates []Certificate
	// Bus is what EventBridge said about the requested bus.
	Bus Bus
	// Probe is the HTTPS probe result; nil when no probe ran.
	Probe *Probe
}

// Resolution is a public DNS answer for one name.
type Resolution struct {
	Name string
	// Chain lists the CNAME targets in the order they were followed.
	Chain []string
	// Addresses are the A and AAAA answers at the end of the chain.
	Addresses []string
	// NXDomain is true when the name (or the end of its chain) does not exist.
	NXDomain bool
}

// PublicZone is the DNS zone that serves a name in public DNS.
type PublicZone struct {
	Name        string
	NameServers []string
}

// HostedZone is a public Route 53 hosted zone of the account.
type HostedZone struct {
	ID   string
	Name string
	// NameServers are the values of the zone's apex NS record.
	NameServers []string
	// Records are the record sets named exactly Facts.Domain.
	Records []RecordSet
}

// RecordSet is one Route 53 record set.
type RecordSet struct {
	Name   string
	Type   string
	TTL    int64
	Values []string
	// AliasTarget and AliasZoneID are set for alias records.
	AliasTarget string
	AliasZoneID string
}

// Distribution is a CloudFront distribution.
type Distribution struct {
	ID         string
	DomainName string
	Status     string
	Enabled    bool
	Aliases    []string
	Origins    []Origin
	// DefaultOriginID is the target origin of the default cache behavior.
	DefaultOriginID string
	// Behaviors are the cache behaviors in precedence order.
	Behaviors []Behavior
}

// Origin is a CloudFront origin.
type Origin struct {
	ID         string
	DomainName string
	Path       string
}

// Behavior is a CloudFront cache behavior.
type Behavior struct {
	PathPattern string
	OriginID    string
}

// APIDomain is an API Gateway v2 custom domain name.
type APIDomain struct {
	// Name is the domain name; it may be a wildcard such as *.example.com.
	Name string
	// Target is the regional API Gateway domain name DNS must point at.
	Target string
	// TargetZoneID is the Route 53 hosted zone id of Target, for alias records.
	TargetZoneID   string
	EndpointType   string
	Status         string
	CertificateARN string
	// IPAddressType is "ipv4" or "dualstack".
	IPAddressType string
	Mappings      []APIMapping
}

// APIMapping maps a path key of a custom domain name to an API stage.
type APIMapping struct {
	APIID string
	Stage string
	Key   string
}

// API is an API Gateway v2 API.
type API struct {
	ID           string
	Name         string
	Endpoint     string
	ProtocolType string
	// ExecuteAPIDisabled is true when the default execute-api endpoint is off.
	ExecuteAPIDisabled bool
}

// Certificate is an ACM certificate.
type Certificate struct {
	ARN        string
	Region     string
	DomainName string
	SANs       []string
	Status     string
}

// Bus is what EventBridge said about the requested event bus.
type Bus struct {
	// Requested is the name or ARN given; "" means the bus was not checked.
	Requested string
	Found     bool
	Name      string
	ARN       string
}

// Probe is the answer to GET https://<domain>/<token>, redirects not followed.
type Probe struct {
	URL      string
	Status   int
	Location string
	// RequestID is the apigw-requestid response header, when present.
	RequestID string
	// ContentType is the answer's media type (the resolver answers an unknown token
	// with application/problem+json; API Gateway's own "Not Found" is JSON).
	ContentType string
	// Err describes why no HTTP answer arrived.
	Err string
}
