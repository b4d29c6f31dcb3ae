package clickfact

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// AppendEvent appends the EventBridge event that carries a fact's detail, as
// EventBridge delivers it to a rule's target: version, id (a version 4 UUID made of
// uuid's bytes), detail-type, source, account, time, region, resources and the
// detail itself. account and region are written as given: the caller passes checked
// values (digits; lower-case letters, digits and dashes), and detail must be one
// compact JSON object.
func AppendEvent(b []byte, uuid *[16]byte, account, region string, at time.Time, detail []byte) []byte {
	uuid[6] = uuid[6]&0x0f | 0x40 // version 4
	uuid[8] = uuid[8]&0x3f | 0x80 // RFC 4122 variant
	b = append(b, `{"version":"0","id":"`...)
	b = appendUUID(b, uuid)
	b = append(b, `","detail-type":"`+DetailType+`","source":"`+Source+`","account":"`...)
	b = append(b, account...)
	b = append(b, `","time":"`...)
	b = appendTime(b, at, false)
	b = append(b, `","region":"`...)
	b = append(b, region...)
	b = append(b, `","resources":[],"detail":`...)
	b = append(b, detail...)
	return append(b, '}')
}

// EventUUID fills uuid with the 128 bits of the ULID in an event identifier: an
// envelope id as unique as the fact's identifier, without another draw from the
// system's random source on every redirect. It reports false when eventID is not
// ev_ + ULID.
func EventUUID(eventID string, uuid *[16]byte) bool {
	if !isEventID(eventID) {
		return false
	}
	var hi, lo uint64
	for i := len(EventIDPrefix); i < len(eventID); i++ {
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(crockford(eventID[i]))
	}
	binary.BigEndian.PutUint64(uuid[:8], hi)
	binary.BigEndian.PutUint64(uuid[8:], lo)
	return true
}

// crockford is the value of a Crockford base32 digit that isEventID accepted.
func crockford(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	v := c - 'A' + 10
	for _, skipped := range [...]byte{'I', 'L', 'O', 'U'} {
		if c > skipped {
			v--
		}
	}
	return v
}

