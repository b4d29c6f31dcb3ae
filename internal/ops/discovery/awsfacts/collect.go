package awsfacts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	acmtypes "github.com/aws/aws-sdk-go-v2/service/acm/types"
	"github.com/aws/aws-sdk-go-v2/service/apigatewayv2"
	apigwtypes "github.com/aws/aws-sdk-go-v2/service/apigatewayv2/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudfront"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudfront/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/linoone/linoone/internal/ops/discovery"
)

// Query says what to look for. Empty fields are skipped.
type Query struct {
	// Domain is the custom domain, lower case, no trailing dot.
	Domain string
	// ResolverAPIID is the resolver HTTP API's id.
	ResolverAPIID string
	// Bus is the event bus name or ARN.
	Bus string
}

// Snapshot is what the account answered, in the discovery package's fact
// types; the command copies it into discovery.Facts.
type Snapshot struct {
	// HostedZones are the public zones named Domain or one of its parents.
	HostedZones []discovery.HostedZone
	// Distributions are all CloudFront distributions of the account (none
	// outside the aws and aws-cn partitions, where CloudFront is not asked).
	Distributions []discovery.Distribution
	// APIDomains are the API Gateway custom domain names covering Domain.
	APIDomains []discovery.APIDomain
	// ResolverAPI is nil when no id was asked for.
	ResolverAPI *discovery.API
	// Certificates are the ACM certificates covering Domain, in the region
	// and in us-east-1.
	Certificates []discovery.Certificate
	// Bus is nil when no bus was asked for.
	Bus *discovery.Bus
}

// Collect asks every service the query needs. The first failing call stops
// the collection with an *Error naming the service and operation.
func (c *Collector) Collect(ctx context.Context, q Query) (Snapshot, error) {
	var s Snapshot
	var err error
	if q.ResolverAPIID != "" {
		if s.ResolverAPI, err = c.api(ctx, q.ResolverAPIID); err != nil {
			return Snapshot{}, err
		}
	}
	if q.Domain != "" {
		if s.HostedZones, err = c.hostedZones(ctx, q.Domain); err != nil {
			return Snapshot{}, err
		}
		if c.cloudFront != nil {
			if s.Distributions, err = c.distributions(ctx); err != nil {
				return Snapshot{}, err
			}
		}
		if s.APIDomains, err = c.apiDomains(ctx, q.Domain); err != nil {
			return Snapshot{}, err
		}
		if s.Certificates, err = c.certificates(ctx, c.acm, c.region, q.Domain); err != nil {
			return Snapshot{}, err
		}
		if c.acmGlobal != nil {
			global, err := c.certificates(ctx, c.acmGlobal, cloudFrontRegion, q.Domain)
			if err != nil {
				return Snapshot{}, err
			}
			s.Certificates = append(s.Certificates, global...)
		}
	}
	if q.Bus != "" {
		bus, err := c.bus(ctx, q.Bus)
		if err != nil {
			return Snapshot{}, err
		}
		s.Bus = &bus
	}
	return s, nil
}

// hostedZones finds the public zones named domain or one of its parents
// (down to two labels). ListHostedZonesByName lists zones in order starting
// at a name, so each candidate name is asked for separately.
func (c *Collector) hostedZones(ctx context.Context, domain string) ([]discovery.HostedZone, error) {
	var zones []discovery.HostedZone
	for _, candidate := range candidates(domain) {
		out, err := c.route53.ListHostedZonesByName(ctx, &route53.ListHostedZonesByNameInput{
			DNSName:  aws.String(candidate),
			MaxItems: aws.Int32(10),
		})
		if err != nil {
			return nil, wrap("route53", "ListHostedZonesByName", err)
		}
		for _, hz := range out.HostedZones {
			if dnsName(aws.ToString(hz.Name)) != candidate || (hz.Config != nil && hz.Config.PrivateZone) {
				continue
			}
			z := discovery.HostedZone{ID: strings.TrimPrefix(aws.ToString(hz.Id), "/hostedzone/"), Name: candidate}
			if z.NameServers, err = c.apexNameServers(ctx, z.ID, candidate); err != nil {
				return nil, err
			}
			if z.Records, err = c.recordSets(ctx, z.ID, domain); err != nil {
				return nil, err
			}
			zones = append(zones, z)
		}
	}
	return zones, nil
}

func (c *Collector) apexNameServers(ctx context.Context, zoneID, zone string) ([]string, error) {
	out, err := c.route53.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{
		HostedZoneId:    aws.String(zoneID),
		StartRecordName: aws.String(zone),
		StartRecordType: r53types.RRTypeNs,
		MaxItems:        aws.Int32(1),
	})
	if err != nil {
		return nil, wrap("route53", "ListResourceRecordSets", err)
	}
	for _, rr := range out.ResourceRecordSets {
		if dnsName(aws.ToString(rr.Name)) == zone && rr.Type == r53types.RRTypeNs {
			return recordValues(rr), nil
		}
	}
	return nil, nil
}

