// Package config reads Linoone's configuration from the environment: one typed
// configuration per binary (the local commands and the Lambda functions), each with
// its defaults, built from shared field readers. A Load function reports every bad
// variable at once, and reads only the variables it names: any other is ignored,
// never refused.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/tty"
)

// Defaults shared by more than one configuration.
const (
	defaultResolverAddr   = "127.0.0.1:8080"
	defaultManagementAddr = "127.0.0.1:8081"
	defaultPersistAddr    = "127.0.0.1:8082"
)

// The patterns leave long bounds to the code that uses them (maxBusName, maxEnvironment):
// a bounded repetition such as {1,256} compiles into that many copies of its class,
// and compiling those at every binary's start was a large share of the Lambdas' cold
// starts (GODEBUG=inittrace=1; scripts/bench-lambda-init.sh).
var (
	busNamePattern = regexp.MustCompile(`^[A-Za-z0-9._\-/]+$`)
	busARNPattern  = regexp.MustCompile(`^arn:aws[a-z\-]*:events:[a-z0-9\-]+:\d{12}:event-bus/([A-Za-z0-9._\-/]+)$`)
	ssmNamePattern = regexp.MustCompile(`^/?[A-Za-z0-9_.\-/]+$`)
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$`)
	envPattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9\-]*$`)
)

const (
	maxBusName     = 256 // EventBridge's limit on an event bus name
	maxEnvironment = 32  // LINOONE_ENVIRONMENT's longest
)

// Logging is the log level and format every long-running binary reads.
type Logging struct {
	LogLevel  slog.Level // LINOONE_LOG_LEVEL: debug, info (default), warn, error
	LogFormat string     // LINOONE_LOG_FORMAT: "" (text on a terminal, else JSON), text, json
}

// Logger returns the logger the configuration asks for: JSON lines, which log
// collectors and `linoone recover --from-log` read, unless LINOONE_LOG_FORMAT=text,
// or unset and w is a terminal, where a person reads them.
func (l Logging) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.LogLevel}
	if l.LogFormat == "text" || (l.LogFormat == "" && tty.IsTerminal(w)) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// reader reads variables and collects every bad one.
type reader struct {
	getenv func(string) string
	errs   []error
}

func newReader(getenv func(string) string) *reader { return &reader{getenv: getenv} }

// err is every bad variable, joined, or nil.
func (r *reader) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("configuration: %w", errors.Join(r.errs...))
}

func (r *reader) bad(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
}

// get is the variable without surrounding space, or def when that is empty.
func (r *reader) get(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

// required reports name when v is empty and returns v.
func (r *reader) required(name, v string) string {
	if v == "" {
		r.bad(name, "required")
	}
	return v
}

func (r *reader) addr(name, def string) string {
	v := r.get(name, def)
	if _, port, err := net.SplitHostPort(v); err != nil {
		r.bad(name, "%q is not host:port", v)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		// Not 0 either: the URLs derived from an address (the resolver base URL,
		// the Persist and management URLs) would name port 0.
		r.bad(name, "%q has no valid port (1 to 65535)", v)
	}
	return v
}

func (r *reader) boolean(name string) bool {
	switch v := strings.ToLower(r.get(name, "false")); v {
	case "true", "1", "yes":
		return true
	case "false", "0", "no":
		return false
	default:
		r.bad(name, "%q is not a boolean (true or false)", v)
		return false
	}
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.get(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > time.Minute {
		r.bad(name, "%q is not a duration between 0 and 1m (e.g. 500ms)", v)
		return def
	}
	return d
}

// durationRange reads a duration from lo to hi, default def.
func (r *reader) durationRange(name string, def, lo, hi time.Duration) time.Duration {
	v := r.get(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		r.bad(name, "%q is not a duration from %s to %s", v, lo, hi)
		return def
	}
	return d
}

// parse reads a value that its owning package parses, such as a mode.
func parse[T any](r *reader, name, def string, p func(string) (T, error)) T {
	v, err := p(r.get(name, def))
	if err != nil {
		r.bad(name, "%v", err)
	}
	return v
}

// httpURL reads an optional service URL (CheckServiceURL).
func (r *reader) httpURL(name, def string) string {
	v := r.get(name, def)
	if v == "" {
		return v
	}
	if err := CheckServiceURL(v); err != nil {
		r.bad(name, "%v", err)
	}
	return v
}

// CheckServiceURL checks the base URL of a service that a client appends its routes
// to: an http(s) URL with a host, a port from 1 to 65535 if any, a path if any, and
// no query, fragment or userinfo, as a resolver base URL. The error shows raw with
// its userinfo masked: it is refused because it may hold a password, and the
// message goes to a terminal or a log.
func CheckServiceURL(raw string) error {
	if _, _, err := shorturl.ParseBaseURL(raw); err != nil {
		return fmt.Errorf("%q is not an http(s) URL with a host and no query, fragment or userinfo", shorturl.RedactURL(raw))
	}
	return nil
}

// ssmParam reads an optional SSM parameter name.
func (r *reader) ssmParam(name string) string {
	v := r.get(name, "")
	if v != "" && (len(v) > 2048 || !ssmNamePattern.MatchString(v)) {
		r.bad(name, "%q is not an SSM parameter name", v)
	}
	return v
}