func appendUUID(b []byte, u *[16]byte) []byte {
	const hexDigits = "0123456789abcdef"
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

// Event is what a consumer reads of an event that AppendEvent wrote: the envelope's
// and the fact's constants, and the fact's GraphSON elements as raw bytes. One can be
// reused for every event: Parse resets it.
type Event struct {
	ID         string `json:"id"`
	DetailType string `json:"detail-type"`
	Source     string `json:"source"`
	Detail     struct {
		SchemaVersion  string `json:"schema_version"`
		GraphSONFormat string `json:"graphson_format"`
		FactType       string `json:"fact_type"`
		IdempotencyKey string `json:"idempotency_key"`
		GraphSON       struct {
			Vertices []json.RawMessage `json:"vertices"`
			Edges    []json.RawMessage `json:"edges"`
		} `json:"graphson"`
	} `json:"detail"`
}

// Parse decodes payload once and checks that it is a GraphFactProduced event that
// carries a click fact: the envelope, the fact's constants and one vertex and one
// edge, which it returns as written (valid until the next Parse). It checks the shape
// only; Persist verifies the elements' identities on ingest. Errors wrap ErrInvalid.
//
// An event in exactly the layout AppendEvent and Build write — every event the local
// bus journals — is read by position instead (ev's fields are then left unset); its
// two elements are still checked to be JSON.
func (ev *Event) Parse(payload []byte) (vertex, edge []byte, err error) {
	if vertex, edge, ok := splitOwnLayout(payload); ok {
		return vertex, edge, nil
	}
	vs, es := ev.Detail.GraphSON.Vertices[:0], ev.Detail.GraphSON.Edges[:0]
	*ev = Event{} // fields missing from this event must not keep the last one's values
	ev.Detail.GraphSON.Vertices, ev.Detail.GraphSON.Edges = vs, es
	if err := json.Unmarshal(payload, ev); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	d, g := &ev.Detail, &ev.Detail.GraphSON
	switch {
	case ev.DetailType != DetailType || ev.Source != Source || ev.ID == "":
		return nil, nil, fmt.Errorf("%w: not a %s event from %s", ErrInvalid, DetailType, Source)
	case d.SchemaVersion != SchemaVersion || d.GraphSONFormat != GraphSONFormat || d.FactType != FactType:
		return nil, nil, fmt.Errorf("%w: detail is not a %s %s fact", ErrInvalid, FactType, SchemaVersion)
	case !strings.HasPrefix(d.IdempotencyKey, IdempotencyPrefix+EventIDPrefix):
		return nil, nil, fmt.Errorf("%w: idempotency key %q is not %s%s…", ErrInvalid, d.IdempotencyKey, IdempotencyPrefix, EventIDPrefix)
	case len(g.Vertices) != 1 || len(g.Edges) != 1:
		return nil, nil, fmt.Errorf("%w: fact has %d vertices and %d edges, want one of each", ErrInvalid, len(g.Vertices), len(g.Edges))
	case !isObject(g.Vertices[0]) || !isObject(g.Edges[0]):
		return nil, nil, fmt.Errorf("%w: graphson elements are not objects", ErrInvalid)
	}
	return g.Vertices[0], g.Edges[0], nil
}

// isObject reports whether raw, a value json.Unmarshal decoded (valid JSON, no
// surrounding space), is an object.
func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// The fixed parts of the layout AppendEvent and Build write, between the variable
// ones: envelope id, account, time, region, event identifier, vertex and edge.
const (
	layoutStart   = `{"version":"0","id":"`
	layoutAccount = `","detail-type":"` + DetailType + `","source":"` + Source + `","account":"`
	layoutTime    = `","time":"`
	layoutRegion  = `","region":"`
	layoutDetail  = `","resources":[],"detail":{"schema_version":"` + SchemaVersion + `","graphson_format":"` + GraphSONFormat +
		`","fact_type":"` + FactType + `","entity_types":["` + EntityType + `"],"idempotency_key":"` + IdempotencyPrefix
	layoutGraph = `","graphson":{"vertices":[`
	layoutEdges = `],"edges":[`
	layoutEnd   = `]}}}`
)

// splitOwnLayout returns the vertex and the edge of an event in exactly the layout
// AppendEvent writes around Build's detail, checking every other byte; ok is false
// for anything else. A JSON string cannot hold `],"edges":[` (its quote would be
// escaped), so the first one ends the vertex.
func splitOwnLayout(p []byte) (vertex, edge []byte, ok bool) {
	rest, ok := cutFixed(p, layoutStart)
	if ok {
		rest, ok = cutClass(rest, 36, 36, &uuidBytes, layoutAccount)
	}
	if ok {
		rest, ok = cutClass(rest, 1, 12, &accountBytes, layoutTime)
	}
	if ok {
		rest, ok = cutClass(rest, 20, 20, &timeBytes, layoutRegion)
	}
	if ok {
		rest, ok = cutClass(rest, 1, 32, &regionBytes, layoutDetail)
	}
	if !ok || len(rest) < len(EventIDPrefix)+26 || !isEventID(string(rest[:len(EventIDPrefix)+26])) {
		return nil, nil, false
	}
	rest, ok = cutFixed(rest[len(EventIDPrefix)+26:], layoutGraph)
	i := bytes.Index(rest, []byte(layoutEdges))
	if !ok || i < 0 || !bytes.HasSuffix(rest, []byte(layoutEnd)) || i+len(layoutEdges) > len(rest)-len(layoutEnd) {
		return nil, nil, false
	}
	vertex, edge = rest[:i], rest[i+len(layoutEdges):len(rest)-len(layoutEnd)]
	if !bytes.HasPrefix(vertex, []byte(`{"@type":"g:Vertex"`)) || !bytes.HasPrefix(edge, []byte(`{"@type":"g:Edge"`)) ||
		!oneObject(vertex) || !oneObject(edge) {
		return nil, nil, false
	}
	return vertex, edge, true
}

// oneObject reports whether b is one JSON object from its first byte to its last:
// it starts with { and ends with }, and braces and brackets balance outside strings
// and close only at the end (a ] closing a { is left to Persist's parser), so that
// spliced into an ingest document it is exactly one element, never two. It does not
// check the rest of the JSON grammar (json.Valid did, and was half of the consumer's
// CPU per event): an element that is not JSON makes Persist reject the consumer's
// batch, and the consumer then ingests the batch's events one by one to set that
// one aside (Consumer.ingest).
func oneObject(b []byte) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0 {
		return false // an object, and one event per line of facts.jsonl
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"': // skip the string: to the next quote not escaped by an odd run of backslashes
			for {
				q := bytes.IndexByte(b[i+1:], '"')
				if q < 0 {
					return false
				}
				i += 1 + q
				k := i - 1
				for b[k] == '\\' { // stops at b[0], '{'
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 || (depth == 0 && i != len(b)-1) {
				return false
			}
		}
	}
	return depth == 0
}

// cutFixed removes prefix from the start of p.
func cutFixed(p []byte, prefix string) ([]byte, bool) {
	if len(p) < len(prefix) || string(p[:len(prefix)]) != prefix {
		return nil, false
	}
	return p[len(prefix):], true
}

// byteClass is a set of bytes, looked up in one step: splitOwnLayout checks about a
// hundred bytes of every event against these, and a search of the class's string
// for each was an eighth of the consumer's CPU per event.
type byteClass [256]bool

func newByteClass(members string) (c byteClass) {
	for i := range len(members) {
		c[members[i]] = true
	}
	return c
}

// The classes of the variable parts of the layout: envelope id, account, time and
// region.
var (
	uuidBytes    = newByteClass("0123456789abcdef-")
	accountBytes = newByteClass("0123456789")
	timeBytes    = newByteClass("0123456789-:TZ")
	regionBytes  = newByteClass("abcdefghijklmnopqrstuvwxyz0123456789-")
)

// cutClass removes a run of min to max bytes of class and then the fixed next.
func cutClass(p []byte, minLen, maxLen int, class *byteClass, next string) ([]byte, bool) {
	n := 0
	for n < len(p) && n <= maxLen && class[p[n]] {
		n++
	}
	if n < minLen || n > maxLen {
		return nil, false
	}
	return cutFixed(p[n:], next)
}
