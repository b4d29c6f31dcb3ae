// Package clickfact is the wire format of a click: the GraphFactProduced
// short_url.visited fact (its GraphSON v3 vertex and edge), the EventBridge event that
// carries it on the local bus, and the click DLQ's dead letter. It is defined here
// once: the resolver builds it, the buses frame it, the consumer and replay read it
// back. It knows GraphSON, not the domain: the core hands it a Click.
//
// The fact's shape is pinned by schemas/graph-fact.schema.json, the dead letter's by
// schemas/click-dlq-message.schema.json, and the identities by schemas/IDENTITY.md.
package clickfact

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/core/graphson"
)

// The fact's constants (schemas/graph-fact.schema.json).
const (
	Source            = "shorturl"
	DetailType        = "GraphFactProduced"
	FactType          = "short_url.visited"
	SchemaVersion     = "1.0"
	GraphSONFormat    = "graphson-v3"
	EntityType        = "short_url"
	EdgeLabel         = "short_url_visited"
	PropEventID       = "event_identifier"
	PropVisitorIP     = "visitor_ip_address"
	PropUserAgent     = "user_agent"
	PropEffectiveAt   = "effective_at"
	IdempotencyPrefix = "shorturl:"
	EventIDPrefix     = "ev_"
	// MaxUserAgent is the longest user agent a fact carries, in bytes; longer ones
	// are cut at a character boundary.
	MaxUserAgent = 1024

	// TokenLength is the number of base62 characters of a short URL's token.
	TokenLength = 10

	timeLayout = "2006-01-02T15:04:05.000Z"
)

// ErrInvalid reports a graph fact or dead letter that is not one Linoone builds.
var ErrInvalid = errors.New("invalid graph fact")

// Fact is one GraphFactProduced event: its idempotency key and the Detail JSON.
type Fact struct {
	IdempotencyKey string
	EventID        string
	Token          string // the visited short URL's token
	Detail         []byte
}

// Click is what a fact records: the short_url vertex's three properties and the
// visitor.
type Click struct {
	Token, Path, Target string
	IP, UserAgent       string
	At                  time.Time
}

// Build builds the short_url.visited fact of one click: the short_url vertex
// projection and a short_url_visited edge carrying exactly event_identifier,
// visitor_ip_address, user_agent and effective_at. The edge is a self-loop on the
// short_url vertex (the graph schema has no visitor vertex; schemas/IDENTITY.md), and
// its id is the identity hash, so a replayed fact is the same edge.
func Build(c Click, eventID string) (Fact, error) { return Append(nil, c, eventID) }

// Append is Build writing into dst's storage, so that a caller can reuse one buffer
// per click.
//
// It runs on every redirect, so it writes the fixed shape directly — keys in their
// canonical order, no maps, no reflection — into one buffer. The bytes are exactly
// those of graphson.CanonicalVertex/CanonicalEdge and graphson.Document.AppendJSON
// (a test compares them on random inputs).
func Append(dst []byte, c Click, eventID string) (Fact, error) {
	if !isEventID(eventID) {
		return Fact{}, fmt.Errorf("%w: event identifier %q is not ev_ + ULID", ErrInvalid, eventID)
	}
	if !IsToken(c.Token) || !utf8.ValidString(c.Path) || !utf8.ValidString(c.Target) || !utf8.ValidString(c.IP) {
		return Fact{}, fmt.Errorf("%w: short url or visitor address is not valid", ErrInvalid)
	}
	c.UserAgent = strings.ToValidUTF8(c.UserAgent, "\uFFFD")
	if len(c.UserAgent) > MaxUserAgent {
		c.UserAgent = strings.ToValidUTF8(c.UserAgent[:MaxUserAgent], "")
	}
	var at [len(timeLayout)]byte
	effectiveAt := appendTime(at[:0], c.At, true)

	b := dst[:0]
	if need := 2048 + 2*(len(c.Path)+len(c.Target)+len(c.UserAgent)); cap(b) < need {
		b = make([]byte, 0, need)
	}
	var vid, eid [2 * sha256.Size]byte
	b = appendIdentities(b, c, effectiveAt, eventID, &vid, &eid)
	b = append(b[:0], `{"schema_version":"`+SchemaVersion+`","graphson_format":"`+GraphSONFormat+
		`","fact_type":"`+FactType+`","entity_types":["`+EntityType+`"],"idempotency_key":"`+IdempotencyPrefix...)
	b = append(b, eventID...)
	b = append(b, `","graphson":{"vertices":[`...)
	b = appendVertex(b, c, vid[:])
	b = append(b, `],"edges":[`...)
	b = appendEdge(b, c, effectiveAt, eventID, vid[:], eid[:])
	b = append(b, "]}}"...)
	return Fact{IdempotencyKey: IdempotencyPrefix + eventID, EventID: eventID, Token: c.Token, Detail: b}, nil
}

