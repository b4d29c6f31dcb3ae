package discovery

// Kind is the custom-domain decision.
type Kind string

// The four decisions discovery can reach.
const (
	// UseCustomDomain: DNS proved to route the domain to the resolver.
	UseCustomDomain Kind = "use-custom-domain"
	// AddCloudFrontBehavior: the domain is served by CloudFront; add a
	// behavior and origin for the short-link path instead of replacing it.
	AddCloudFrontBehavior Kind = "add-cloudfront-behavior"
	// ExternalDNSActionRequired: DNS is managed outside the account; a person
	// must create the record shown.
	ExternalDNSActionRequired Kind = "external-dns-action-required"
	// UseAPIEndpoint: no custom domain is proven; short URLs use the resolver
	// API's own execute-api endpoint.
	UseAPIEndpoint Kind = "use-api-endpoint"
)

// BusStatus is the event bus decision.
type BusStatus string

// Event bus decisions.
const (
	// BusImport: the shared bus exists; the stack imports it.
	BusImport BusStatus = "import"
	// BusCreate: sandbox only; the stack creates the bus.
	BusCreate BusStatus = "create"
	// BusMissing: the shared bus does not exist; a person must act.
	BusMissing BusStatus = "missing"
	// BusNotChecked: no bus was given.
	BusNotChecked BusStatus = "not-checked"
)

// Decision is what discovery concluded.
type Decision struct {
	Kind   Kind   `json:"decision"`
	Domain string `json:"domain,omitempty"`
	Region string `json:"region"`
	// ResolverBaseURL is where short URLs start; "" until the resolver API
	// exists.
	ResolverBaseURL string `json:"resolver_base_url"`
	// APIEndpoint is the resolver API's execute-api endpoint; "" when unknown.
	APIEndpoint string `json:"api_endpoint,omitempty"`
	// Evidence lists the findings the decision rests on.
	Evidence []string `json:"evidence"`
	// ActionRequired is true when a person must act (Actions is not empty).
	ActionRequired bool `json:"action_required"`
	// Actions are what a person must do before the environment is ready;
	// empty means nothing is waiting for a person.
	Actions []string `json:"actions"`
	// NextSteps are what automation does next (terraform apply, a re-run).
	NextSteps []string `json:"next_steps,omitempty"`
	// Record is the DNS record to create, when one is needed.
	Record *DNSRecord `json:"record,omitempty"`
	// CloudFront is the behavior and origin to add, for add-cloudfront-behavior.
	CloudFront *CloudFrontChange `json:"cloudfront,omitempty"`
	Bus        BusDecision       `json:"bus"`
	// TerraformVars holds exactly the variables this run decided.
	TerraformVars TerraformVars `json:"terraform_vars"`
}

// DNSRecord is a DNS record that must be created.
type DNSRecord struct {
	// Zone is the public zone that must hold the record.
	Zone string `json:"zone,omitempty"`
	// HostedZoneID is set when the zone is a Route 53 zone of this account.
	HostedZoneID string `json:"hosted_zone_id,omitempty"`
	Name         string `json:"name"`
	// Type is CNAME, ALIAS (a provider's flattened CNAME at a zone apex), or
	// A/AAAA for a Route 53 alias record.
	Type string `json:"type"`
	// Value is the target; "" while it is not known yet (see Note).
	Value string `json:"value"`
	// AliasHostedZoneID is the hosted zone id of the target for Route 53 alias
	// records.
	AliasHostedZoneID string `json:"alias_hosted_zone_id,omitempty"`
	TTL               int    `json:"ttl,omitempty"`
	Note              string `json:"note,omitempty"`
	// Replaces lists what the name answers today, when the record replaces it.
	Replaces []string `json:"replaces,omitempty"`
}

// CloudFrontChange is the cache behavior and origin to add to a distribution.
type CloudFrontChange struct {
	// DistributionID is "" when the distribution is not in this account.
	DistributionID     string `json:"distribution_id"`
	DistributionDomain string `json:"distribution_domain"`
	// AddAlias is the alternate domain name to add to the distribution; ""
	// when it already has one covering the domain.
	AddAlias string `json:"add_alias,omitempty"`
	// AddBehavior is false when a behavior already sends short links to the
	// resolver; the fields below then describe what it must look like.
	AddBehavior         bool     `json:"add_behavior"`
	PathPattern         string   `json:"path_pattern"`
	Precedence          int      `json:"precedence"`
	OriginID            string   `json:"origin_id"`
	OriginDomain        string   `json:"origin_domain"`
	OriginProtocol      string   `json:"origin_protocol_policy"`
	CachePolicy         string   `json:"cache_policy"`
	OriginRequestPolicy string   `json:"origin_request_policy"`
	AllowedMethods      []string `json:"allowed_methods"`
	Warnings            []string `json:"warnings,omitempty"`
}

// BusDecision is the event bus part of the decision.
type BusDecision struct {
	Status BusStatus `json:"status"`
	Name   string    `json:"name,omitempty"`
	ARN    string    `json:"arn,omitempty"`
}

// TerraformVars are the Terraform variables discovery settles. A nil field was
// not decided by this run and is left out of the JSON output.
type TerraformVars struct {
	CustomDomainName           *string `json:"custom_domain_name,omitempty"`
	CustomDomainRoutable       *bool   `json:"custom_domain_routable,omitempty"`
	CustomDomainCertificateARN *string `json:"custom_domain_certificate_arn,omitempty"`
	EventBusName               *string `json:"event_bus_name,omitempty"`
	CreateBus                  *bool   `json:"create_bus,omitempty"`
}
