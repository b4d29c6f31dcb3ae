package config

import (
	"slices"
	"sync"
)

//go:generate go run ./configdoc -out ../../../docs/configuration.md

// This file describes every variable for docs/configuration.md (make generate writes
// it with configdoc). Which binaries read a variable is not written here: Reads finds
// out by loading each binary's configuration, so a variable that a Load function
// starts reading shows up at once, and configdoc refuses to write the page until
// Vars describes it.

// A Binary is a program, or a group of the CLI's commands, that loads one
// configuration.
type Binary struct {
	Name     string // as docs/configuration.md shows it
	Commands string // the CLI commands that load it; "" for serve, consume and the functions
	load     func(getenv func(string) string) (any, error)
}

// Binaries are the readers of the configuration, in the order the page lists them.
// A new Load function belongs here.
func Binaries() []Binary {
	return []Binary{
		{Name: "serve", load: loads(LoadServe)},
		{Name: "consume", load: loads(LoadConsume)},
		{Name: "status", Commands: "status, console", load: loads(LoadStatus)},
		{Name: "client", Commands: "shorten, inspect, stats, links, qr, smoke, console", load: loads(LoadShorten)},
		{Name: "deny list", Commands: "block, unblock, blocked, console", load: loads(LoadDenyList)},
		{Name: "replay", Commands: "replay, recover, console", load: loads(LoadReplay)},
		{Name: "dlq", Commands: "dlq", load: loads(LoadDLQ)},
		{Name: "issue λ", load: loads(LoadIssueFunction)},
		{Name: "resolve λ", load: loads(LoadResolveFunction)},
		{Name: "replay λ", load: loads(LoadReplayFunction)},
	}
}

func loads[C any](load func(func(string) string) (C, error)) func(func(string) string) (any, error) {
	return func(getenv func(string) string) (any, error) { return load(getenv) }
}

// Load loads b's configuration from getenv, for tests that compare what two
// environments give.
func (b Binary) Load(getenv func(string) string) (any, error) { return b.load(getenv) }

