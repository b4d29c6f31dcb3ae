package config

import (
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/hostname"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localbus"
)

// The readers of single variables that more than one configuration reads, each
// with its default and its check.

func (r *reader) logging() Logging {
	var l Logging
	switch v := strings.ToLower(r.get("LINOONE_LOG_LEVEL", "info")); v {
	case "debug":
		l.LogLevel = slog.LevelDebug
	case "info":
		l.LogLevel = slog.LevelInfo
	case "warn", "warning":
		l.LogLevel = slog.LevelWarn
	case "error":
		l.LogLevel = slog.LevelError
	default:
		r.bad("LINOONE_LOG_LEVEL", "%q is not one of debug, info, warn, error", v)
	}
	switch v := strings.ToLower(r.get("LINOONE_LOG_FORMAT", "")); v {
	case "", "text", "json":
		l.LogFormat = v
	default:
		r.bad("LINOONE_LOG_FORMAT", "%q is not one of text, json", v)
	}
	return l
}

// region is LINOONE_REGION, else AWS_REGION, default us-east-1.
func (r *reader) region() string {
	v := r.get("LINOONE_REGION", r.get("AWS_REGION", "us-east-1"))
	if !regionPattern.MatchString(v) {
		r.bad("LINOONE_REGION", "%q is not an AWS region name", v)
	}
	return v
}

func (r *reader) environment() string {
	v := r.get("LINOONE_ENVIRONMENT", "local")
	if len(v) > maxEnvironment || !envPattern.MatchString(v) {
		r.bad("LINOONE_ENVIRONMENT", "%q must be 1 to %d lower-case letters, digits and dashes, not starting with a dash", v, maxEnvironment)
	}
	return v
}

func (r *reader) dataDir() string {
	v := r.get("LINOONE_DATA_DIR", "./.linoone")
	if v == "" {
		r.bad("LINOONE_DATA_DIR", "must not be empty")
	}
	return v
}

func (r *reader) resolverAddr() string { return r.addr("LINOONE_RESOLVER_ADDR", defaultResolverAddr) }

// resolverBaseURL is LINOONE_RESOLVER_BASE_URL, default http://<resolverAddr> when
// that names one host. An address on every interface (":8080", "0.0.0.0:8080")
// names none that visitors use, and short URLs carry the base for good, so then the
// base URL must be given.
func (r *reader) resolverBaseURL(resolverAddr string) string {
	def := "http://" + resolverAddr
	if host, _, err := net.SplitHostPort(resolverAddr); err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
		def = ""
	}
	v := r.get("LINOONE_RESOLVER_BASE_URL", def)
	switch _, _, err := shorturl.ParseBaseURL(v); {
	case v == "" && def == "":
		r.bad("LINOONE_RESOLVER_BASE_URL", "required: LINOONE_RESOLVER_ADDR %q listens on every interface, and every short URL carries the base URL visitors reach it at", resolverAddr)
	case err != nil:
		r.bad("LINOONE_RESOLVER_BASE_URL", "%v", err)
	}
	return v
}

// functionBaseURL is the Issue function's resolver base URL, LINOONE_RESOLVER_BASE_URL:
// required (a function has no resolver address of its own to default to).
func (r *reader) functionBaseURL() string {
	v := r.get("LINOONE_RESOLVER_BASE_URL", "")
	if _, _, err := shorturl.ParseBaseURL(v); v != "" && err != nil {
		r.bad("LINOONE_RESOLVER_BASE_URL", "%v", err)
	}
	return r.functionURL("LINOONE_RESOLVER_BASE_URL", v)
}

// reservedHosts is LINOONE_RESERVED_HOSTS: hosts and "*.domain" patterns that no
// target may point at, comma-separated.
func (r *reader) reservedHosts() []string {
	l, err := hostname.ParseList(r.get("LINOONE_RESERVED_HOSTS", ""))
	if err != nil {
		r.bad("LINOONE_RESERVED_HOSTS", "%v", err)
	}
	return l
}

func (r *reader) busFault() string {
	v := r.get("LINOONE_BUS_FAULT", "")
	if v != "" && v != localbus.FaultAlways {
		r.bad("LINOONE_BUS_FAULT", "%q: the only fault is \"always\"", v)
	}
	return v
}

func (r *reader) eventBus() string {
	v := r.get("LINOONE_EVENT_BUS", "")
	if v != "" && !validEventBus(v) {
		r.bad("LINOONE_EVENT_BUS", "%q is neither an event bus name nor an event bus ARN", v)
	}
	return v
}

// validEventBus reports whether v is an event bus's name or its ARN, the name 1 to
// maxBusName characters either way.
func validEventBus(v string) bool {
	if busNamePattern.MatchString(v) {
		return len(v) <= maxBusName
	}
	m := busARNPattern.FindStringSubmatch(v)
	return m != nil && len(m[1]) <= maxBusName
}

func (r *reader) clickDLQURL() string {
	v := r.get("LINOONE_CLICK_DLQ_URL", "")
	if v != "" && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
		r.bad("LINOONE_CLICK_DLQ_URL", "%q is not a queue URL", v)
	}
	return v
}

// MaxCacheSize bounds LINOONE_RESOLVER_CACHE_SIZE.
const MaxCacheSize = 10_000_000

func (r *reader) cacheSize() int {
	v := r.get("LINOONE_RESOLVER_CACHE_SIZE", "100000")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > MaxCacheSize {
		r.bad("LINOONE_RESOLVER_CACHE_SIZE", "%q is not a size between 0 and %d", v, MaxCacheSize)
	}
	return n
}

// intRange reads an integer between lo and hi, default def.
func (r *reader) intRange(name string, def, lo, hi int) int {
	v := r.get(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.bad(name, "%q is not an integer between %d and %d", v, lo, hi)
		return def
	}
	return n
}

func (r *reader) publishTimeout() time.Duration {
	return r.duration("LINOONE_PUBLISH_TIMEOUT", 500*time.Millisecond)
}

func (r *reader) persistTimeout() time.Duration {
	return r.duration("LINOONE_PERSIST_TIMEOUT", 2*time.Second)
}

func (r *reader) metricsNamespace() string { return r.get("LINOONE_METRICS_NAMESPACE", "Linoone") }

// denyListFile is LINOONE_DENYLIST_FILE, default denylist.txt in the data directory.
func (r *reader) denyListFile(dataDir string) string {
	return r.get("LINOONE_DENYLIST_FILE", filepath.Join(dataDir, "denylist.txt"))
}

// emf is LINOONE_EMF: whether serve writes CloudWatch EMF lines among its logs.
// Only CloudWatch reads them, so the default is on only on Lambda.
func (r *reader) emf() bool {
	def := "off"
	if r.getenv("AWS_LAMBDA_FUNCTION_NAME") != "" {
		def = "on"
	}
	switch v := strings.ToLower(r.get("LINOONE_EMF", def)); v {
	case "on", "true", "1":
		return true
	case "off", "false", "0":
		return false
	default:
		r.bad("LINOONE_EMF", "%q is not on or off", v)
		return false
	}
}
