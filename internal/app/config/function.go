package config

import "time"

// Function is what every Lambda function reads.
type Function struct {
	Logging
	Region      string // LINOONE_REGION, else AWS_REGION, default us-east-1
	Environment string // LINOONE_ENVIRONMENT, default local
}

// Shared returns the part every function reads; the function configurations
// inherit it.
func (f Function) Shared() Function { return f }

func (r *reader) function() Function {
	return Function{Logging: r.logging(), Region: r.region(), Environment: r.environment()}
}

// Persist is how a function reaches Persist.
type Persist struct {
	URL            string        // LINOONE_PERSIST_URL, required
	SigV4          bool          // LINOONE_PERSIST_SIGV4: sign Persist calls with the function's role
	InlineLiterals bool          // LINOONE_PERSIST_INLINE_LITERALS: Neptune mode
	Timeout        time.Duration // LINOONE_PERSIST_TIMEOUT, default 2s
}

func (r *reader) persist() Persist {
	return Persist{
		URL:            r.functionURL("LINOONE_PERSIST_URL", r.httpURL("LINOONE_PERSIST_URL", "")),
		SigV4:          r.boolean("LINOONE_PERSIST_SIGV4"),
		InlineLiterals: r.boolean("LINOONE_PERSIST_INLINE_LITERALS"),
		Timeout:        r.persistTimeout(),
	}
}

// functionURL requires a function's URL variable name, whose value is v: a function
// reads no configuration from SSM at start (issue 48: an instance's start must not
// wait on SSM, nor retry it), so the URL variables that used to name a parameter
// (name+"_PARAM") are no longer read, and one left set says so in the error.
func (r *reader) functionURL(name, v string) string {
	switch {
	case v != "":
	case r.get(name+"_PARAM", "") != "":
		r.bad(name, "required; %s_PARAM is no longer read: Terraform passes the URL itself (terraform apply this version)", name)
	default:
		r.bad(name, "required")
	}
	return v
}

// DefaultDenyListRefresh is how often a function reads its deny list parameter again
// unless LINOONE_DENYLIST_REFRESH says otherwise: an operator's edit is in force
// within it (the SPEC's "within a minute"). Each instance reads once per interval,
// so SSM's calls are instances ÷ interval: docs/aws.md sizes it.
const DefaultDenyListRefresh = time.Minute

// The bounds of LINOONE_DENYLIST_REFRESH: below 10 s an instance would read SSM
// more than it reads anything else; past 15 min a takedown waits too long.
const (
	MinDenyListRefresh = 10 * time.Second
	MaxDenyListRefresh = 15 * time.Minute
)

func (r *reader) denyListRefresh() time.Duration {
	return r.durationRange("LINOONE_DENYLIST_REFRESH", DefaultDenyListRefresh, MinDenyListRefresh, MaxDenyListRefresh)
}

// IssueFunction is the configuration of the Issue function (the management API).
type IssueFunction struct {
	Function
	Persist         Persist
	ResolverBaseURL string   // LINOONE_RESOLVER_BASE_URL, required
	ReservedHosts   []string // LINOONE_RESERVED_HOSTS: targets there are refused
	DenyListParam   string   // LINOONE_DENYLIST_PARAM: the SSM parameter holding the deny list ("": none)
	// LINOONE_DENYLIST_REFRESH, default 1m: how often the deny list is read again
	DenyListRefresh time.Duration
	// LINOONE_METRICS_NAMESPACE, default Linoone: the EMF namespace of TargetsBlocked
	MetricsNamespace string
	// LINOONE_IDEMPOTENCY_SECRET_PARAM: the SecureString parameter keying derived
	// tokens ("": Idempotency-Key requests answer 503)
	IdempotencySecretParam string
}

// LoadIssueFunction reads the configuration of the Issue function.
func LoadIssueFunction(getenv func(string) string) (IssueFunction, error) {
	r := newReader(getenv)
	c := IssueFunction{Function: r.function(), Persist: r.persist(), ReservedHosts: r.reservedHosts(),
		DenyListParam: r.ssmParam("LINOONE_DENYLIST_PARAM"), DenyListRefresh: r.denyListRefresh(), MetricsNamespace: r.metricsNamespace(),
		IdempotencySecretParam: r.ssmParam("LINOONE_IDEMPOTENCY_SECRET_PARAM")}
	c.ResolverBaseURL = r.functionBaseURL()
	if err := r.err(); err != nil {
		return IssueFunction{}, err
	}
	return c, nil
}

// The Resolve function's click budget (issue 48): with the bus and the click DLQ
// both hanging, a redirect waits DefaultFunctionPublishTimeout for PutEvents, then
// DefaultFunctionDLQTimeout for SendMessage, then logs the fact whole: 250 ms added
// at most, under the 300 ms the budget allows. A healthy PutEvents or SendMessage in
// the same region answers in tens of milliseconds.
const (
	DefaultFunctionPublishTimeout = 150 * time.Millisecond
	DefaultFunctionDLQTimeout     = 100 * time.Millisecond
)

