package discovery

import (
	"fmt"
	"slices"
	"strings"
)

const (
	// sampleToken stands for any token when asking which CloudFront behavior
	// serves a short-link path.
	sampleToken = "AbCdEfGh12"
	// tokenPattern is a CloudFront path pattern matching exactly ten characters.
	tokenPattern         = "??????????"
	cloudFrontSuffix     = ".cloudfront.net"
	resolverOriginID     = "linoone-resolver"
	cachingDisabled      = "Managed-CachingDisabled (4135ea2d-6df8-44a3-9df3-4b5a84be39ad)"
	allViewerExceptHost  = "Managed-AllViewerExceptHostHeader (b689b0a8-53d0-40ab-baf2-68738e2966ac)"
	recordTTL            = 300
	certIssued           = "ISSUED"
	certPending          = "PENDING_VALIDATION"
	cloudFrontCertRegion = "us-east-1"
)

// Decide judges the facts. It is a pure function: same facts, same decision.
func Decide(f Facts) Decision {
	j := judge{f: f, domain: norm(f.Domain)}
	d := Decision{
		Domain:      j.domain,
		Region:      f.Region,
		APIEndpoint: apiEndpoint(f),
		Evidence:    []string{},
		Actions:     []string{},
	}
	j.describeAPI(&d)
	j.decideBus(&d)
	j.decideDomain(&d)
	if d.Kind != UseCustomDomain {
		d.ResolverBaseURL = d.APIEndpoint
		if d.APIEndpoint == "" {
			d.NextSteps = append(d.NextSteps, "the resolver base URL is the resolver API endpoint, known once the API exists (terraform output); re-run discovery with --resolver-api-id after the first apply")
		}
		if f.ResolverAPI != nil && f.ResolverAPI.ExecuteAPIDisabled {
			d.Actions = append(d.Actions, fmt.Sprintf("the resolver API %s has its execute-api endpoint disabled, so %s does not answer: enable it until a custom domain is proven, then re-run discovery", f.ResolverAPI.ID, d.APIEndpoint))
		}
	}
	d.ActionRequired = len(d.Actions) > 0
	return d
}

// judge carries the facts through the decision rules.
type judge struct {
	f      Facts
	domain string
}

func (j judge) describeAPI(d *Decision) {
	f := j.f
	switch {
	case f.ResolverAPI != nil:
		ev := fmt.Sprintf("resolver API %s (%s, %s) endpoint %s", f.ResolverAPI.ID, f.ResolverAPI.Name, f.ResolverAPI.ProtocolType, d.APIEndpoint)
		if f.ResolverAPI.ExecuteAPIDisabled {
			ev += " (execute-api endpoint disabled)"
		}
		d.Evidence = append(d.Evidence, ev)
	case f.ResolverAPIID != "":
		d.Evidence = append(d.Evidence, fmt.Sprintf("resolver API %s endpoint %s", f.ResolverAPIID, d.APIEndpoint))
	default:
		d.Evidence = append(d.Evidence, "no --resolver-api-id given: the resolver API is taken as not deployed yet")
	}
}

func (j judge) decideBus(d *Decision) {
	f := j.f
	b := f.Bus
	switch {
	case b.Requested == "":
		d.Bus = BusDecision{Status: BusNotChecked}
		d.Evidence = append(d.Evidence, "no --bus given: the event bus was not checked and its Terraform variables are not set")
	case b.Found:
		d.Bus = BusDecision{Status: BusImport, Name: b.Name, ARN: b.ARN}
		d.Evidence = append(d.Evidence, fmt.Sprintf("event bus %s exists (%s): the stack imports it", b.Requested, b.ARN))
		d.setBusVars(b.Requested, false)
	case f.Sandbox:
		name := busName(b.Requested)
		d.Bus = BusDecision{Status: BusCreate, Name: name}
		d.Evidence = append(d.Evidence, fmt.Sprintf("event bus %s does not exist in %s; --sandbox: the stack creates bus %s", b.Requested, f.Region, name))
		d.setBusVars(name, true)
	default:
		d.Bus = BusDecision{Status: BusMissing, Name: busName(b.Requested)}
		if strings.HasPrefix(b.Requested, "arn:") {
			d.Bus.ARN = b.Requested
		}
		d.Evidence = append(d.Evidence, fmt.Sprintf("event bus %s does not exist in %s (or is not visible to these credentials)", b.Requested, f.Region))
		d.Actions = append(d.Actions, fmt.Sprintf("the shared event bus %s was not found in %s: get the right name or ARN from the bus owners (Linoone must not run a per-service bus; only --sandbox creates one), then re-run discovery", b.Requested, f.Region))
	}
}

func (j judge) decideDomain(d *Decision) {
	f := j.f
	if j.domain == "" {
		d.Kind = UseAPIEndpoint
		d.Evidence = append(d.Evidence, "no custom domain requested: short URLs use the resolver API endpoint")
		d.setDomainVars("", false, "")
		return
	}
	d.Evidence = append(d.Evidence, describeDNS(j.domain, f.PublicDNS))
	if f.PublicZone.Name != "" {
		d.Evidence = append(d.Evidence, fmt.Sprintf("public DNS: %s lies in zone %s, served by %s", j.domain, norm(f.PublicZone.Name), joinOr(normAll(f.PublicZone.NameServers), "no name servers")))
	} else {
		d.Evidence = append(d.Evidence, fmt.Sprintf("public DNS: no zone found for %s", j.domain))
	}
	zone, zoneEvidence := j.accountZone()
	d.Evidence = append(d.Evidence, zoneEvidence...)

	dom := j.apiDomain()
	if dom != nil {
		d.Evidence = append(d.Evidence, fmt.Sprintf("API Gateway domain name %s in %s: target %s (%s, %s), certificate %s", norm(dom.Name), f.Region, norm(dom.Target), dom.EndpointType, dom.Status, dom.CertificateARN))
		if ok, why := routesTo(f.PublicDNS, dom.Target, f.TargetDNS[norm(dom.Target)]); ok {
			d.Evidence = append(d.Evidence, why)
			j.routedToAPIGateway(d, dom)
			return
		}
	} else {
		d.Evidence = append(d.Evidence, fmt.Sprintf("no API Gateway custom domain name in %s covers %s", f.Region, j.domain))
	}
	if cf, how := j.cloudFrontName(zone); cf != "" {
		j.cloudFront(d, cf, how)
		return
	}
	j.unusedAliasEvidence(d)
	if zone != nil {
		j.accountDNS(d, zone, dom)
		return
	}
	j.externalDNS(d, dom)
}

// routedToAPIGateway: public DNS reaches the API Gateway custom domain.
func (j judge) routedToAPIGateway(d *Decision, dom *APIDomain) {
	f := j.f
	certVar := j.certVar(dom)
	if f.ResolverAPIID == "" {
		d.Kind = UseAPIEndpoint
		d.Evidence = append(d.Evidence, fmt.Sprintf("no --resolver-api-id given: whether %s maps to the resolver cannot be proven", j.domain))
		d.setDomainVars("", false, "")
		d.NextSteps = append(d.NextSteps, "re-run discovery with --resolver-api-id once the resolver API exists")
		return
	}
	m := j.resolverMapping(dom)
	if m == nil {
		d.Kind = UseAPIEndpoint
		action, ev := j.mappingProblem(dom)
		d.Evidence = append(d.Evidence, ev)
		d.Actions = append(d.Actions, action)
		if len(dom.Mappings) == 0 {
			d.setDomainVars(j.domain, false, certVar)
		} else {
			d.setDomainVars("", false, "")
		}
		return
	}
	d.Evidence = append(d.Evidence, fmt.Sprintf("API mapping %s%s -> API %s stage %s: the resolver", j.domain, keyPath(m.Key), m.APIID, m.Stage))
	if !j.probeProves(d) {
		d.Kind = UseAPIEndpoint
		d.setDomainVars(j.domain, false, certVar)
		d.Actions = append(d.Actions, fmt.Sprintf("https://%s%s/ does not answer like the resolver: check the certificate, the API mapping and the $default stage of %s, then re-run discovery", j.domain, keyPath(m.Key), j.domain))
		return
	}
	if m.Key != "" {
		d.Kind = UseAPIEndpoint
		d.setDomainVars(j.domain, false, certVar)
		d.Actions = append(d.Actions, pathNotCarried(j.domain, m.Key,
			fmt.Sprintf("map the resolver at the root of a domain name (an empty mapping key) instead of under %q", m.Key)))
		return
	}
	d.Kind = UseCustomDomain
	d.ResolverBaseURL = "https://" + j.domain
	d.setDomainVars(j.domain, true, certVar)
	if certVar == "" {
		d.Evidence = append(d.Evidence, fmt.Sprintf("%s is served by the wildcard domain name %s, managed outside this stack: custom_domain_certificate_arn stays empty so the stack creates no second domain name", j.domain, norm(dom.Name)))
	}
	if f.PathPrefix != "" && m.Key != f.PathPrefix {
		d.Evidence = append(d.Evidence, fmt.Sprintf("the requested prefix %q differs from the resolver's API mapping key %q: short URLs follow the mapping", f.PathPrefix, m.Key))
	}
}