// Reads are the variables b's configuration reads, sorted: every name its Load asks
// getenv for, with the environment empty.
func (b Binary) Reads() []string {
	var mu sync.Mutex
	seen := map[string]bool{}
	_, _ = b.load(func(name string) string {
		mu.Lock()
		seen[name] = true
		mu.Unlock()
		return ""
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// An Area groups the variables of one concern on the page.
type Area struct {
	Title string
	Intro string
}

// Areas in the order of the page.
var (
	AreaLocal    = Area{"Local mode: addresses and the data dir", "Where `serve` listens and keeps its state, and where the CLI finds it."}
	AreaCreds    = Area{"Credentials and region", "Local mode signs every call with SigV4, as AWS does: these name the pairs and the region."}
	AreaPersist  = Area{"Persist", "How a binary reaches the graph store: local Persist by default, another Persist (the AWS one) by URL."}
	AreaClicks   = Area{"Clicks: the bus, the consumer and the click DLQ", "What a redirect does with its click, and what happens when the bus cannot take it."}
	AreaBounds   = Area{"Keeping the data dir bounded", "Local mode's `facts.jsonl` rotation and the low-disk warning of `/healthz` ([sizing](operations.md#sizing-the-data-dir))."}
	AreaScreen   = Area{"Targets and the deny list", "Which targets are refused at issuance and which short URLs answer 410."}
	AreaResolver = Area{"Issuance and the resolver", "Settings of the functions and of `serve`'s resolver."}
	AreaLogs     = Area{"Logs and metrics", "What the binaries write on stderr: logs, and CloudWatch EMF metric lines."}
	AreaOther    = Area{"Set by others, or read outside the configuration", "Variables this page lists so that none is a surprise."}
)

// AreaOrder is the order of the page's sections.
var AreaOrder = []Area{AreaLocal, AreaCreds, AreaPersist, AreaClicks, AreaBounds, AreaScreen, AreaResolver, AreaLogs, AreaOther}

// A Var is one environment variable as docs/configuration.md describes it.
type Var struct {
	Name string
	Area Area
	// Default is the value a binary uses when the variable is unset, exactly as one
	// would set it, or "" for none. A test sets it and checks that nothing changes.
	Default string
	// DefaultFor overrides Default for the binaries named (Binary.Name).
	DefaultFor map[string]string
	// DefaultText describes a default derived from other values
	// (http://<LINOONE_RESOLVER_ADDR>), shown instead of Default.
	DefaultText string
	// Doc says what it does, in one short paragraph of Markdown.
	Doc string
	// ReadBy names the readers outside this package's Load functions (such as
	// discover), or why none reads it; those found by Reads are added.
	ReadBy string
}

// Vars describes every variable that a Binary reads, and the few read elsewhere.
func Vars() []Var {
	return []Var{
		{Name: "LINOONE_RESOLVER_ADDR", Area: AreaLocal, Default: "127.0.0.1:8080",
			Doc: "The resolver's listen address. A port from 1 to 65535, since URLs are derived from it; on every interface (`:8080`, `0.0.0.0:8080`) `LINOONE_RESOLVER_BASE_URL` is required."},
		{Name: "LINOONE_MANAGEMENT_ADDR", Area: AreaLocal, Default: "127.0.0.1:8081",
			Doc: "The management API's listen address; the CLI derives `LINOONE_MANAGEMENT_URL` from it."},
		{Name: "LINOONE_PERSIST_ADDR", Area: AreaLocal, Default: "127.0.0.1:8082",
			Doc: "Local Persist's listen address. A non-loopback address logs a warning: the graph, with every visitor's IP address, is then reachable from the network (signatures are still required)."},
		{Name: "LINOONE_DATA_DIR", Area: AreaLocal, Default: "./.linoone",
			Doc: "Local Persist's database, the bus journal, the click DLQ, `facts.jsonl`, the generated credentials. One `serve` per data dir (`serve.lock`); `consume`, `replay` and the CLI run beside it."},
		{Name: "LINOONE_RESOLVER_BASE_URL", Area: AreaLocal, DefaultText: "`http://<LINOONE_RESOLVER_ADDR>`; required on the issue function",
			Doc: "The base of every short URL, which each one carries for good (your domain in production): an http(s) URL with a host, an optional port and path, no query, fragment or userinfo."},
		{Name: "LINOONE_MANAGEMENT_URL", Area: AreaLocal, DefaultText: "`http://<LINOONE_MANAGEMENT_ADDR>`",
			Doc: "The management API the CLI calls (`--management-url` overrides it); a URL with userinfo is refused, since requests are signed in a header."},

		{Name: "LINOONE_ACCESS_KEY_ID", Area: AreaCreds, DefaultText: "generated",
			Doc: "With `LINOONE_SECRET_ACCESS_KEY`: the management API's pair (local mode). Unset, `serve` writes a random pair to `<data dir>/credentials.json` (0600) and the CLI reads it; the secret is never logged."},
		{Name: "LINOONE_SECRET_ACCESS_KEY", Area: AreaCreds, DefaultText: "generated",
			Doc: "The secret half of the management API's pair."},
		{Name: "LINOONE_PERSIST_ACCESS_KEY_ID", Area: AreaCreds, DefaultText: "generated",
			Doc: "With `LINOONE_PERSIST_SECRET_ACCESS_KEY`: local Persist's own SigV4 pair, not the management API's. Unset, `serve` writes one to `<data dir>/persist-credentials.json`; `consume` reads that file and never creates one."},
		{Name: "LINOONE_PERSIST_SECRET_ACCESS_KEY", Area: AreaCreds, DefaultText: "generated",
			Doc: "The secret half of local Persist's pair."},
		{Name: "LINOONE_REGION", Area: AreaCreds, DefaultText: "`$AWS_REGION`, else `us-east-1`",
			Doc: "The SigV4 region of every signature, and the region of the events."},
		{Name: "AWS_REGION", Area: AreaCreds, DefaultText: "—",
			Doc: "Read only where `LINOONE_REGION` is unset; Lambda sets it."},

		{Name: "LINOONE_PERSIST_URL", Area: AreaPersist, DefaultText: "local Persist; required on the functions",
			Doc: "A Persist to use instead of starting local Persist. The local commands still sign with local Persist's pair."},
		{Name: "LINOONE_PERSIST_URL_PARAM", Area: AreaPersist,
			Doc: "Retired: a function with it set refuses to start and names `LINOONE_PERSIST_URL`, which Terraform now sets, so that no start waits on SSM."},
		{Name: "LINOONE_PERSIST_SIGV4", Area: AreaPersist, Default: "false",
			Doc: "`true`: sign Persist calls with the function's role (an IAM-authorized Persist API)."},
		{Name: "LINOONE_PERSIST_INLINE_LITERALS", Area: AreaPersist, Default: "false",
			Doc: "Neptune mode: for servers that ignore bindings, the token alone is inlined into Gremlin, after the `^[0-9A-Za-z]{10}$` check."},
		{Name: "LINOONE_PERSIST_TIMEOUT", Area: AreaPersist, Default: "2s",
			Doc: "Per Persist call. A batch (`POST /shorten/batch`, `serve`'s coalesced `POST /shorten`s) or a stats query gets five times it."},

		{Name: "LINOONE_BUS_SYNC", Area: AreaClicks, Default: "each",
			Doc: "When a redirect's click counts as recorded. `each`: after its batch's write and `fdatasync` (no acknowledged click lost to any crash). `interval`: after the write (a machine crash can lose the last 20 ms)."},
		{Name: "LINOONE_CONSUMER", Area: AreaClicks, Default: "inline",
			Doc: "`inline`: `serve` delivers the bus into Persist itself, yielding to redirects ([why](performance.md#the-inline-consumer)). `external`: run `linoone consume`."},
		{Name: "LINOONE_BUS_FAULT", Area: AreaClicks,
			Doc: "`always`: the local bus rejects every publish, as PutEvents with `FailedEntryCount=1` (the fault drill)."},
		{Name: "LINOONE_PUBLISH_TIMEOUT", Area: AreaClicks, Default: "500ms", DefaultFor: map[string]string{"resolve λ": "150ms"},
			Doc: "How long a redirect waits for the bus before it dead-letters the click (on the resolve function: 150 ms, within the click budget)."},
		{Name: "LINOONE_DLQ_TIMEOUT", Area: AreaClicks, Default: "100ms",
			Doc: "How long the resolve function waits for the click DLQ before it logs the click whole."},
		{Name: "LINOONE_EVENT_BUS", Area: AreaClicks, DefaultText: "required",
			Doc: "The shared EventBridge bus, by name or ARN."},
		{Name: "LINOONE_CLICK_DLQ_URL", Area: AreaClicks, DefaultText: "required",
			Doc: "The click DLQ's SQS queue URL."},
		{Name: "LINOONE_CLICK_BUFFER_BYTES", Area: AreaClicks, Default: "67108864",
			Doc: "Memory (64 MiB) holding clicks while neither the bus nor the DLQ can write them; `0`: log them at once."},
		{Name: "LINOONE_CLICK_LOG_FACTS_PER_SECOND", Area: AreaClicks, Default: "0",
			Doc: "Clicks logged whole per second past that buffer (`0`: no limit); the rest are dropped and counted (`FactsDropped`)."},

		{Name: "LINOONE_FACTS_LOG", Area: AreaBounds, Default: "on",
			Doc: "`off`: the consumer writes no `facts.jsonl`."},
		{Name: "LINOONE_FACTS_LOG_MAX_MB", Area: AreaBounds, Default: "32",
			Doc: "The size at which `facts.jsonl` is rotated."},
		{Name: "LINOONE_FACTS_LOG_FILES", Area: AreaBounds, Default: "8",
			Doc: "Rotated `facts.jsonl` files kept, compressed."},
		{Name: "LINOONE_DISK_LOW_PERCENT", Area: AreaBounds, Default: "5",
			Doc: "`/healthz` reports `disk-low` while the data dir's file system has less free space than this percentage (`0`: no check)."},

		{Name: "LINOONE_RESERVED_HOSTS", Area: AreaScreen,
			Doc: "Comma list of hosts, IPs and `*.domain` that no target may point at (`target-url-reserved`). The service's own hosts are always refused, in every spelling."},
		{Name: "LINOONE_DENYLIST_FILE", Area: AreaScreen, DefaultText: "`<LINOONE_DATA_DIR>/denylist.txt`",
			Doc: "The [deny list](operations.md#deny-list-and-takedown) file; absent, nothing is blocked. `serve` reads it again every 2 s."},
		{Name: "LINOONE_DENYLIST_PARAM", Area: AreaScreen,
			Doc: "The SSM parameter holding a function's deny list (Terraform: `/linoone/<env>/denylist`); unset, nothing is blocked."},
		{Name: "LINOONE_DENYLIST_REFRESH", Area: AreaScreen, Default: "1m",
			Doc: "How often a function reads its deny list parameter again, from 10s to 15m: an edit is in force within it."},

		{Name: "LINOONE_RESOLVER_CACHE_SIZE", Area: AreaResolver, Default: "100000",
			Doc: "Short URLs kept in the resolver's hot set (`0`: off). A short URL never changes, so nothing is invalidated; the deny list is checked on every request."},
		{Name: "LINOONE_RESOLVER_BASE_URL_PARAM", Area: AreaResolver,
			Doc: "Retired: the issue function refuses to start with it set and names `LINOONE_RESOLVER_BASE_URL`, which Terraform now sets."},
		{Name: "LINOONE_VISITOR_IP_FROM", Area: AreaResolver, Default: "source",
			Doc: "`cloudfront` (Terraform's `cdn` option): the resolve function takes the visitor's address from `CloudFront-Viewer-Address` on requests that carry the origin secret; otherwise, and always with `source`, API Gateway's source IP ([aws.md](aws.md))."},
		{Name: "LINOONE_ORIGIN_VERIFY_SECRET", Area: AreaResolver,
			Doc: "Required with `LINOONE_VISITOR_IP_FROM=cloudfront`, at least 32 bytes, never logged: the secret CloudFront sends in `X-Linoone-Origin-Verify`."},
		{Name: "LINOONE_IDEMPOTENCY_SECRET_PARAM", Area: AreaResolver,
			Doc: "The SecureString parameter keying `Idempotency-Key` tokens ([idempotent issuance](api.md#idempotent-issuance)); unset, such requests answer 503. Locally `serve` keeps the secret in the data dir."},

		{Name: "LINOONE_LOG_LEVEL", Area: AreaLogs, Default: "info",
			Doc: "`debug`, `info`, `warn` or `error`."},
		{Name: "LINOONE_LOG_FORMAT", Area: AreaLogs, DefaultText: "text on a terminal, else `json`",
			Doc: "`text` or `json` (`log/slog`), on stderr."},
		{Name: "LINOONE_EMF", Area: AreaLogs, Default: "off", DefaultText: "`on` on Lambda, else `off`",
			Doc: "`on`: `serve` also writes its CloudWatch EMF metric lines on stderr."},
		{Name: "AWS_LAMBDA_FUNCTION_NAME", Area: AreaLogs, DefaultText: "—",
			Doc: "Set by Lambda; `serve` reads it only to turn `LINOONE_EMF` on by default there."},
		{Name: "LINOONE_METRICS_NAMESPACE", Area: AreaLogs, Default: "Linoone",
			Doc: "The CloudWatch namespace of the EMF metrics."},
		{Name: "LINOONE_ENVIRONMENT", Area: AreaLogs, Default: "local",
			Doc: "The `Environment` dimension of the EMF metrics: 1 to 32 lower-case letters, digits and dashes."},

		{Name: "LINOONE_DISCOVERY_ENDPOINT_URL", Area: AreaOther, ReadBy: "discover",
			Doc: "Sends every AWS call of `linoone discover` to another endpoint (a local stand-in); the AWS SDK's own `AWS_*` variables apply as usual."},
		{Name: "LINOONE_CONFIG_REVISION", Area: AreaOther, ReadBy: "none (Terraform sets it)",
			Doc: "A hash of the SSM values a function reads at start, so that a change starts new instances. No configuration refuses a variable it does not read."},
	}
}
