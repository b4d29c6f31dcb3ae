package localbus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/linoone/linoone/internal/shorturl"
)

// clickEvent is what the consumer reads of a journaled event: the envelope's and the
// fact's constants, and the fact's GraphSON elements as raw bytes. One is reused for
// every event, so reset it before each decode.
type clickEvent struct {
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

// batchState is one batch's valid events and their elements. It is reused from
// batch to batch (by Run or Drain, one at a time), so steady-state batches allocate
// little besides the ingest bodies.
type batchState struct {
	ev      clickEvent
	events  []batchEvent
	elems   []byte         // every distinct element of the batch, once
	spans   []span         // where each distinct element lies in elems
	seen    map[uint64]int // maphash of an element's bytes: its index in spans
	seed    maphash.Seed
	emitted []bool // per span, while one body is built
	lines   []byte // facts log lines of the batch
}

// batchEvent is one valid event of a batch: its record, the indexes of its vertex and
// edge in batchState.spans, and how far its ingest got.
type batchEvent struct {
	rec          int
	vertex, edge int
	state        eventState
}

type eventState uint8

const (
	eventPending  eventState = iota // not acknowledged by Persist yet
	eventIngested                   // acknowledged: goes to the facts log
	eventRejected                   // refused by Persist: logged and skipped
)

type span struct{ off, end int }

// parse decodes payload once and checks that it is a GraphFactProduced event that
// carries a click fact: the envelope, the fact's constants and one vertex and one edge,
// which it returns as written (valid until the next parse). It checks the shape only;
// Persist verifies the elements' identities on ingest.
func (ev *clickEvent) parse(payload []byte) (vertex, edge []byte, err error) {
	vs, es := ev.Detail.GraphSON.Vertices[:0], ev.Detail.GraphSON.Edges[:0]
	*ev = clickEvent{} // fields missing from this event must not keep the last one's values
	ev.Detail.GraphSON.Vertices, ev.Detail.GraphSON.Edges = vs, es
	if err := json.Unmarshal(payload, ev); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	d, g := &ev.Detail, &ev.Detail.GraphSON
	switch {
	case ev.DetailType != shorturl.FactDetailType || ev.Source != shorturl.FactSource || ev.ID == "":
		return nil, nil, fmt.Errorf("%w: not a %s event from %s", ErrInvalidEvent, shorturl.FactDetailType, shorturl.FactSource)
	case d.SchemaVersion != shorturl.FactSchemaVersion || d.GraphSONFormat != graphSONFormat || d.FactType != shorturl.FactType:
		return nil, nil, fmt.Errorf("%w: detail is not a %s %s fact", ErrInvalidEvent, shorturl.FactType, shorturl.FactSchemaVersion)
	case !strings.HasPrefix(d.IdempotencyKey, shorturl.IdempotencyPrefix+shorturl.EventIDPrefix):
		return nil, nil, fmt.Errorf("%w: idempotency key %q is not %s%s…", ErrInvalidEvent, d.IdempotencyKey, shorturl.IdempotencyPrefix, shorturl.EventIDPrefix)
	case len(g.Vertices) != 1 || len(g.Edges) != 1:
		return nil, nil, fmt.Errorf("%w: fact has %d vertices and %d edges, want one of each", ErrInvalidEvent, len(g.Vertices), len(g.Edges))
	case !isObject(g.Vertices[0]) || !isObject(g.Edges[0]):
		return nil, nil, fmt.Errorf("%w: graphson elements are not objects", ErrInvalidEvent)
	}
	return g.Vertices[0], g.Edges[0], nil
}

// isObject reports whether raw, a value json.Unmarshal decoded (valid JSON, no
// surrounding space), is an object.
func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

func (b *batchState) reset() {
	b.events, b.elems, b.spans = b.events[:0], b.elems[:0], b.spans[:0]
	clear(b.seen)
}

// intern stores an element's bytes in the batch once and returns its index.
func (b *batchState) intern(raw []byte) int {
	h := maphash.Bytes(b.seed, raw)
	i, ok := b.seen[h]
	if ok && bytes.Equal(b.elems[b.spans[i].off:b.spans[i].end], raw) {
		return i
	}
	off := len(b.elems)
	b.elems = append(b.elems, raw...)
	b.spans = append(b.spans, span{off, len(b.elems)})
	if !ok { // else a hash collision: keep both copies, Persist takes duplicates
		b.seen[h] = len(b.spans) - 1
	}
	return len(b.spans) - 1
}

// body encodes a new ingest body of the pending events, or of event only if it is
// not negative, with each distinct element once, vertices and edges in the order the
// events bring them.
func (b *batchState) body(only int) []byte {
	evs := b.events
	size := len(b.elems) + len(b.spans)
	if only >= 0 {
		evs = evs[only : only+1]
		e := evs[0]
		size = b.spans[e.vertex].end - b.spans[e.vertex].off + b.spans[e.edge].end - b.spans[e.edge].off + 1
	}
	if cap(b.emitted) < len(b.spans) {
		b.emitted = make([]bool, len(b.spans))
	}
	b.emitted = b.emitted[:len(b.spans)]
	clear(b.emitted)
	out := make([]byte, 0, size+len(`{"vertices":[],"edges":[]}`))
	out = append(out, `{"vertices":[`...)
	out = b.appendElements(out, evs, false)
	out = append(out, `],"edges":[`...)
	out = b.appendElements(out, evs, true)
	return append(out, "]}"...)
}

func (b *batchState) appendElements(out []byte, evs []batchEvent, edges bool) []byte {
	first := true
	for _, e := range evs {
		if e.state != eventPending {
			continue
		}
		i := e.vertex
		if edges {
			i = e.edge
		}
		if b.emitted[i] {
			continue
		}
		b.emitted[i] = true
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, b.elems[b.spans[i].off:b.spans[i].end]...)
	}
	return out
}

// factsLines returns the facts log lines of the ingested events and their number.
func (b *batchState) factsLines(recs []record) ([]byte, int) {
	lines, n := b.lines[:0], 0
	for _, e := range b.events {
		if e.state == eventIngested {
			lines = appendLine(lines, recs[e.rec].payload)
			n++
		}
	}
	b.lines = lines
	return lines, n
}

// appendLine appends payload, a decoded event, as one facts log line.
func appendLine(lines, payload []byte) []byte {
	if bytes.IndexByte(payload, '\n') < 0 && bytes.IndexByte(payload, '\r') < 0 {
		return append(append(lines, payload...), '\n')
	}
	buf := bytes.NewBuffer(lines)
	_ = json.Compact(buf, payload) // valid JSON: parse decoded it
	return append(buf.Bytes(), '\n')
}
