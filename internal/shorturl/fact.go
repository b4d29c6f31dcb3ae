package shorturl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/graphson"
)

// The click fact's constants (seed contract, "EventBridge Contract").
const (
	FactSource         = "shorturl"
	FactDetailType     = "GraphFactProduced"
	FactType           = "short_url.visited"
	FactSchemaVersion  = "1.0"
	EdgeLabel          = "short_url_visited"
	PropEventID        = "event_identifier"
	PropVisitorIP      = "visitor_ip_address"
	PropUserAgent      = "user_agent"
	PropEffectiveAt    = "effective_at"
	IdempotencyPrefix  = "shorturl:"
	EventIDPrefix      = "ev_"
	effectiveAtLayout  = "2006-01-02T15:04:05.000Z"
	maxUserAgentLength = 1024
)

// ErrInvalidFact reports a graph fact or DLQ payload that is not one Linoone builds.
var ErrInvalidFact = errors.New("invalid graph fact")

// Fact is one GraphFactProduced event: its idempotency key and the Detail JSON.
type Fact struct {
	IdempotencyKey string
	EventID        string
	Detail         []byte
}

// BuildClickFact builds the short_url.visited fact of one click: the short_url vertex
// projection and a short_url_visited edge carrying exactly event_identifier,
// visitor_ip_address, user_agent and effective_at. The edge is a self-loop on the
// short_url vertex (the graph schema has no visitor vertex; schemas/IDENTITY.md), and
// its id is the identity hash, so a replayed fact is the same edge.
//
// It runs on every redirect, so it writes the fixed shape directly — keys in their
// canonical order, no maps, no reflection — into one buffer. The bytes are exactly
// those of graphson.CanonicalVertex/CanonicalEdge and graphson.Document.AppendJSON
// (a test compares them on random inputs).
func BuildClickFact(u ShortURL, v Visit, eventID string) (Fact, error) {
	return appendClickFact(nil, u, v, eventID)
}

