// Package discoverycli is the `linoone discover` command: it parses the
// command line, collects facts with awsfacts (read-only AWS calls) and
// dnscheck (public DNS and the HTTPS probe), lets discovery.Decide judge them
// and prints the decision as a report or JSON.
package discoverycli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/ops/discovery"
	"github.com/linoone/linoone/internal/ops/discovery/awsfacts"
	"github.com/linoone/linoone/internal/ops/discovery/dnscheck"
)

// Exit codes of `linoone discover`.
const (
	ExitReady          = 0
	ExitError          = 1
	ExitActionRequired = 2
)

// EndpointEnv overrides the base endpoint of every AWS client.
const EndpointEnv = "LINOONE_DISCOVERY_ENDPOINT_URL"

// runTimeout bounds a whole discovery run.
const runTimeout = 2 * time.Minute

// ErrUsage marks bad command-line input.
var ErrUsage = errors.New("usage")

// The ports Main consumes; awsfacts and dnscheck implement them.
type (
	factSource interface {
		Collect(ctx context.Context, q awsfacts.Query) (awsfacts.Snapshot, error)
	}
	nameResolver interface {
		Resolve(ctx context.Context, name string) (discovery.Resolution, error)
		Zone(ctx context.Context, name string) (discovery.PublicZone, error)
	}
	prober interface {
		Probe(ctx context.Context, url, addr string) discovery.Probe
	}
)

var (
	_ factSource   = (*awsfacts.Collector)(nil)
	_ nameResolver = (*dnscheck.Resolver)(nil)
	_ prober       = (*dnscheck.Prober)(nil)
)

// Main runs `linoone discover` on its own command line: args are the arguments
// after the subcommand (a leading "discover" is tolerated). The CLI parses them
// with its other commands' flags instead (Flags, then Options.Run).
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return run(ctx, args, getenv, stdout, stderr, dnscheck.NewProber(nil))
}

// run is Main with the HTTPS prober injected.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, p prober) int {
	if len(args) > 0 && args[0] == "discover" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := Flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, Usage)
			return ExitReady
		}
		fmt.Fprintf(stderr, "linoone discover: %s\n", oneLine(fmt.Errorf("%w: %w (see --help)", ErrUsage, err).Error()))
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "linoone discover: %s\n", oneLine(fmt.Errorf("%w: unexpected argument %q (see --help)", ErrUsage, fs.Arg(0)).Error()))
		return ExitError
	}
	return o.run(ctx, getenv, stdout, stderr, p)
}

// Run runs the discovery the flags set (Flags) and prints a report (or JSON with
// --json) on stdout; it returns ExitReady, ExitActionRequired or ExitError, each
// error one line on stderr. Nothing is written to AWS.
func (o *Options) Run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	return o.run(ctx, getenv, stdout, stderr, dnscheck.NewProber(nil))
}

func (o *Options) run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, p prober) int {
	err := o.finish(getenv)
	if err != nil {
		// errors.Join puts one error per line; each stays one line.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "linoone discover: %s\n", oneLine(line))
		}
		return ExitError
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()

	cfg, err := awsfacts.LoadConfig(ctx, o.aws)
	if err != nil {
		fmt.Fprintf(stderr, "linoone discover: %s\n", oneLine(err.Error()))
		return ExitError
	}
	server := o.dnsServer
	if server == "" && o.domain != "" {
		if server, err = dnscheck.SystemServer(dnscheck.DefaultResolvConf); err != nil {
			fmt.Fprintf(stderr, "linoone discover: %s (use --dns-server host:port)\n", oneLine(err.Error()))
			return ExitError
		}
	}
	facts, err := gather(ctx, *o, awsfacts.New(cfg, o.endpoint), dnscheck.NewResolver(server, 0), p)
	if err != nil {
		fmt.Fprintf(stderr, "linoone discover: %s\n", oneLine(err.Error()))
		return ExitError
	}
	d := discovery.Decide(facts)
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			fmt.Fprintf(stderr, "linoone discover: write json: %s\n", oneLine(err.Error()))
			return ExitError
		}
	} else if err := writeReport(stdout, d); err != nil {
		// A report cut short is no verdict: a script must not read it as ready.
		fmt.Fprintf(stderr, "linoone discover: write report: %s\n", oneLine(err.Error()))
		return ExitError
	}
	if d.ActionRequired {
		return ExitActionRequired
	}
	return ExitReady
}

// Options are what the flags of `linoone discover` set (Flags).
type Options struct {
	domain    string
	region    string
	bus       string
	apiID     string
	token     string
	prefix    string
	dnsServer string
	sandbox   bool
	json      bool
	endpoint  string
	aws       awsfacts.Settings
}

// Usage describes `linoone discover`; the CLI prints its flags after it.
const Usage = `usage: linoone discover [--domain NAME] --region REGION [--bus NAME|ARN]
                        [--resolver-api-id ID] [--probe-token TOKEN] [--path-prefix P]
                        [--sandbox] [--json] [--dns-server HOST:PORT]

Read-only infrastructure discovery before any custom-domain or bus decision
(rules/infrastructure-discovery.md). Exit 0: ready; 2: a person must act; 1: error.

Environment: AWS credentials as usual (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/
AWS_SESSION_TOKEN or AWS_PROFILE), AWS_MAX_ATTEMPTS, and
LINOONE_DISCOVERY_ENDPOINT_URL to send every AWS call to another endpoint.

example:
  linoone discover --domain go.example.com --region us-east-1 \
    --bus engagement --resolver-api-id abc123defg --probe-token AAAAAAAAAA --json
`

// Flags defines the flags of `linoone discover` on fs; Run reads what they set.
func Flags(fs *flag.FlagSet) *Options {
	o := &Options{}
	fs.StringVar(&o.domain, "domain", "", "custom domain for short URLs (omit for the API endpoint)")
	fs.StringVar(&o.region, "region", "", "AWS region of the resolver API (default $AWS_REGION)")
	fs.StringVar(&o.bus, "bus", "", "shared EventBridge bus name or ARN")
	fs.StringVar(&o.apiID, "resolver-api-id", "", "API Gateway id of the resolver HTTP API, once deployed")
	fs.StringVar(&o.token, "probe-token", "", "send GET https://<domain>/<token> and expect the resolver's 302 or 404\n(an unknown token answers 404 and records no click)")
	fs.StringVar(&o.prefix, "path-prefix", "", "path segment in front of tokens, when the domain's router needs one")
	fs.StringVar(&o.dnsServer, "dns-server", "", "DNS server to ask, HOST:PORT (default: first nameserver of /etc/resolv.conf)")
	fs.BoolVar(&o.sandbox, "sandbox", false, "allow creating the bus when it does not exist")
	fs.BoolVar(&o.json, "json", false, "machine-readable output")
	return o
}

// finish completes the flags with the environment and validates them, reporting
// every problem at once.
func (o *Options) finish(getenv func(string) string) error {
	if o.region == "" {
		o.region = getenv("AWS_REGION")
	}
	errs := o.validate()
	errs = append(errs, o.readEnvironment(getenv)...)
	return errors.Join(errs...)
}

// validate checks the flags' values; every bad one is reported.
func (o *Options) validate() []error {
	var errs []error
	check := func(set bool, err error) {
		if set && err != nil {
			errs = append(errs, err)
		}
	}
	if o.region == "" {
		errs = append(errs, fmt.Errorf("%w: --region is required", ErrUsage))
	} else {
		check(true, discovery.ValidateRegion(o.region))
	}
	if o.domain != "" {
		name, err := discovery.ParseDomain(o.domain)
		check(true, err)
		o.domain = name
	}
	check(o.bus != "" && o.region != "", discovery.ValidateBus(o.bus, o.region))
	check(o.apiID != "", discovery.ValidateAPIID(o.apiID))
	check(o.token != "", discovery.ValidateToken(o.token))
	if o.token != "" && o.domain == "" {
		errs = append(errs, fmt.Errorf("%w: --probe-token needs --domain", ErrUsage))
	}
	check(o.prefix != "", discovery.ValidatePrefix(o.prefix))
	if o.sandbox && o.bus == "" {
		errs = append(errs, fmt.Errorf("%w: --sandbox needs --bus NAME (the bus the sandbox creates when it is missing)", ErrUsage))
	}
	check(o.dnsServer != "", discovery.ValidateServer(o.dnsServer))
	return errs
}

// readEnvironment takes the endpoint override and the AWS settings from the
// environment, checking what it can.
func (o *Options) readEnvironment(getenv func(string) string) []error {
	var errs []error
	if o.endpoint = getenv(EndpointEnv); o.endpoint != "" {
		if u, err := url.Parse(o.endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%w: %s=%q is not an http(s) URL", ErrUsage, EndpointEnv, o.endpoint))
		}
	}
	o.aws = awsfacts.Settings{
		Region:          o.region,
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
		Profile:         getenv("AWS_PROFILE"),
	}
	if v := getenv("AWS_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 20 {
			errs = append(errs, fmt.Errorf("%w: AWS_MAX_ATTEMPTS=%q must be a whole number from 1 to 20", ErrUsage, v))
		}
		o.aws.MaxAttempts = n
	}
	return errs
}

// gather collects the facts: AWS first, then public DNS, then the probe.
func gather(ctx context.Context, o Options, aws factSource, dns nameResolver, p prober) (discovery.Facts, error) {
	snap, err := aws.Collect(ctx, awsfacts.Query{Domain: o.domain, ResolverAPIID: o.apiID, Bus: o.bus})
	if err != nil {
		return discovery.Facts{}, err
	}
	f := discovery.Facts{
		Domain: o.domain, Region: o.region, ResolverAPIID: o.apiID,
		PathPrefix: o.prefix, ProbeToken: o.token, Sandbox: o.sandbox,
		ResolverAPI:   snap.ResolverAPI,
		HostedZones:   snap.HostedZones,
		Distributions: snap.Distributions,
		APIDomains:    snap.APIDomains,
		Certificates:  snap.Certificates,
	}
	if snap.Bus != nil {
		f.Bus = *snap.Bus
	}
	if o.bus != "" && f.Bus.Requested == "" {
		f.Bus.Requested = o.bus
	}
	if o.domain == "" {
		return f, nil
	}
	if f.PublicDNS, err = dns.Resolve(ctx, o.domain); err != nil {
		return discovery.Facts{}, fmt.Errorf("public dns: %w", err)
	}
	if f.PublicZone, err = dns.Zone(ctx, o.domain); err != nil {
		return discovery.Facts{}, fmt.Errorf("public dns: %w", err)
	}
	f.TargetDNS = map[string]discovery.Resolution{}
	for _, d := range f.APIDomains {
		if d.Target == "" {
			continue
		}
		if _, done := f.TargetDNS[d.Target]; done {
			continue
		}
		res, err := dns.Resolve(ctx, d.Target)
		if err != nil {
			return discovery.Facts{}, fmt.Errorf("public dns: %w", err)
		}
		f.TargetDNS[d.Target] = res
	}
	if o.token != "" {
		path := o.token
		if o.prefix != "" {
			path = o.prefix + "/" + o.token
		}
		probeURL := "https://" + o.domain + "/" + path
		if f.PublicDNS.NXDomain || len(f.PublicDNS.Addresses) == 0 {
			f.Probe = &discovery.Probe{URL: probeURL, Err: "not sent: the domain has no address in public DNS"}
		} else if a := nonPublic(f.PublicDNS.Addresses); a != "" {
			// What answers there is no proof that the public reaches the resolver,
			// and discover does not send requests into private networks.
			f.Probe = &discovery.Probe{URL: probeURL, Err: "not sent: public DNS answers " + a + ", which is not a public address"}
		} else {
			pr := p.Probe(ctx, probeURL, f.PublicDNS.Addresses[0]) // what the public reaches, not this machine's resolver
			pr.Err = oneLine(pr.Err)
			f.Probe = &pr
		}
	}
	return f, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// sharedSpace is the carrier-grade NAT range (RFC 6598), private in all but name.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// nonPublic is the first of addrs that is not a public unicast address (loopback,
// private, shared, link-local, unspecified, multicast, or not an address at all), or "".
func nonPublic(addrs []string) string {
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		ip = ip.Unmap()
		if err != nil || ip.IsLoopback() || ip.IsPrivate() || sharedSpace.Contains(ip) || ip.IsLinkLocalUnicast() ||
			ip.IsUnspecified() || ip.IsMulticast() {
			return a
		}
	}
	return ""
}
