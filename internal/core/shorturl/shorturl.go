// Package shorturl is Linoone's domain core: tokens, the target URL rules, the
// short_url artifact, and the Shorten, Resolve, Record and Replay use cases. It talks
// to the world only through the ports declared here (Store, Publisher, DeadLetters)
// and imports no HTTP, AWS or generated API code; a test keeps it that way. The click
// fact's wire format is package clickfact's.
package shorturl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
)

// Errors the use cases return; the HTTP edge maps them once with errors.Is.
var (
	ErrNotFound       = errors.New("short url not found")
	ErrUnavailable    = errors.New("persist unavailable")
	ErrTokenSpaceBusy = errors.New("no free token found")
	ErrInvalidBaseURL = errors.New("invalid resolver base url")
	// ErrInvalidStored reports a short URL the store holds that issuance would have
	// refused (a target that is not an http(s) URL with a host and without userinfo
	// or control characters), or several short URLs with different targets for one
	// token. The resolver never redirects there; errors that wrap it wrap
	// ErrNotFound too.
	ErrInvalidStored = errors.New("stored short url is invalid")
)

// Label and property keys of the short_url vertex: its complete identity.
const (
	VertexLabel   = "short_url"
	PropToken     = "short_url_token"
	PropPath      = "short_url_path"
	PropTargetURL = "target_url"
)

// ShortURL is a short URL as Persist stores it.
type ShortURL struct {
	Token  Token
	Path   string // the full public short URL: resolver base URL + "/" + token
	Target string // where the resolver redirects
}

// Vertex is the short_url vertex: exactly short_url_token, short_url_path and
// target_url — nothing producer- or server-specific, since every property is part of
// the vertex's identity.
func (u ShortURL) Vertex() (graphson.Vertex, error) {
	return graphson.NewVertex(VertexLabel, graphson.Properties{
		PropToken:     string(u.Token),
		PropPath:      u.Path,
		PropTargetURL: u.Target,
	})
}

// Artifact is the GraphSON v3 document ingested into Persist for a new short URL.
func (u ShortURL) Artifact() (graphson.Document, error) {
	v, err := u.Vertex()
	if err != nil {
		return graphson.Document{}, fmt.Errorf("build short_url vertex: %w", err)
	}
	return graphson.Document{Vertices: []graphson.Vertex{v}}, nil
}

// Store is where short URLs live (Persist). Lookup returns ErrNotFound for an
// unknown token; both methods wrap ErrUnavailable when the store cannot answer.
type Store interface {
	Lookup(ctx context.Context, token Token) (ShortURL, error)
	Save(ctx context.Context, u ShortURL) error
}

// Issuer issues short URLs. It is safe for concurrent use.
type Issuer struct {
	store    Store
	base     string // resolver base URL without a trailing slash
	hosts    HostRules
	rand     io.Reader
	maxDraws int
	screen   Screening
	batch    BatchStore   // nil: no ShortenBatch
	idem     *idempotency // its secret nil: no idempotent issuance (yet)
	together *coalescer   // nil: each ShortenFor checks and writes on its own
}

// IssuerConfig configures an Issuer. Rand should be crypto/rand.Reader.
type IssuerConfig struct {
	Store           Store
	ResolverBaseURL string
	Rand            io.Reader
	MaxDraws        int // token draws before giving up on collisions; default 5
	// SelfHosts are the other hosts this service answers on, as host or host:port
	// (the management API's, e.g. its listen address "127.0.0.1:8081"). Targets
	// there are refused (RuleSelf) like targets on the resolver base URL's host.
	SelfHosts []string
	// MachineNames are the names this machine answers to besides localhost (its
	// hostname, the names /etc/hosts maps to a loopback address): where an own host
	// is on this machine, targets on them are refused too (RuleSelf), or a short URL
	// could chain through the service and one visit count as several clicks.
	MachineNames []string
	// ReservedHosts are hosts targets must not point at (RuleReserved): names, IP
	// literals and "*.domain" patterns; hostname.ParseList reads the comma list
	// format of LINOONE_RESERVED_HOSTS.
	ReservedHosts []string
	// Screening refuses targets the operator's deny list blocks (ErrTargetBlocked),
	// after the target URL rules and before a token is drawn or the store touched.
	Screening Screening
	// Batch is the store ShortenBatch checks and writes whole batches through
	// (Persist's client); nil: ShortenBatch fails with ErrNoBatchStore.
	Batch BatchStore
	// IdempotencySecret keys the derivation of tokens from Idempotency-Keys, at
	// least MinIdempotencySecretBytes long; nil: idempotent issuance fails with
	// ErrIdempotencyUnavailable.
	IdempotencySecret []byte
	// Coalesce makes the ShortenFor calls that wait at the same moment share one
	// LookupMany and one SaveMany through Batch, each still answered only once its
	// short URL was written. For a server with concurrent producers (serve); a
	// Lambda function handles one request at a time and gains nothing.
	Coalesce bool
}

// NewIssuer checks the configuration and builds an Issuer.
func NewIssuer(c IssuerConfig) (*Issuer, error) {
	if c.Store == nil || c.Rand == nil {
		return nil, errors.New("issuer needs a store and a random source")
	}
	base, host, err := ParseBaseURL(c.ResolverBaseURL)
	if err != nil {
		return nil, err
	}
	hosts, err := NewHostRules(append([]string{host}, c.SelfHosts...), c.ReservedHosts)
	if err != nil {
		return nil, fmt.Errorf("issuer target host rules: %w", err)
	}
	hosts = hosts.withMachineNames(c.MachineNames)
	if c.MaxDraws <= 0 {
		c.MaxDraws = 5
	}
	is := &Issuer{store: c.Store, base: base, hosts: hosts, rand: c.Rand, maxDraws: c.MaxDraws, screen: c.Screening, batch: c.Batch}
	if c.Coalesce {
		if c.Batch == nil {
			return nil, fmt.Errorf("issuer coalescing needs a batch store: %w", ErrNoBatchStore)
		}
		is.together = newCoalescer(is)
	}
	is.idem = &idempotency{}
	if c.IdempotencySecret != nil {
		if err := is.SetIdempotencySecret(c.IdempotencySecret); err != nil {
			return nil, err
		}
	}
	return is, nil
}

// SetIdempotencySecret gives an issuer made without an idempotency secret the one
// its operator has put since: the issue function reads its parameter again while it
// has none, so that Idempotency-Key requests work within seconds of the operator's
// put, not only on new instances. An issuer that has a secret keeps it: another one
// would change the token of every key under requests in flight.
func (s *Issuer) SetIdempotencySecret(secret []byte) error {
	if len(secret) < MinIdempotencySecretBytes {
		return fmt.Errorf("idempotency secret has %d bytes, want at least %d", len(secret), MinIdempotencySecretBytes)
	}
	secret = bytes.Clone(secret)
	if !s.idem.secret.CompareAndSwap(nil, &secret) {
		return errors.New("the issuer has an idempotency secret already")
	}
	return nil
}

// ParseBaseURL checks a resolver base URL (absolute http(s), a host name, a port
// from 1 to 65535 if any, no query, fragment or userinfo, not even an empty one)
// and returns it without a trailing slash, and its host name. Every short URL
// issued carries it for good, so what browsers could not follow is refused.
func ParseBaseURL(raw string) (base, host string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error // its message quotes raw whole
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", "", fmt.Errorf("%w: %q: %v", ErrInvalidBaseURL, RedactURL(raw), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", "", fmt.Errorf("%w: %q must be an absolute http(s) URL with a host and no query, fragment or userinfo", ErrInvalidBaseURL, RedactURL(raw))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("%w: %q has no valid port", ErrInvalidBaseURL, raw)
		}
	}
	return strings.TrimRight(raw, "/"), u.Hostname(), nil
}

// RedactURL is raw with its userinfo, password or user name (which may be a token),
// replaced by xxxxx, for a message that names a URL refused for holding it: the
// message goes to a terminal or a log. A value that does not parse as a URL is
// masked from its "://" (or its start) up to its last "@".
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if u.User == nil {
			return raw
		}
		u.User = url.User("xxxxx")
		return u.String()
	}
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + len("://")
	}
	return raw[:start] + "xxxxx" + raw[at:]
}

// Shorten validates target, draws a token no other short URL has, and writes the
// short URL to the store synchronously. It returns only what the store acknowledged.
func (s *Issuer) Shorten(ctx context.Context, target string) (ShortURL, error) {
	return s.shorten(ctx, target, s.hosts)
}

// ShortenFor is Shorten for a request that reached the service at requestHost (the
// Host it was sent to, host or host:port): a target there points back at this
// service too, wherever it is deployed (on AWS, the management API's own domain,
// which no configuration names).
func (s *Issuer) ShortenFor(ctx context.Context, target, requestHost string) (ShortURL, error) {
	return s.shorten(ctx, target, s.hosts.withRequestHost(requestHost))
}

// shortURL is the short URL of tok on the resolver base URL.
func (s *Issuer) shortURL(tok Token, target string) ShortURL {
	return ShortURL{Token: tok, Path: s.base + "/" + string(tok), Target: target}
}

// admit checks a target against the target URL rules, then the deny list: what
// every issuance does before a token is drawn or the store touched.
func (s *Issuer) admit(target string, hosts HostRules) error {
	if err := CheckTarget(target, hosts); err != nil {
		return err
	}
	return s.screen.check("", target)
}

func (s *Issuer) shorten(ctx context.Context, target string, hosts HostRules) (ShortURL, error) {
	if err := s.admit(target, hosts); err != nil {
		return ShortURL{}, err
	}
	if s.together != nil {
		return s.together.issue(ctx, target)
	}
	for range s.maxDraws {
		tok, err := NewToken(s.rand)
		if err != nil {
			return ShortURL{}, err
		}
		_, err = s.store.Lookup(ctx, tok)
		switch {
		case err == nil, errors.Is(err, ErrInvalidStored):
			continue // collision, or a token held by what issuance did not write: draw again
		case !errors.Is(err, ErrNotFound):
			return ShortURL{}, fmt.Errorf("check token %s: %w", tok, err)
		}
		u := s.shortURL(tok, target)
		if err := s.confirmWrite(ctx, []ShortURL{u}, s.store.Save(ctx, u)); err != nil {
			return ShortURL{}, fmt.Errorf("save token %s: %w", tok, err)
		}
		return u, nil
	}
	return ShortURL{}, fmt.Errorf("%w after %d draws", ErrTokenSpaceBusy, s.maxDraws)
}

// Visit is what the resolver knows about one click.
type Visit struct {
	IP        string
	UserAgent string
	At        time.Time
}

// Resolver resolves tokens and records every click as a graph fact. It is safe for
// concurrent use.
type Resolver struct {
	store    Store
	recorder *Recorder
	screen   Screening
}

// NewResolver builds a Resolver. recorder may be nil only where no click is recorded
// (tests of lookup alone). A short URL whose target screen's deny list blocks now is
// ErrLinkBlocked; the zero Screening blocks nothing.
func NewResolver(store Store, recorder *Recorder, screen Screening) (*Resolver, error) {
	if store == nil {
		return nil, errors.New("resolver needs a store")
	}
	return &Resolver{store: store, recorder: recorder, screen: screen}, nil
}

// Resolve looks the token up and, when found, records the click before returning the
// short URL. Recording never fails the resolution: a fact that cannot be published is
// dead-lettered, and one that cannot be dead-lettered is logged whole.
func (r *Resolver) Resolve(ctx context.Context, raw string, v Visit) (ShortURL, error) {
	u, err := r.Find(ctx, raw)
	if err != nil {
		return ShortURL{}, err
	}
	if r.recorder != nil {
		r.recorder.Record(ctx, u, v)
	}
	return u, nil
}

// Find looks the token up as Resolve does, without recording a click (HEAD, inspect).
// The store is not trusted: a target issuance would have refused is ErrInvalidStored.
// The deny list is checked after every lookup, cached or not: a target blocked now
// is ErrLinkBlocked, so Resolve records no click for it.
func (r *Resolver) Find(ctx context.Context, raw string) (ShortURL, error) {
	if !IsToken(raw) {
		return ShortURL{}, ErrInvalidToken
	}
	u, err := r.store.Lookup(ctx, Token(raw))
	if err != nil {
		return ShortURL{}, err
	}
	if err := checkStoredTarget(u.Target); err != nil {
		return ShortURL{}, fmt.Errorf("token %s: %w: %w: %v", raw, ErrNotFound, ErrInvalidStored, err)
	}
	if err := r.screen.check(Token(raw), u.Target); err != nil {
		return ShortURL{}, err
	}
	return u, nil
}

// discardLogger is used when no logger is configured.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