// appendClickFact is BuildClickFact writing into dst's storage, so the Recorder can
// reuse one buffer per click instead of allocating and clearing a new one.
func appendClickFact(dst []byte, u ShortURL, v Visit, eventID string) (Fact, error) {
	if !isEventID(eventID) {
		return Fact{}, fmt.Errorf("%w: event identifier %q is not ev_ + ULID", ErrInvalidFact, eventID)
	}
	if !IsToken(string(u.Token)) || !utf8.ValidString(u.Path) || !utf8.ValidString(u.Target) || !utf8.ValidString(v.IP) {
		return Fact{}, fmt.Errorf("%w: short url or visitor address is not valid", ErrInvalidFact)
	}
	ua := strings.ToValidUTF8(v.UserAgent, "\uFFFD")
	if len(ua) > maxUserAgentLength {
		ua = strings.ToValidUTF8(ua[:maxUserAgentLength], "")
	}
	var at [len(effectiveAtLayout)]byte
	effectiveAt := v.At.UTC().AppendFormat(at[:0], effectiveAtLayout)

	b := dst[:0]
	if need := 2048 + 2*(len(u.Path)+len(u.Target)+len(ua)); cap(b) < need {
		b = make([]byte, 0, need)
	}
	// Identities first: hash the canonical forms, then reuse the buffer.
	b = append(b, `{"label":"short_url","properties":{"short_url_path":`...)
	b = graphson.AppendString(b, u.Path)
	b = append(b, `,"short_url_token":`...)
	b = graphson.AppendString(b, string(u.Token))
	b = append(b, `,"target_url":`...)
	b = graphson.AppendString(b, u.Target)
	b = append(b, "}}"...)
	var vid, eid [2 * sha256.Size]byte
	sum := sha256.Sum256(b)
	hex.Encode(vid[:], sum[:])
	b = append(b[:0], `{"in_v":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","label":"short_url_visited","out_v":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","properties":{"effective_at":"`...)
	b = append(b, effectiveAt...)
	b = append(b, `","event_identifier":"`...)
	b = append(b, eventID...)
	b = append(b, `","user_agent":`...)
	b = graphson.AppendString(b, ua)
	b = append(b, `,"visitor_ip_address":`...)
	b = graphson.AppendString(b, v.IP)
	b = append(b, "}}"...)
	sum = sha256.Sum256(b)
	hex.Encode(eid[:], sum[:])

	b = append(b[:0], `{"schema_version":"`+FactSchemaVersion+`","graphson_format":"graphson-v3","fact_type":"`+FactType+`","entity_types":["short_url"],"idempotency_key":"`+IdempotencyPrefix...)
	b = append(b, eventID...)
	b = append(b, `","graphson":{"vertices":[{"@type":"g:Vertex","@value":{"id":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","label":"short_url","properties":{`...)
	for i, p := range [3]struct {
		key, value string
	}{{PropPath, u.Path}, {PropToken, string(u.Token)}, {PropTargetURL, u.Target}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, p.key...)
		b = append(b, `":[{"@type":"g:VertexProperty","@value":{"id":"`...)
		b = append(b, vid[:]...)
		b = append(b, '/')
		b = append(b, p.key...)
		b = append(b, `","label":"`...)
		b = append(b, p.key...)
		b = append(b, `","value":`...)
		b = graphson.AppendString(b, p.value)
		b = append(b, "}}]"...)
	}
	b = append(b, `}}}],"edges":[{"@type":"g:Edge","@value":{"id":"`...)
	b = append(b, eid[:]...)
	b = append(b, `","label":"short_url_visited","inV":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","inVLabel":"short_url","outV":"`...)
	b = append(b, vid[:]...)
	b = append(b, `","outVLabel":"short_url","properties":{`...)
	for i, p := range [4]struct {
		key  string
		raw  []byte
		text string
	}{{PropEffectiveAt, effectiveAt, ""}, {PropEventID, nil, eventID}, {PropUserAgent, nil, ua}, {PropVisitorIP, nil, v.IP}} {
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
	b = append(b, "}}}]}}"...)
	return Fact{IdempotencyKey: IdempotencyPrefix + eventID, EventID: eventID, Detail: b}, nil
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

// factEnvelope is the detail as parsed back from the DLQ.
type factEnvelope struct {
	SchemaVersion  string            `json:"schema_version"`
	GraphSONFormat string            `json:"graphson_format"`
	FactType       string            `json:"fact_type"`
	EntityTypes    []string          `json:"entity_types"`
	IdempotencyKey string            `json:"idempotency_key"`
	GraphSON       graphson.Document `json:"graphson"`
}

// ParseFact reads a GraphFactProduced detail back (from the DLQ) and checks that it
// is a click fact Linoone could have built: the envelope constants, one short_url
// vertex and one short_url_visited self-loop whose event_identifier matches the
// idempotency key, and ids that are the elements' identities. The detail bytes are
// kept as they are, so a replay publishes exactly what failed.
func ParseFact(detail []byte) (Fact, error) {
	dec := json.NewDecoder(bytes.NewReader(detail))
	dec.DisallowUnknownFields()
	var env factEnvelope
	if err := dec.Decode(&env); err != nil {
		return Fact{}, fmt.Errorf("%w: %v", ErrInvalidFact, err)
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(detail, " \t\r\n"))) {
		return Fact{}, fmt.Errorf("%w: data after the JSON object", ErrInvalidFact)
	}
	switch {
	case env.SchemaVersion != FactSchemaVersion, env.GraphSONFormat != "graphson-v3", env.FactType != FactType,
		len(env.EntityTypes) != 1 || env.EntityTypes[0] != VertexLabel:
		return Fact{}, fmt.Errorf("%w: envelope is not a %s %s fact", ErrInvalidFact, FactType, FactSchemaVersion)
	case len(env.GraphSON.Vertices) != 1 || len(env.GraphSON.Edges) != 1:
		return Fact{}, fmt.Errorf("%w: want one vertex and one edge", ErrInvalidFact)
	}
	if err := env.GraphSON.Verify(); err != nil {
		return Fact{}, fmt.Errorf("%w: %v", ErrInvalidFact, err)
	}
	e := env.GraphSON.Edges[0]
	eventID, _ := e.Properties[PropEventID].(string)
	if e.Label != EdgeLabel || env.IdempotencyKey != IdempotencyPrefix+eventID || !isEventID(eventID) {
		return Fact{}, fmt.Errorf("%w: edge and idempotency key do not match", ErrInvalidFact)
	}
	return Fact{IdempotencyKey: env.IdempotencyKey, EventID: eventID, Detail: detail}, nil
}