// ResolveFunction is the configuration of the Resolve function (the public resolver).
type ResolveFunction struct {
	Function
	Persist          Persist
	EventBus         string        // LINOONE_EVENT_BUS, required: the shared bus name or ARN
	ClickDLQURL      string        // LINOONE_CLICK_DLQ_URL, required
	PublishTimeout   time.Duration // LINOONE_PUBLISH_TIMEOUT, default 150ms (DefaultFunctionPublishTimeout)
	DLQTimeout       time.Duration // LINOONE_DLQ_TIMEOUT, default 100ms (DefaultFunctionDLQTimeout)
	CacheSize        int           // LINOONE_RESOLVER_CACHE_SIZE, default 100000 (0 disables)
	MetricsNamespace string        // LINOONE_METRICS_NAMESPACE, default Linoone: the EMF namespace
	DenyListParam    string        // LINOONE_DENYLIST_PARAM: the SSM parameter holding the deny list ("": none)
	DenyListRefresh  time.Duration // LINOONE_DENYLIST_REFRESH, default 1m: how often the deny list is read again
	// LINOONE_VISITOR_IP_FROM: "source" (default), the address API Gateway saw, or
	// "cloudfront" (Terraform's cdn option), the CloudFront-Viewer-Address header of a
	// request that carries OriginVerifySecret.
	VisitorIPFromCloudFront bool
	// LINOONE_ORIGIN_VERIFY_SECRET: what CloudFront adds to every request it sends the
	// resolver API; required with cloudfront (at least MinOriginVerifySecret bytes).
	// A secret: never logged.
	OriginVerifySecret string
}

// MinOriginVerifySecret is the shortest origin secret taken: Terraform draws 48
// characters.
const MinOriginVerifySecret = 32

// visitorIP reads LINOONE_VISITOR_IP_FROM and LINOONE_ORIGIN_VERIFY_SECRET.
func (r *reader) visitorIP() (fromCloudFront bool, secret string) {
	secret = r.get("LINOONE_ORIGIN_VERIFY_SECRET", "")
	switch v := r.get("LINOONE_VISITOR_IP_FROM", "source"); v {
	case "source":
		if secret != "" {
			r.bad("LINOONE_ORIGIN_VERIFY_SECRET", "set, but LINOONE_VISITOR_IP_FROM is not cloudfront")
		}
	case "cloudfront":
		if len(secret) < MinOriginVerifySecret {
			// The value is a secret: its length only.
			r.bad("LINOONE_ORIGIN_VERIFY_SECRET", "required with LINOONE_VISITOR_IP_FROM=cloudfront, at least %d bytes (%d given)", MinOriginVerifySecret, len(secret))
		}
		fromCloudFront = true
	default:
		r.bad("LINOONE_VISITOR_IP_FROM", "%q is not source or cloudfront", v)
	}
	return fromCloudFront, secret
}

// LoadResolveFunction reads the configuration of the Resolve function.
func LoadResolveFunction(getenv func(string) string) (ResolveFunction, error) {
	r := newReader(getenv)
	c := ResolveFunction{
		Function:         r.function(),
		Persist:          r.persist(),
		EventBus:         r.required("LINOONE_EVENT_BUS", r.eventBus()),
		ClickDLQURL:      r.required("LINOONE_CLICK_DLQ_URL", r.clickDLQURL()),
		PublishTimeout:   r.duration("LINOONE_PUBLISH_TIMEOUT", DefaultFunctionPublishTimeout),
		DLQTimeout:       r.duration("LINOONE_DLQ_TIMEOUT", DefaultFunctionDLQTimeout),
		CacheSize:        r.cacheSize(),
		MetricsNamespace: r.metricsNamespace(),
		DenyListParam:    r.ssmParam("LINOONE_DENYLIST_PARAM"),
		DenyListRefresh:  r.denyListRefresh(),
	}
	c.VisitorIPFromCloudFront, c.OriginVerifySecret = r.visitorIP()
	if err := r.err(); err != nil {
		return ResolveFunction{}, err
	}
	return c, nil
}

// ReplayFunction is the configuration of the Replay function (the click DLQ's
// consumer). It never talks to Persist.
type ReplayFunction struct {
	Function
	EventBus         string // LINOONE_EVENT_BUS, required: the shared bus name or ARN
	MetricsNamespace string // LINOONE_METRICS_NAMESPACE, default Linoone: the EMF namespace
}

// LoadReplayFunction reads the configuration of the Replay function.
func LoadReplayFunction(getenv func(string) string) (ReplayFunction, error) {
	r := newReader(getenv)
	c := ReplayFunction{
		Function:         r.function(),
		EventBus:         r.required("LINOONE_EVENT_BUS", r.eventBus()),
		MetricsNamespace: r.metricsNamespace(),
	}
	if err := r.err(); err != nil {
		return ReplayFunction{}, err
	}
	return c, nil
}