// cloudFront: the domain already points at CloudFront; never replace the
// distribution, add a behavior and origin for the short-link path.
func (j judge) cloudFront(d *Decision, cfName, how string) {
	f := j.f
	d.Kind = AddCloudFrontBehavior
	d.setDomainVars(j.domain, false, "")
	pattern := "/" + prefixPath(f.PathPrefix) + tokenPattern
	sample := "/" + prefixPath(f.PathPrefix) + sampleToken
	apiHost := hostOf(apiEndpoint(f))
	change := &CloudFrontChange{
		DistributionDomain:  cfName,
		PathPattern:         pattern,
		OriginID:            resolverOriginID,
		OriginDomain:        apiHost,
		OriginProtocol:      "https-only",
		CachePolicy:         cachingDisabled,
		OriginRequestPolicy: allViewerExceptHost,
		AllowedMethods:      []string{"GET", "HEAD"},
	}
	d.CloudFront = change
	dist := j.distribution(cfName)
	if dist == nil {
		d.Evidence = append(d.Evidence, fmt.Sprintf("%s points at CloudFront %s (%s), which is not a distribution in this account", j.domain, cfName, how))
		change.AddBehavior = true
		change.Warnings = j.patternWarnings(nil, pattern)
		d.Actions = append(d.Actions, fmt.Sprintf("ask the owner of CloudFront distribution %s to add a cache behavior %s with an origin for the resolver (%s), as shown under cloudfront, without replacing the distribution; then re-run discovery", cfName, pattern, orUnknown(apiHost)))
		return
	}
	change.DistributionID = dist.ID
	ev := fmt.Sprintf("%s points at CloudFront distribution %s (%s, %s) in this account; alternate domain names: %s", j.domain, dist.ID, cfName, how, joinOr(dist.Aliases, "none"))
	if !dist.Enabled {
		ev += "; the distribution is disabled"
	}
	d.Evidence = append(d.Evidence, ev)

	aliasOK := slices.ContainsFunc(dist.Aliases, func(a string) bool { return covers(a, j.domain) })
	if !aliasOK {
		change.AddAlias = j.domain
		d.Evidence = append(d.Evidence, fmt.Sprintf("distribution %s has no alternate domain name covering %s, so CloudFront does not serve it", dist.ID, j.domain))
		d.Actions = append(d.Actions, fmt.Sprintf("add %s as an alternate domain name of distribution %s; its viewer certificate must cover it (%s)", j.domain, dist.ID, j.cloudFrontCertificate()))
	}
	origin, behavior, index := servingOrigin(*dist, sample)
	if apiHost != "" && j.resolverHosts()[norm(origin.DomainName)] {
		d.Evidence = append(d.Evidence, fmt.Sprintf("CloudFront sends %s (behavior %s) to origin %s (%s): the resolver", sample, behavior, origin.ID, norm(origin.DomainName)))
		if !aliasOK {
			return
		}
		if !j.probeProves(d) {
			d.Kind = UseAPIEndpoint
			d.CloudFront = nil
			d.Actions = append(d.Actions, fmt.Sprintf("https://%s%s does not answer like the resolver through distribution %s: check its behavior %s, origin %s and the origin request policy (the Host header must not be forwarded), then re-run discovery", j.domain, sample, dist.ID, behavior, origin.ID))
			return
		}
		d.CloudFront = nil
		if f.PathPrefix != "" {
			d.Kind = UseAPIEndpoint
			d.Actions = append(d.Actions, pathNotCarried(j.domain, f.PathPrefix,
				"serve short links at the root of the domain (re-run without --path-prefix once a behavior /"+tokenPattern+" goes to the resolver)"))
			return
		}
		d.Kind = UseCustomDomain
		d.ResolverBaseURL = "https://" + j.domain
		d.setDomainVars(j.domain, true, "")
		d.Evidence = append(d.Evidence, "CloudFront terminates TLS for the domain: custom_domain_certificate_arn stays empty so the stack creates no API Gateway domain name")
		return
	}
	d.Evidence = append(d.Evidence, fmt.Sprintf("CloudFront sends short-link paths such as %s (behavior %s) to origin %s (%s), not to the resolver", sample, behavior, orUnknown(origin.ID), orUnknown(norm(origin.DomainName))))
	change.AddBehavior = true
	change.Precedence = index
	change.Warnings = j.patternWarnings(dist, pattern)
	if behavior == pattern {
		d.Actions = append(d.Actions, fmt.Sprintf("in distribution %s, point the existing cache behavior %s at a new origin %s (%s, HTTPS only, TLSv1.2) with cache policy %s and origin request policy %s; keep the distribution and its other behaviors; then re-run discovery", dist.ID, pattern, resolverOriginID, orUnknown(apiHost), cachingDisabled, allViewerExceptHost))
		return
	}
	d.Actions = append(d.Actions, fmt.Sprintf("add to distribution %s a cache behavior %s at precedence %d with a new origin %s (%s, HTTPS only, TLSv1.2), cache policy %s, origin request policy %s, methods GET and HEAD; keep the distribution and its other behaviors; then re-run discovery", dist.ID, pattern, index, resolverOriginID, orUnknown(apiHost), cachingDisabled, allViewerExceptHost))
}