// recordSets lists the record sets named exactly name.
func (c *Collector) recordSets(ctx context.Context, zoneID, name string) ([]discovery.RecordSet, error) {
	in := &route53.ListResourceRecordSetsInput{
		HostedZoneId:    aws.String(zoneID),
		StartRecordName: aws.String(name),
		MaxItems:        aws.Int32(20),
	}
	var out []discovery.RecordSet
	for {
		page, err := c.route53.ListResourceRecordSets(ctx, in)
		if err != nil {
			return nil, wrap("route53", "ListResourceRecordSets", err)
		}
		for _, rr := range page.ResourceRecordSets {
			if dnsName(aws.ToString(rr.Name)) != name {
				return out, nil
			}
			rs := discovery.RecordSet{Name: name, Type: string(rr.Type), TTL: aws.ToInt64(rr.TTL), Values: recordValues(rr)}
			if rr.AliasTarget != nil {
				rs.AliasTarget = dnsName(aws.ToString(rr.AliasTarget.DNSName))
				rs.AliasZoneID = aws.ToString(rr.AliasTarget.HostedZoneId)
			}
			out = append(out, rs)
		}
		if !page.IsTruncated || dnsName(aws.ToString(page.NextRecordName)) != name {
			return out, nil
		}
		in.StartRecordName = page.NextRecordName
		in.StartRecordType = page.NextRecordType
		in.StartRecordIdentifier = page.NextRecordIdentifier
	}
}

func recordValues(rr r53types.ResourceRecordSet) []string {
	var out []string
	for _, r := range rr.ResourceRecords {
		out = append(out, strings.TrimSuffix(aws.ToString(r.Value), "."))
	}
	return out
}

func (c *Collector) distributions(ctx context.Context) ([]discovery.Distribution, error) {
	var out []discovery.Distribution
	p := cloudfront.NewListDistributionsPaginator(c.cloudFront, &cloudfront.ListDistributionsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrap("cloudfront", "ListDistributions", err)
		}
		if page.DistributionList == nil {
			continue
		}
		for _, ds := range page.DistributionList.Items {
			out = append(out, distribution(ds))
		}
	}
	return out, nil
}

func distribution(ds cftypes.DistributionSummary) discovery.Distribution {
	d := discovery.Distribution{
		ID:         aws.ToString(ds.Id),
		DomainName: dnsName(aws.ToString(ds.DomainName)),
		Status:     aws.ToString(ds.Status),
		Enabled:    aws.ToBool(ds.Enabled),
	}
	if ds.Aliases != nil {
		for _, a := range ds.Aliases.Items {
			d.Aliases = append(d.Aliases, dnsName(a))
		}
	}
	if ds.Origins != nil {
		for _, o := range ds.Origins.Items {
			d.Origins = append(d.Origins, discovery.Origin{ID: aws.ToString(o.Id), DomainName: dnsName(aws.ToString(o.DomainName)), Path: aws.ToString(o.OriginPath)})
		}
	}
	if ds.DefaultCacheBehavior != nil {
		d.DefaultOriginID = aws.ToString(ds.DefaultCacheBehavior.TargetOriginId)
	}
	if ds.CacheBehaviors != nil {
		for _, b := range ds.CacheBehaviors.Items {
			d.Behaviors = append(d.Behaviors, discovery.Behavior{PathPattern: aws.ToString(b.PathPattern), OriginID: aws.ToString(b.TargetOriginId)})
		}
	}
	return d
}

// apiDomains lists the API Gateway custom domain names that cover domain,
// with their API mappings.
func (c *Collector) apiDomains(ctx context.Context, domain string) ([]discovery.APIDomain, error) {
	var out []discovery.APIDomain
	in := &apigatewayv2.GetDomainNamesInput{}
	for {
		page, err := c.apiGateway.GetDomainNames(ctx, in)
		if err != nil {
			return nil, wrap("apigateway", "GetDomainNames", err)
		}
		for _, dn := range page.Items {
			if !covers(aws.ToString(dn.DomainName), domain) {
				continue
			}
			d := apiDomain(dn)
			if d.Mappings, err = c.apiMappings(ctx, aws.ToString(dn.DomainName)); err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

func apiDomain(dn apigwtypes.DomainName) discovery.APIDomain {
	d := discovery.APIDomain{Name: dnsName(aws.ToString(dn.DomainName))}
	for i, cfg := range dn.DomainNameConfigurations {
		// An HTTP API's domain name has one configuration; prefer REGIONAL.
		if i > 0 && cfg.EndpointType != apigwtypes.EndpointTypeRegional {
			continue
		}
		d.Target = dnsName(aws.ToString(cfg.ApiGatewayDomainName))
		d.TargetZoneID = aws.ToString(cfg.HostedZoneId)
		d.EndpointType = string(cfg.EndpointType)
		d.Status = string(cfg.DomainNameStatus)
		d.CertificateARN = aws.ToString(cfg.CertificateArn)
		d.IPAddressType = string(cfg.IpAddressType)
		if cfg.EndpointType == apigwtypes.EndpointTypeRegional {
			break
		}
	}
	return d
}

func (c *Collector) apiMappings(ctx context.Context, domainName string) ([]discovery.APIMapping, error) {
	var out []discovery.APIMapping
	in := &apigatewayv2.GetApiMappingsInput{DomainName: aws.String(domainName)}
	for {
		page, err := c.apiGateway.GetApiMappings(ctx, in)
		if err != nil {
			return nil, wrap("apigateway", "GetApiMappings "+domainName, err)
		}
		for _, m := range page.Items {
			out = append(out, discovery.APIMapping{APIID: aws.ToString(m.ApiId), Stage: aws.ToString(m.Stage), Key: aws.ToString(m.ApiMappingKey)})
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

func (c *Collector) api(ctx context.Context, id string) (*discovery.API, error) {
	out, err := c.apiGateway.GetApi(ctx, &apigatewayv2.GetApiInput{ApiId: aws.String(id)})
	var notFound *apigwtypes.NotFoundException
	if errors.As(err, &notFound) {
		return nil, &Error{Service: "apigateway", Operation: "GetApi", Kind: ErrAPINotFound, Detail: fmt.Sprintf("no API %s in %s", id, c.region), cause: err}
	}
	if err != nil {
		return nil, wrap("apigateway", "GetApi", err)
	}
	return &discovery.API{
		ID:                 aws.ToString(out.ApiId),
		Name:               aws.ToString(out.Name),
		Endpoint:           aws.ToString(out.ApiEndpoint),
		ProtocolType:       string(out.ProtocolType),
		ExecuteAPIDisabled: aws.ToBool(out.DisableExecuteApiEndpoint),
	}, nil
}

// certificates lists the certificates of every key type covering domain.
func (c *Collector) certificates(ctx context.Context, client acmAPI, region, domain string) ([]discovery.Certificate, error) {
	var out []discovery.Certificate
	p := acm.NewListCertificatesPaginator(client, &acm.ListCertificatesInput{
		// Without Includes, ListCertificates returns RSA_1024 and RSA_2048 only.
		Includes: &acmtypes.Filters{KeyTypes: acmtypes.KeyAlgorithm("").Values()},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrap("acm", "ListCertificates ("+region+")", err)
		}
		for _, cs := range page.CertificateSummaryList {
			cert := discovery.Certificate{
				ARN:        aws.ToString(cs.CertificateArn),
				Region:     region,
				DomainName: dnsName(aws.ToString(cs.DomainName)),
				Status:     string(cs.Status),
			}
			for _, san := range cs.SubjectAlternativeNameSummaries {
				cert.SANs = append(cert.SANs, dnsName(san))
			}
			if covers(cert.DomainName, domain) || slices.ContainsFunc(cert.SANs, func(s string) bool { return covers(s, domain) }) {
				out = append(out, cert)
			}
		}
	}
	return out, nil
}

func (c *Collector) bus(ctx context.Context, nameOrARN string) (discovery.Bus, error) {
	out, err := c.events.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String(nameOrARN)})
	var notFound *ebtypes.ResourceNotFoundException
	if errors.As(err, &notFound) {
		return discovery.Bus{Requested: nameOrARN}, nil
	}
	if err != nil {
		return discovery.Bus{}, wrap("eventbridge", "DescribeEventBus", err)
	}
	return discovery.Bus{Requested: nameOrARN, Found: true, Name: aws.ToString(out.Name), ARN: aws.ToString(out.Arn)}, nil
}

// candidates lists domain and its parents down to two labels.
func candidates(domain string) []string {
	var out []string
	for n := domain; strings.Count(n, ".") >= 1; {
		out = append(out, n)
		_, n, _ = strings.Cut(n, ".")
	}
	return out
}

// covers reports whether a domain name pattern (possibly *.parent) covers name.
func covers(pattern, name string) bool {
	pattern, name = dnsName(pattern), dnsName(name)
	if pattern == name {
		return pattern != ""
	}
	parent, ok := strings.CutPrefix(pattern, "*.")
	if !ok {
		return false
	}
	first, rest, ok := strings.Cut(name, ".")
	return ok && first != "" && rest == parent
}

// dnsName normalizes a name as Route 53 and others return it: lower case, no
// trailing dot, \DDD octal escapes decoded (Route 53 writes * as \052).
func dnsName(s string) string {
	s = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
