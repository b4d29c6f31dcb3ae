package discoverycli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/linoone/linoone/internal/ops/discovery"
)

// writeReport prints a decision for a person.
func writeReport(w io.Writer, d discovery.Decision) error {
	var b strings.Builder
	subject := "no custom domain"
	if d.Domain != "" {
		subject = d.Domain
	}
	fmt.Fprintf(&b, "linoone discover: %s in %s\n\n", subject, d.Region)
	fmt.Fprintf(&b, "decision: %s\n", d.Kind)
	fmt.Fprintf(&b, "resolver base URL: %s\n", orUnknown(d.ResolverBaseURL))
	fmt.Fprintf(&b, "event bus: %s", d.Bus.Status)
	if d.Bus.Name != "" {
		fmt.Fprintf(&b, " %s", d.Bus.Name)
	}
	if d.Bus.ARN != "" {
		fmt.Fprintf(&b, " (%s)", d.Bus.ARN)
	}
	b.WriteString("\n\nevidence:\n")
	for _, e := range d.Evidence {
		fmt.Fprintf(&b, "  - %s\n", e)
	}
	if r := d.Record; r != nil {
		where := "zone " + orUnknown(r.Zone)
		if r.HostedZoneID != "" {
			where += " (Route 53 " + r.HostedZoneID + " in this account)"
		}
		fmt.Fprintf(&b, "\nDNS record needed in %s:\n", where)
		value := r.Value
		if value == "" {
			value = "<not known yet>"
		}
		if r.AliasHostedZoneID != "" {
			fmt.Fprintf(&b, "  %s. %s ALIAS %s. (alias hosted zone %s)\n", r.Name, r.Type, value, r.AliasHostedZoneID)
		} else {
			fmt.Fprintf(&b, "  %s. %d IN %s %s.\n", r.Name, r.TTL, r.Type, value)
		}
		if len(r.Replaces) > 0 {
			fmt.Fprintf(&b, "  replaces: %s\n", strings.Join(r.Replaces, ", "))
		}
		if r.Note != "" {
			fmt.Fprintf(&b, "  note: %s\n", r.Note)
		}
	}
	if c := d.CloudFront; c != nil {
		fmt.Fprintf(&b, "\nCloudFront change (distribution %s, %s):\n", orUnknown(c.DistributionID), c.DistributionDomain)
		if c.AddAlias != "" {
			fmt.Fprintf(&b, "  alternate name   add %s\n", c.AddAlias)
		}
		if c.AddBehavior {
			fmt.Fprintf(&b, "  cache behavior   add %s at precedence %d\n", c.PathPattern, c.Precedence)
		} else {
			fmt.Fprintf(&b, "  cache behavior   %s exists\n", c.PathPattern)
		}
		fmt.Fprintf(&b, "  origin           %s -> %s (%s)\n", c.OriginID, orUnknown(c.OriginDomain), c.OriginProtocol)
		fmt.Fprintf(&b, "  cache policy     %s\n", c.CachePolicy)
		fmt.Fprintf(&b, "  request policy   %s\n", c.OriginRequestPolicy)
		fmt.Fprintf(&b, "  methods          %s\n", strings.Join(c.AllowedMethods, ", "))
		for _, warn := range c.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", warn)
		}
	}
	if len(d.Actions) > 0 {
		b.WriteString("\nACTION REQUIRED (a person must do this, then re-run `linoone discover`):\n")
		for i, a := range d.Actions {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, a)
		}
	}
	if len(d.NextSteps) > 0 {
		b.WriteString("\nnext steps:\n")
		for _, s := range d.NextSteps {
			fmt.Fprintf(&b, "  - %s\n", s)
		}
	}
	b.WriteString("\nterraform variables:\n")
	for _, v := range tfLines(d.TerraformVars) {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tfLines renders the decided variables as terraform.tfvars lines.
func tfLines(v discovery.TerraformVars) []string {
	var out []string
	add := func(name, value string) {
		out = append(out, fmt.Sprintf("%-29s = %s", name, value))
	}
	if v.CustomDomainName != nil {
		add("custom_domain_name", strconv.Quote(*v.CustomDomainName))
	}
	if v.CustomDomainRoutable != nil {
		add("custom_domain_routable", strconv.FormatBool(*v.CustomDomainRoutable))
	}
	if v.CustomDomainCertificateARN != nil {
		add("custom_domain_certificate_arn", strconv.Quote(*v.CustomDomainCertificateARN))
	}
	if v.EventBusName != nil {
		add("event_bus_name", strconv.Quote(*v.EventBusName))
	}
	if v.CreateBus != nil {
		add("create_bus", strconv.FormatBool(*v.CreateBus))
	}
	if len(out) == 0 {
		out = append(out, "(none decided)")
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