// accountDNS: the domain's zone is a delegated Route 53 zone of this account.
func (j judge) accountDNS(d *Decision, zone *HostedZone, dom *APIDomain) {
	d.Kind = UseAPIEndpoint
	where := fmt.Sprintf("Route 53 zone %s (%s)", norm(zone.Name), zone.ID)
	existing := j.currentAnswers(zone)
	if dom != nil && aliasesTo(zone.Records, dom.Target) {
		// The record discovery asked for is there; public DNS has not caught up.
		d.setDomainVars(j.domain, false, j.certVar(dom))
		d.Evidence = append(d.Evidence, fmt.Sprintf("%s in %s is already an alias to the resolver's API Gateway domain %s, which public DNS does not answer yet", j.domain, where, norm(dom.Target)))
		d.Actions = append(d.Actions, fmt.Sprintf("wait until public DNS answers %s with the alias record in %s (a cached \"no such name\" lasts up to the zone's negative TTL), then re-run discovery", j.domain, where))
		return
	}
	if len(existing) > 0 {
		d.Evidence = append(d.Evidence, fmt.Sprintf("%s already answers %s: neither the resolver's API Gateway domain nor a CloudFront distribution", j.domain, strings.Join(existing, ", ")))
		if dom != nil {
			d.Record = aliasRecord(zone, dom, j.domain)
			d.Record.Replaces = existing
			d.setDomainVars(j.domain, false, j.certVar(dom))
		} else {
			d.setDomainVars("", false, "")
		}
		d.Actions = append(d.Actions, fmt.Sprintf("%s is already in use (%s): choose another name, or once that content is retired replace its records in %s with an alias to the resolver's API Gateway domain; then re-run discovery", j.domain, strings.Join(existing, ", "), where))
		return
	}
	d.Evidence = append(d.Evidence, fmt.Sprintf("%s has no A, AAAA or CNAME record yet", j.domain))
	if dom != nil {
		d.setDomainVars(j.domain, false, j.certVar(dom))
		if action, ev := j.mappingProblem(dom); action != "" {
			d.Evidence = append(d.Evidence, ev)
			d.Actions = append(d.Actions, action)
		}
		d.Record = aliasRecord(zone, dom, j.domain)
		types := "an A alias record"
		if strings.EqualFold(dom.IPAddressType, "dualstack") {
			types = "A and AAAA alias records"
		}
		d.Actions = append(d.Actions, fmt.Sprintf("create in %s %s %s -> %s (alias hosted zone %s), then re-run discovery", where, types, j.domain, norm(dom.Target), dom.TargetZoneID))
		return
	}
	if issued := j.certificatePlan(d, where); issued != nil {
		d.setDomainVars(j.domain, false, issued.ARN)
		d.NextSteps = append(d.NextSteps,
			fmt.Sprintf("terraform apply with these variables creates API Gateway domain name %s (REGIONAL, TLS 1.2) and maps it to the resolver API", j.domain),
			fmt.Sprintf("then re-run discovery: it prints the exact alias record to create in %s", where))
		return
	}
	d.setDomainVars("", false, "")
}

// externalDNS: nothing routes yet and the domain's DNS is not in this account.
func (j judge) externalDNS(d *Decision, dom *APIDomain) {
	f := j.f
	d.Kind = ExternalDNSActionRequired
	zoneName := norm(f.PublicZone.Name)
	where := "zone " + orUnknown(zoneName)
	d.Evidence = append(d.Evidence, fmt.Sprintf("DNS for %s is managed outside this account (%s)", j.domain, where))
	rec := &DNSRecord{Zone: zoneName, Name: j.domain, Type: "CNAME", TTL: recordTTL, Replaces: currentPublicAnswers(f.PublicDNS)}
	if zoneName == j.domain {
		rec.Type = "ALIAS"
		rec.Note = "zone apex: a CNAME is not allowed here; use the DNS provider's ALIAS, ANAME or flattened CNAME record"
	}
	d.Record = rec
	replacing := ""
	if len(rec.Replaces) > 0 {
		replacing = " (replacing " + strings.Join(rec.Replaces, ", ") + ")"
	}
	if dom != nil {
		rec.Value = norm(dom.Target)
		d.setDomainVars(j.domain, false, j.certVar(dom))
		if action, ev := j.mappingProblem(dom); action != "" {
			d.Evidence = append(d.Evidence, ev)
			d.Actions = append(d.Actions, action)
		}
		d.Actions = append(d.Actions, fmt.Sprintf("ask whoever manages DNS for %s to create %s %d IN %s %s%s, then re-run discovery", where, j.domain, rec.TTL, rec.Type, rec.Value, replacing))
		return
	}
	pending := fmt.Sprintf("value: the target domain name API Gateway assigns to domain name %s (d-….execute-api.%s.%s), known after terraform apply", j.domain, f.Region, dnsSuffix(f.Region))
	if rec.Note == "" {
		rec.Note = pending
	} else {
		rec.Note += "; " + pending
	}
	issued := j.certificatePlan(d, where)
	if issued != nil {
		d.setDomainVars(j.domain, false, issued.ARN)
		d.Actions = append(d.Actions, fmt.Sprintf("run terraform apply with these variables: it creates API Gateway domain name %s (REGIONAL, TLS 1.2) and maps it to the resolver API", j.domain))
	} else {
		d.setDomainVars("", false, "")
		d.Actions = append(d.Actions, fmt.Sprintf("once the certificate is issued, set custom_domain_name = %q and custom_domain_certificate_arn to its ARN and run terraform apply: the stack creates API Gateway domain name %s and maps it to the resolver API", j.domain, j.domain))
	}
	d.Actions = append(d.Actions, fmt.Sprintf("re-run discovery for the exact %s value, then ask whoever manages DNS for %s to create %s %s -> <API Gateway target>%s", rec.Type, where, j.domain, rec.Type, replacing))
}