// appendIdentities hashes the canonical forms of the vertex and the edge (into vid
// and eid, hex) using b as scratch space, and returns b for reuse.
func appendIdentities(b []byte, c Click, effectiveAt []byte, eventID string, vid, eid *[2 * sha256.Size]byte) []byte {
	b = append(b, `{"label":"short_url","properties":{"short_url_path":`...)
	b = graphson.AppendString(b, c.Path)
	b = append(b, `,"short_url_token":`...)
	b = graphson.AppendString(b, c.Token)
	b = append(b, `,"target_url":`...)
	b = graphson.AppendString(b, c.Target)
	b = append(b, "}}"...)
	sum := sha256.Sum256(b)
	hex.Encode(vid[:], sum[:])
	b = append(b[:0], `{"in_v":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","label":"`+EdgeLabel+`","out_v":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","properties":{"effective_at":"`...)
	b = append(b, effectiveAt...)
	b = append(b, `","event_identifier":"`...)
	b = append(b, eventID...)
	b = append(b, `","user_agent":`...)
	b = graphson.AppendString(b, c.UserAgent)
	b = append(b, `,"visitor_ip_address":`...)
	b = graphson.AppendString(b, c.IP)
	b = append(b, "}}"...)
	sum = sha256.Sum256(b)
	hex.Encode(eid[:], sum[:])
	return b
}

// appendVertex writes the short_url vertex as a typed GraphSON v3 g:Vertex.
func appendVertex(b []byte, c Click, vid []byte) []byte {
	b = append(b, `{"@type":"g:Vertex","@value":{"id":"`...)
	b = append(b, vid...)
	b = append(b, `","label":"short_url","properties":{`...)
	for i, p := range [3]struct{ key, value string }{
		{"short_url_path", c.Path}, {"short_url_token", c.Token}, {"target_url", c.Target},
	} {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, p.key...)
		b = append(b, `":[{"@type":"g:VertexProperty","@value":{"id":"`...)
		b = append(b, vid...)
		b = append(b, '/')
		b = append(b, p.key...)
		b = append(b, `","label":"`...)
		b = append(b, p.key...)
		b = append(b, `","value":`...)
		b = graphson.AppendString(b, p.value)
		b = append(b, "}}]"...)
	}
	return append(b, "}}}"...)
}

// appendEdge writes the short_url_visited self-loop as a typed GraphSON v3 g:Edge.
func appendEdge(b []byte, c Click, effectiveAt []byte, eventID string, vid, eid []byte) []byte {
	b = append(b, `{"@type":"g:Edge","@value":{"id":"`...)
	b = append(b, eid...)
	b = append(b, `","label":"`+EdgeLabel+`","inV":"`...)
	b = append(b, vid...)
	b = append(b, `","inVLabel":"short_url","outV":"`...)
	b = append(b, vid...)
	b = append(b, `","outVLabel":"short_url","properties":{`...)
	for i, p := range [4]struct {
		key  string
		raw  []byte
		text string
	}{{PropEffectiveAt, effectiveAt, ""}, {PropEventID, nil, eventID}, {PropUserAgent, nil, c.UserAgent}, {PropVisitorIP, nil, c.IP}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, p.key...)
		b = append(b, `":{"@type":"g:Property","@value":{"key":"`...)
		b = append(b, p.key...)
		b = append(b, `","value":`...)
		if p.raw != nil {
			b = append(b, '"')
			b = append(b, p.raw...)
			b = append(b, '"')
		} else {
			b = graphson.AppendString(b, p.text)
		}
		b = append(b, "}}"...)
	}
	return append(b, "}}}"...)
}

// isEventID reports whether s is "ev_" and a ULID in Crockford base32 upper case
// (no I, L, O, U), without a regexp: it runs on every redirect.
func isEventID(s string) bool {
	if len(s) != 3+26 || s[:3] != EventIDPrefix || s[3] > '7' {
		return false
	}
	for i := 3; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
		default:
			return false
		}
	}
	return true
}

// IsToken reports whether s has a token's shape, TokenLength base62 characters: a
// fact names only a short URL that resolved. It is the one check of a token's
// shape; package shorturl, whose tokens facts carry, answers with it too.
func IsToken(s string) bool {
	if len(s) != TokenLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// FormatTime formats a time as facts and dead letters carry it: UTC, milliseconds.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }
