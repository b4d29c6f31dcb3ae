// Package config reads Linoone's configuration from the environment: one Load that
// applies defaults and reports every bad variable at once.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/shorturl"
)

// Config is the whole configuration; each binary uses the part it needs.
type Config struct {
	// Local mode (linoone serve).
	ResolverAddr   string // LINOONE_RESOLVER_ADDR, default 127.0.0.1:8080
	ManagementAddr string // LINOONE_MANAGEMENT_ADDR, default 127.0.0.1:8081
	PersistAddr    string // LINOONE_PERSIST_ADDR, default 127.0.0.1:8082
	DataDir        string // LINOONE_DATA_DIR, default ./.linoone
	BusFault       string // LINOONE_BUS_FAULT: "" or "always"
	Consumer       string // LINOONE_CONSUMER: "inline" (serve delivers the bus) or "external" (linoone consume does)
	BusSync        string // LINOONE_BUS_SYNC: "each" (fsync before every acknowledgement) or "interval"

	// Shared.
	Region           string        // LINOONE_REGION, else AWS_REGION, default us-east-1
	Environment      string        // LINOONE_ENVIRONMENT, default "local"
	LogLevel         slog.Level    // LINOONE_LOG_LEVEL: debug, info, warn, error
	ResolverBaseURL  string        // LINOONE_RESOLVER_BASE_URL, default http://<resolver addr>
	ResolverBaseSSM  string        // LINOONE_RESOLVER_BASE_URL_PARAM: SSM parameter holding it
	PersistURL       string        // LINOONE_PERSIST_URL, default http://<persist addr> (local Persist)
	PersistSSM       string        // LINOONE_PERSIST_URL_PARAM: SSM parameter holding it
	PersistSigV4     bool          // LINOONE_PERSIST_SIGV4: sign Persist calls (AWS)
	PersistInline    bool          // LINOONE_PERSIST_INLINE_LITERALS: Neptune mode
	PersistTimeout   time.Duration // LINOONE_PERSIST_TIMEOUT, default 2s
	PublishTimeout   time.Duration // LINOONE_PUBLISH_TIMEOUT, default 500ms
	EventBus         string        // LINOONE_EVENT_BUS: shared bus name or ARN
	ClickDLQURL      string        // LINOONE_CLICK_DLQ_URL
	MetricsNamespace string        // LINOONE_METRICS_NAMESPACE, default Linoone
	CacheSize        int           // LINOONE_RESOLVER_CACHE_SIZE, default 100000 (0 disables)

	// Set when LINOONE_PERSIST_URL was not given: serve starts local Persist.
	LocalPersist bool
}

var (
	busNamePattern = regexp.MustCompile(`^[A-Za-z0-9._\-/]{1,256}$`)
	busARNPattern  = regexp.MustCompile(`^arn:aws[a-z\-]*:events:[a-z0-9\-]+:\d{12}:event-bus/[A-Za-z0-9._\-/]{1,256}$`)
	ssmNamePattern = regexp.MustCompile(`^/?[A-Za-z0-9_.\-/]+$`)
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$`)
	envPattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9\-]{0,31}$`)
)