// certificatePlan looks for a regional ACM certificate covering the domain and
// adds the actions needed when none is issued yet. where names the zone that
// holds the validation record.
func (j judge) certificatePlan(d *Decision, where string) *Certificate {
	f := j.f
	issued, pending := j.certificate(f.Region)
	switch {
	case issued != nil:
		d.Evidence = append(d.Evidence, fmt.Sprintf("ACM certificate %s (ISSUED) in %s covers %s", issued.ARN, f.Region, j.domain))
		return issued
	case pending != nil:
		d.Evidence = append(d.Evidence, fmt.Sprintf("ACM certificate %s in %s covers %s but is %s", pending.ARN, f.Region, j.domain, pending.Status))
		d.Actions = append(d.Actions, fmt.Sprintf("complete DNS validation of ACM certificate %s: create its validation CNAME (aws acm describe-certificate --region %s --certificate-arn %s) in %s", pending.ARN, f.Region, pending.ARN, where))
	default:
		d.Evidence = append(d.Evidence, fmt.Sprintf("no ISSUED ACM certificate in %s covers %s", f.Region, j.domain))
		d.Actions = append(d.Actions, fmt.Sprintf("request an ACM certificate for %s in %s with DNS validation (aws acm request-certificate --region %s --domain-name %s --validation-method DNS) and create its validation CNAME in %s", j.domain, f.Region, f.Region, j.domain, where))
	}
	return nil
}

// probeProves reports whether the probe (when one was asked for) saw the
// resolver answer, adding what it saw to the evidence.
func (j judge) probeProves(d *Decision) bool {
	if j.f.ProbeToken == "" {
		d.Evidence = append(d.Evidence, "no --probe-token given: routing is proven by DNS and configuration, not by a live request")
		return true
	}
	ok, why := probeVerdict(j.f.Probe)
	d.Evidence = append(d.Evidence, why)
	return ok
}

func probeVerdict(p *Probe) (bool, string) {
	if p == nil {
		return false, "probe: did not run"
	}
	if p.Err != "" {
		return false, fmt.Sprintf("probe: GET %s failed: %s", p.URL, p.Err)
	}
	reqID := ""
	if p.RequestID != "" {
		reqID = ", apigw-requestid " + p.RequestID
	}
	switch {
	case p.Status == 302 && p.Location != "":
		return true, fmt.Sprintf("probe: GET %s answered 302 Location %s%s: the resolver", p.URL, p.Location, reqID)
	case p.Status == 404 && p.ContentType == "application/problem+json":
		return true, fmt.Sprintf("probe: GET %s answered 404 problem+json (token unknown to the resolver)%s", p.URL, reqID)
	case p.Status == 404:
		return false, fmt.Sprintf("probe: GET %s answered 404 as %s%s, not the resolver's problem+json: a route that misses (API Gateway's own Not Found, a path the resolver does not serve) answers so too",
			p.URL, orUnknown(p.ContentType), reqID)
	default:
		return false, fmt.Sprintf("probe: GET %s answered %d%s, not the resolver's 302 or 404", p.URL, p.Status, reqID)
	}
}

// accountZone returns the account's Route 53 zone that public DNS really
// delegates the domain to, and evidence about the account's zones.
func (j judge) accountZone() (*HostedZone, []string) {
	f := j.f
	public := norm(f.PublicZone.Name)
	var ev []string
	if len(f.HostedZones) == 0 {
		return nil, []string{fmt.Sprintf("no public Route 53 zone in this account holds %s", j.domain)}
	}
	for i := range f.HostedZones {
		z := &f.HostedZones[i]
		name := norm(z.Name)
		switch {
		case name != public:
			ev = append(ev, fmt.Sprintf("Route 53 zone %s (%s) is in this account, but public DNS serves %s from zone %s", name, z.ID, j.domain, orUnknown(public)))
		case !overlap(z.NameServers, f.PublicZone.NameServers):
			ev = append(ev, fmt.Sprintf("Route 53 zone %s (%s) is in this account, but public DNS delegates %s to %s, not to its name servers %s", name, z.ID, name, joinOr(normAll(f.PublicZone.NameServers), "nothing"), joinOr(normAll(z.NameServers), "(none listed)")))
		default:
			return z, append(ev, fmt.Sprintf("DNS for %s is managed in this account: Route 53 zone %s (%s), delegated to %s", j.domain, name, z.ID, strings.Join(normAll(z.NameServers), ", ")))
		}
	}
	return nil, ev
}

// apiDomain returns the API Gateway custom domain name serving the domain,
// preferring an exact name over a wildcard.
func (j judge) apiDomain() *APIDomain {
	var wildcard *APIDomain
	for i := range j.f.APIDomains {
		dom := &j.f.APIDomains[i]
		if norm(dom.Name) == j.domain {
			return dom
		}
		if wildcard == nil && covers(dom.Name, j.domain) {
			wildcard = dom
		}
	}
	return wildcard
}

// certVar is the certificate the stack needs to manage dom itself: "" for a
// wildcard domain name that is managed elsewhere.
func (j judge) certVar(dom *APIDomain) string {
	if norm(dom.Name) != j.domain {
		return ""
	}
	return dom.CertificateARN
}

// resolverMapping returns dom's API mapping to the resolver, preferring the
// requested path prefix as key.
func (j judge) resolverMapping(dom *APIDomain) *APIMapping {
	if j.f.ResolverAPIID == "" {
		return nil
	}
	var found *APIMapping
	for i := range dom.Mappings {
		m := &dom.Mappings[i]
		if m.APIID != j.f.ResolverAPIID {
			continue
		}
		if m.Key == j.f.PathPrefix {
			return m
		}
		if found == nil {
			found = m
		}
	}
	return found
}

// mappingProblem returns the action (and evidence) needed so that dom maps to
// the resolver; "" when it does or when no resolver API id is known.
func (j judge) mappingProblem(dom *APIDomain) (action, evidence string) {
	f := j.f
	if f.ResolverAPIID == "" {
		return "", ""
	}
	if m := j.resolverMapping(dom); m != nil {
		return "", ""
	}
	name := norm(dom.Name)
	if len(dom.Mappings) == 0 {
		return fmt.Sprintf("API Gateway domain name %s exists outside the stack with no API mapping: import it into the stack (terraform import) or map it to the resolver API %s, stage $default; then re-run discovery", name, f.ResolverAPIID),
			fmt.Sprintf("API Gateway domain name %s has no API mapping", name)
	}
	var others []string
	for _, m := range dom.Mappings {
		others = append(others, fmt.Sprintf("%s%s -> %s", name, keyPath(m.Key), m.APIID))
	}
	return fmt.Sprintf("%s already serves other APIs (%s): map the resolver API %s under a free path key, or choose another domain; then re-run discovery", name, strings.Join(others, ", "), f.ResolverAPIID),
		fmt.Sprintf("API Gateway domain name %s maps %s, not the resolver API %s", name, strings.Join(others, ", "), f.ResolverAPIID)
}

// cloudFrontName returns the CloudFront domain the domain points at, if any,
// and how that was seen.
func (j judge) cloudFrontName(zone *HostedZone) (string, string) {
	for _, n := range j.f.PublicDNS.Chain {
		if strings.HasSuffix(norm(n), cloudFrontSuffix) {
			return norm(n), "public DNS CNAME"
		}
	}
	if zone != nil {
		for _, r := range zone.Records {
			if strings.HasSuffix(norm(r.AliasTarget), cloudFrontSuffix) {
				return norm(r.AliasTarget), fmt.Sprintf("Route 53 %s alias record", r.Type)
			}
		}
	}
	return "", ""
}

func (j judge) distribution(domainName string) *Distribution {
	for i := range j.f.Distributions {
		if norm(j.f.Distributions[i].DomainName) == domainName {
			return &j.f.Distributions[i]
		}
	}
	return nil
}

// unusedAliasEvidence notes distributions that list the domain as an
// alternate name although DNS does not point at them.
func (j judge) unusedAliasEvidence(d *Decision) {
	for _, dist := range j.f.Distributions {
		if slices.ContainsFunc(dist.Aliases, func(a string) bool { return covers(a, j.domain) }) {
			d.Evidence = append(d.Evidence, fmt.Sprintf("CloudFront distribution %s (%s) lists %s as an alternate domain name, but DNS does not point at it", dist.ID, norm(dist.DomainName), j.domain))
		}
	}
}