// DeadLetter is the click DLQ payload: the fact, when and how often publishing it
// failed, and why.
type DeadLetter struct {
	GraphFact json.RawMessage `json:"graph_fact"`
	FailedAt  string          `json:"failed_at"`
	Attempts  int             `json:"attempts"`
	Reason    string          `json:"reason"`
}

// NewDeadLetter wraps a fact whose publication failed.
func NewDeadLetter(f Fact, at time.Time, attempts int, reason error) DeadLetter {
	why := "unknown publish failure"
	if reason != nil && reason.Error() != "" {
		why = truncate(reason.Error(), 1024)
	}
	return DeadLetter{GraphFact: f.Detail, FailedAt: at.UTC().Format(effectiveAtLayout), Attempts: max(attempts, 1), Reason: why}
}

// Encode is the dead letter's JSON with the graph fact byte for byte as it was built:
// encoding/json would otherwise HTML-escape "&", "<" and ">" inside the raw fact, and a
// replay would publish other bytes than the ones that failed.
func (d DeadLetter) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encode dead letter: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ParseDeadLetter reads a DLQ message body and the fact inside it.
func ParseDeadLetter(body []byte) (DeadLetter, Fact, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var d DeadLetter
	if err := dec.Decode(&d); err != nil {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload: %v", ErrInvalidFact, err)
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(body, " \t\r\n"))) {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload: data after the JSON object", ErrInvalidFact)
	}
	if d.Attempts < 1 {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload attempts %d < 1", ErrInvalidFact, d.Attempts)
	}
	if _, err := time.Parse(time.RFC3339Nano, d.FailedAt); err != nil {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload failed_at: %v", ErrInvalidFact, err)
	}
	f, err := ParseFact(d.GraphFact)
	if err != nil {
		return DeadLetter{}, Fact{}, err
	}
	return d, f, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// Publisher puts a fact on the bus. It returns nil only when the bus accepted it
// (for EventBridge: the call succeeded and FailedEntryCount == 0). It must not keep
// f.Detail after it returns: the Recorder reuses the buffer for the next click.
type Publisher interface {
	Publish(ctx context.Context, f Fact) error
}

// DeadLetters keeps facts whose publication failed, for replay. Like a Publisher, it
// must not keep the dead letter's GraphFact bytes after it returns.
type DeadLetters interface {
	DeadLetter(ctx context.Context, d DeadLetter) error
}

// Counters count what happened to click facts. They are read by the metrics emitter.
type Counters struct {
	Published    atomic.Int64
	DeadLettered atomic.Int64
	LostToLog    atomic.Int64
}

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	Publisher      Publisher
	DeadLetters    DeadLetters
	EventIDs       func() (string, error) // "ev_" + ULID
	PublishTimeout time.Duration          // default 500ms
	DLQTimeout     time.Duration          // default 2s
	Logger         *slog.Logger
	Now            func() time.Time
	Counters       *Counters
}

// Recorder turns clicks into published facts, dead-lettering what cannot be published.
type Recorder struct {
	c    RecorderConfig
	bufs sync.Pool // *[]byte fact buffers, reused across clicks
}

// maxPooledFact bounds the fact buffers kept for reuse.
const maxPooledFact = 16 << 10

// NewRecorder checks the configuration and builds a Recorder.
func NewRecorder(c RecorderConfig) (*Recorder, error) {
	if c.Publisher == nil || c.DeadLetters == nil || c.EventIDs == nil {
		return nil, fmt.Errorf("%w: recorder needs a publisher, dead letters and event ids", ErrMissingComponent)
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = 500 * time.Millisecond
	}
	if c.DLQTimeout <= 0 {
		c.DLQTimeout = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = discardLogger()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Counters == nil {
		c.Counters = &Counters{}
	}
	return &Recorder{c: c}, nil
}

// Counters returns the recorder's counters.
func (r *Recorder) Counters() *Counters { return r.c.Counters }

// Record publishes the click's fact within the publish timeout; on failure it sends
// the fact to the dead letters; if that fails too it logs the whole fact at ERROR.
// It runs inside the request (on Lambda nothing runs after the handler returns) and
// is detached from the visitor's cancellation: a click that happened is recorded.
func (r *Recorder) Record(ctx context.Context, u ShortURL, v Visit) {
	if v.At.IsZero() {
		v.At = r.c.Now()
	}
	id, err := r.c.EventIDs()
	if err == nil {
		bp, _ := r.bufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		var f Fact
		if f, err = appendClickFact(*bp, u, v, id); err == nil {
			r.deliver(context.WithoutCancel(ctx), f)
			if cap(f.Detail) <= maxPooledFact { // Publisher and DeadLetters keep no reference
				*bp = f.Detail[:0]
				r.bufs.Put(bp)
			}
			return
		}
	}
	r.c.Counters.LostToLog.Add(1)
	r.c.Logger.ErrorContext(ctx, "click fact could not be built", "err", err, "short_url_token", string(u.Token),
		"visitor_ip_address", v.IP, "user_agent", v.UserAgent, "effective_at", v.At.UTC().Format(effectiveAtLayout))
}

func (r *Recorder) deliver(ctx context.Context, f Fact) {
	pctx, cancel := context.WithTimeout(ctx, r.c.PublishTimeout)
	perr := r.c.Publisher.Publish(pctx, f)
	cancel()
	if perr == nil {
		r.c.Counters.Published.Add(1)
		return
	}
	dctx, cancel := context.WithTimeout(ctx, r.c.DLQTimeout)
	defer cancel()
	derr := r.c.DeadLetters.DeadLetter(dctx, NewDeadLetter(f, r.c.Now(), 1, perr))
	if derr == nil {
		r.c.Counters.DeadLettered.Add(1)
		r.c.Logger.WarnContext(ctx, "click fact dead-lettered", "idempotency_key", f.IdempotencyKey, "err", perr)
		return
	}
	r.c.Counters.LostToLog.Add(1)
	r.c.Logger.ErrorContext(ctx, "click fact lost to log: publish and dead-letter both failed",
		"idempotency_key", f.IdempotencyKey, "publish_err", perr, "dlq_err", derr, "graph_fact", json.RawMessage(f.Detail))
}

// Replay publishes the fact in a DLQ message body again, unchanged (same idempotency
// key). It returns the parsed dead letter (attempts as stored) and the publish error.
// A body that is not a Linoone dead letter is ErrInvalidFact: replaying cannot fix it.
func Replay(ctx context.Context, pub Publisher, body []byte) (DeadLetter, Fact, error) {
	d, f, err := ParseDeadLetter(body)
	if err != nil {
		return DeadLetter{}, Fact{}, err
	}
	if err := pub.Publish(ctx, f); err != nil {
		return d, f, fmt.Errorf("republish %s (attempt %d): %w", f.IdempotencyKey, d.Attempts+1, err)
	}
	return d, f, nil
}