// Load reads the configuration. Every bad variable is reported, joined in one error.
func Load(getenv func(string) string) (Config, error) {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	addr := func(name, def string) string {
		v := get(name, def)
		if _, port, err := net.SplitHostPort(v); err != nil {
			bad(name, "%q is not host:port", v)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			bad(name, "%q has no valid port", v)
		}
		return v
	}
	boolean := func(name string) bool {
		switch v := strings.ToLower(get(name, "false")); v {
		case "true", "1", "yes":
			return true
		case "false", "0", "no":
			return false
		default:
			bad(name, "%q is not a boolean (true or false)", v)
			return false
		}
	}
	duration := func(name string, def time.Duration) time.Duration {
		v := get(name, "")
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Minute {
			bad(name, "%q is not a duration between 0 and 1m (e.g. 500ms)", v)
			return def
		}
		return d
	}

	c := Config{
		ResolverAddr:     addr("LINOONE_RESOLVER_ADDR", "127.0.0.1:8080"),
		ManagementAddr:   addr("LINOONE_MANAGEMENT_ADDR", "127.0.0.1:8081"),
		PersistAddr:      addr("LINOONE_PERSIST_ADDR", "127.0.0.1:8082"),
		DataDir:          get("LINOONE_DATA_DIR", "./.linoone"),
		BusFault:         get("LINOONE_BUS_FAULT", ""),
		Consumer:         get("LINOONE_CONSUMER", "inline"),
		BusSync:          get("LINOONE_BUS_SYNC", "each"),
		Region:           get("LINOONE_REGION", get("AWS_REGION", "us-east-1")),
		Environment:      get("LINOONE_ENVIRONMENT", "local"),
		ResolverBaseSSM:  get("LINOONE_RESOLVER_BASE_URL_PARAM", ""),
		PersistSSM:       get("LINOONE_PERSIST_URL_PARAM", ""),
		PersistSigV4:     boolean("LINOONE_PERSIST_SIGV4"),
		PersistInline:    boolean("LINOONE_PERSIST_INLINE_LITERALS"),
		PersistTimeout:   duration("LINOONE_PERSIST_TIMEOUT", 2*time.Second),
		PublishTimeout:   duration("LINOONE_PUBLISH_TIMEOUT", 500*time.Millisecond),
		EventBus:         get("LINOONE_EVENT_BUS", ""),
		ClickDLQURL:      get("LINOONE_CLICK_DLQ_URL", ""),
		MetricsNamespace: get("LINOONE_METRICS_NAMESPACE", "Linoone"),
	}
	c.ResolverBaseURL = get("LINOONE_RESOLVER_BASE_URL", "http://"+c.ResolverAddr)
	c.PersistURL = get("LINOONE_PERSIST_URL", "")
	if c.PersistURL == "" && c.PersistSSM == "" {
		c.PersistURL, c.LocalPersist = "http://"+c.PersistAddr, true
	}

	if _, _, err := shorturl.ParseBaseURL(c.ResolverBaseURL); err != nil {
		bad("LINOONE_RESOLVER_BASE_URL", "%v", err)
	}
	if c.PersistURL != "" && !strings.HasPrefix(c.PersistURL, "http://") && !strings.HasPrefix(c.PersistURL, "https://") {
		bad("LINOONE_PERSIST_URL", "%q is not an http(s) URL", c.PersistURL)
	}
	for name, v := range map[string]string{"LINOONE_RESOLVER_BASE_URL_PARAM": c.ResolverBaseSSM, "LINOONE_PERSIST_URL_PARAM": c.PersistSSM} {
		if v != "" && (len(v) > 2048 || !ssmNamePattern.MatchString(v)) {
			bad(name, "%q is not an SSM parameter name", v)
		}
	}
	if !regionPattern.MatchString(c.Region) {
		bad("LINOONE_REGION", "%q is not an AWS region name", c.Region)
	}
	if !envPattern.MatchString(c.Environment) {
		bad("LINOONE_ENVIRONMENT", "%q must be lower-case letters, digits and dashes", c.Environment)
	}
	if c.BusFault != "" && c.BusFault != "always" {
		bad("LINOONE_BUS_FAULT", "%q: the only fault is \"always\"", c.BusFault)
	}
	if c.Consumer != "inline" && c.Consumer != "external" {
		bad("LINOONE_CONSUMER", "%q is neither inline nor external", c.Consumer)
	}
	if c.BusSync != "each" && c.BusSync != "interval" {
		bad("LINOONE_BUS_SYNC", "%q is neither each nor interval", c.BusSync)
	}
	if c.EventBus != "" && !busNamePattern.MatchString(c.EventBus) && !busARNPattern.MatchString(c.EventBus) {
		bad("LINOONE_EVENT_BUS", "%q is neither an event bus name nor an event bus ARN", c.EventBus)
	}
	if c.ClickDLQURL != "" && !strings.HasPrefix(c.ClickDLQURL, "https://") && !strings.HasPrefix(c.ClickDLQURL, "http://") {
		bad("LINOONE_CLICK_DLQ_URL", "%q is not a queue URL", c.ClickDLQURL)
	}
	if c.DataDir == "" {
		bad("LINOONE_DATA_DIR", "must not be empty")
	}
	switch v := strings.ToLower(get("LINOONE_LOG_LEVEL", "info")); v {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		bad("LINOONE_LOG_LEVEL", "%q is not one of debug, info, warn, error", v)
	}
	if v := get("LINOONE_RESOLVER_CACHE_SIZE", "100000"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10_000_000 {
			bad("LINOONE_RESOLVER_CACHE_SIZE", "%q is not a size between 0 and 10000000", v)
		}
		c.CacheSize = n
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %w", errors.Join(errs...))
	}
	return c, nil
}

// Require reports the variables a binary needs that are unset.
func (c Config) Require(names ...string) error {
	var errs []error
	for _, n := range names {
		var set bool
		switch n {
		case "LINOONE_EVENT_BUS":
			set = c.EventBus != ""
		case "LINOONE_CLICK_DLQ_URL":
			set = c.ClickDLQURL != ""
		case "LINOONE_PERSIST_URL":
			set = c.PersistURL != "" && !c.LocalPersist || c.PersistSSM != ""
		default:
			errs = append(errs, fmt.Errorf("%s: unknown requirement", n))
			continue
		}
		if !set {
			errs = append(errs, fmt.Errorf("%s: required", n))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("configuration: %w", errors.Join(errs...))
	}
	return nil
}

// Logger returns the JSON logger the configuration asks for.
func (c Config) Logger(w interface{ Write([]byte) (int, error) }) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel}))
}