// resolverHosts are the origin host names that reach the resolver API.
func (j judge) resolverHosts() map[string]bool {
	hosts := map[string]bool{}
	if h := hostOf(apiEndpoint(j.f)); h != "" {
		hosts[h] = true
	}
	for i := range j.f.APIDomains {
		dom := &j.f.APIDomains[i]
		if j.resolverMapping(dom) != nil && dom.Target != "" {
			hosts[norm(dom.Target)] = true
		}
	}
	return hosts
}

func (j judge) patternWarnings(dist *Distribution, pattern string) []string {
	var w []string
	if dist != nil {
		for _, b := range dist.Behaviors {
			if b.PathPattern == pattern {
				w = append(w, fmt.Sprintf("a behavior %s already exists (origin %s): change its origin rather than adding a second one", pattern, b.OriginID))
			}
		}
	}
	if j.f.PathPrefix == "" {
		w = append(w, "the pattern also matches other ten-character paths of the site, such as /robots.txt and /index.html, which would then reach the resolver (404): check the site has none, or use --path-prefix")
	} else {
		w = append(w, fmt.Sprintf("the resolver route is GET /{token}: the /%s prefix must be stripped before the origin (for example a CloudFront Function on viewer requests)", j.f.PathPrefix))
	}
	if hostOf(apiEndpoint(j.f)) == "" {
		w = append(w, "the origin is the resolver API's execute-api host, known once the API exists: re-run discovery with --resolver-api-id")
	}
	return w
}

// cloudFrontCertificate describes the us-east-1 certificate CloudFront needs.
func (j judge) cloudFrontCertificate() string {
	issued, _ := j.certificate(cloudFrontCertRegion)
	if issued != nil {
		return "ACM certificate " + issued.ARN + " in us-east-1 covers it"
	}
	return "no ISSUED ACM certificate in us-east-1 covers it yet: request one there"
}

// certificate returns the first ISSUED and the first PENDING_VALIDATION
// certificate in region covering the domain.
func (j judge) certificate(region string) (issued, pending *Certificate) {
	for i := range j.f.Certificates {
		c := &j.f.Certificates[i]
		if c.Region != region || !certCovers(*c, j.domain) {
			continue
		}
		switch c.Status {
		case certIssued:
			if issued == nil {
				issued = c
			}
		case certPending:
			if pending == nil {
				pending = c
			}
		}
	}
	return issued, pending
}

// currentAnswers lists what the domain answers today, from the account's zone
// and from public DNS.
// aliasesTo reports whether the address records among records are all aliases to
// target, and there is one.
func aliasesTo(records []RecordSet, target string) bool {
	n := 0
	for _, r := range records {
		if r.Type != "A" && r.Type != "AAAA" && r.Type != "CNAME" {
			continue
		}
		if r.AliasTarget == "" || norm(r.AliasTarget) != norm(target) {
			return false
		}
		n++
	}
	return n > 0
}

func (j judge) currentAnswers(zone *HostedZone) []string {
	var out []string
	for _, r := range zone.Records {
		switch {
		case r.Type != "A" && r.Type != "AAAA" && r.Type != "CNAME":
		case r.AliasTarget != "":
			out = append(out, fmt.Sprintf("%s alias %s", r.Type, norm(r.AliasTarget)))
		default:
			for _, v := range r.Values {
				out = append(out, r.Type+" "+norm(v))
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	return currentPublicAnswers(j.f.PublicDNS)
}

func currentPublicAnswers(r Resolution) []string {
	if len(r.Chain) > 0 {
		return []string{"CNAME " + norm(r.Chain[0])}
	}
	var out []string
	for _, a := range r.Addresses {
		if strings.Contains(a, ":") {
			out = append(out, "AAAA "+a)
		} else {
			out = append(out, "A "+a)
		}
	}
	return out
}

func aliasRecord(zone *HostedZone, dom *APIDomain, domain string) *DNSRecord {
	rec := &DNSRecord{
		Zone:              norm(zone.Name),
		HostedZoneID:      zone.ID,
		Name:              domain,
		Type:              "A",
		Value:             norm(dom.Target),
		AliasHostedZoneID: dom.TargetZoneID,
	}
	if strings.EqualFold(dom.IPAddressType, "dualstack") {
		rec.Note = "also create the same alias as type AAAA: the domain name is dual-stack"
	}
	return rec
}

// routesTo reports whether public DNS for a name reaches target, directly by
// CNAME or (for alias records) by answering the target's own addresses.
func routesTo(r Resolution, target string, targetDNS Resolution) (bool, string) {
	t := norm(target)
	if t == "" {
		return false, ""
	}
	for _, n := range r.Chain {
		if norm(n) == t {
			return true, fmt.Sprintf("public DNS: %s is a CNAME to %s", norm(r.Name), t)
		}
	}
	if len(r.Chain) == 0 && len(r.Addresses) > 0 && len(targetDNS.Addresses) > 0 {
		for _, a := range r.Addresses {
			if !slices.Contains(targetDNS.Addresses, a) {
				return false, ""
			}
		}
		return true, fmt.Sprintf("public DNS: %s answers %s, the addresses of %s (alias record)", norm(r.Name), strings.Join(r.Addresses, ", "), t)
	}
	return false, ""
}

func describeDNS(domain string, r Resolution) string {
	chain := ""
	for _, n := range r.Chain {
		chain += " -> CNAME " + norm(n)
	}
	switch {
	case r.NXDomain && chain == "":
		return fmt.Sprintf("public DNS: %s does not exist (NXDOMAIN)", domain)
	case r.NXDomain:
		return fmt.Sprintf("public DNS: %s%s, which does not exist (NXDOMAIN)", domain, chain)
	case len(r.Addresses) == 0:
		return fmt.Sprintf("public DNS: %s%s has no A or AAAA record", domain, chain)
	default:
		return fmt.Sprintf("public DNS: %s%s -> %s", domain, chain, strings.Join(r.Addresses, ", "))
	}
}

// servingOrigin returns the origin CloudFront uses for path, the pattern of the
// behavior that matched and that behavior's precedence.
func servingOrigin(dist Distribution, path string) (Origin, string, int) {
	id, pattern, index := dist.DefaultOriginID, "default (*)", len(dist.Behaviors)
	for i, b := range dist.Behaviors {
		if pathMatch(b.PathPattern, path) {
			id, pattern, index = b.OriginID, b.PathPattern, i
			break
		}
	}
	for _, o := range dist.Origins {
		if o.ID == id {
			return o, pattern, index
		}
	}
	return Origin{ID: id}, pattern, index
}

// pathMatch matches a CloudFront path pattern: * is any run of characters,
// ? exactly one, everything else literal and case-sensitive.
func pathMatch(pattern, path string) bool {
	if !strings.HasPrefix(pattern, "/") {
		pattern = "/" + pattern
	}
	p, s := 0, 0
	star, mark := -1, 0
	for s < len(path) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == path[s]):
			p++
			s++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, s
			p++
		case star >= 0:
			p = star + 1
			mark++
			s = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// covers reports whether a certificate or domain name pattern (possibly
// *.parent) covers name.
func covers(pattern, name string) bool {
	pattern, name = norm(pattern), norm(name)
	if pattern == "" || name == "" {
		return false
	}
	if pattern == name {
		return true
	}
	parent, ok := strings.CutPrefix(pattern, "*.")
	if !ok {
		return false
	}
	first, rest, ok := strings.Cut(name, ".")
	return ok && first != "" && rest == parent
}

func certCovers(c Certificate, name string) bool {
	return covers(c.DomainName, name) || slices.ContainsFunc(c.SANs, func(s string) bool { return covers(s, name) })
}

func apiEndpoint(f Facts) string {
	if f.ResolverAPI != nil && f.ResolverAPI.Endpoint != "" {
		return strings.TrimSuffix(f.ResolverAPI.Endpoint, "/")
	}
	if f.ResolverAPIID == "" {
		return ""
	}
	return "https://" + f.ResolverAPIID + ".execute-api." + f.Region + "." + dnsSuffix(f.Region)
}

func hostOf(endpoint string) string {
	host, _ := strings.CutPrefix(endpoint, "https://")
	host, _, _ = strings.Cut(host, "/")
	return norm(host)
}

func busName(nameOrARN string) string {
	if !strings.HasPrefix(nameOrARN, "arn:") {
		return nameOrARN
	}
	_, name, ok := strings.Cut(nameOrARN, ":event-bus/")
	if !ok {
		return nameOrARN
	}
	return name
}

// pathNotCarried is the action for a resolver reached under a path of the domain:
// the stack's custom_domain_name holds a host only and makes every short URL
// https://<domain>/<token>, so routing proven under /<path> cannot be used as it is.
func pathNotCarried(domain, path, instead string) string {
	return fmt.Sprintf("the resolver answers under https://%s/%s/, but the stack's custom_domain_name is a host only and would make short URLs https://%s/<token>, which that path does not serve: %s, then re-run discovery",
		domain, path, domain, instead)
}

func keyPath(key string) string {
	if key == "" {
		return ""
	}
	return "/" + key
}

func prefixPath(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "/"
}

func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if norm(x) == norm(y) {
				return true
			}
		}
	}
	return false
}

func norm(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

func normAll(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, norm(n))
	}
	return out
}

func joinOr(items []string, empty string) string {
	if len(items) == 0 {
		return empty
	}
	return strings.Join(items, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func (d *Decision) setDomainVars(name string, routable bool, certificateARN string) {
	d.TerraformVars.CustomDomainName = &name
	d.TerraformVars.CustomDomainRoutable = &routable
	d.TerraformVars.CustomDomainCertificateARN = &certificateARN
}

func (d *Decision) setBusVars(name string, create bool) {
	d.TerraformVars.EventBusName = &name
	d.TerraformVars.CreateBus = &create
}
