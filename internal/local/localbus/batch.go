package localbus

import (
	"bytes"
	"encoding/json"
	"hash/maphash"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// delivery is one batch on its way through the consumer: where it lies in the journal,
// its records, read into a buffer of its own so that the next batch can be read while
// this one is in Persist, its events, and its running ingest attempt. A batch is
// reused once committed, so steady-state batches allocate little besides the ingest
// bodies.
type delivery struct {
	seg        uint64
	start, end int64 // journal positions of its first record and after its last
	recs       []record
	buf        []byte // the journal bytes the records' payloads point into
	batchState
	done chan error // the running ingest attempt's result
}

// grow makes b.buf hold at least n (and at most most) bytes of journal read from
// from, keeping the records read so far valid.
func (b *delivery) grow(n, most int, from int64) {
	if n <= len(b.buf) {
		return
	}
	buf := make([]byte, max(n, min(2*len(b.buf), most)))
	copy(buf, b.buf)
	for i, r := range b.recs {
		at := int(r.pos-from) + frameHeader
		b.recs[i].payload = buf[at : at+len(r.payload)]
	}
	b.buf = buf
}

// batchState is one batch's valid events and their elements.
type batchState struct {
	ev     clickfact.Event
	events []batchEvent
	elems  []byte         // every distinct element of the batch, once
	spans  []span         // where each distinct element lies in elems
	seen   map[uint64]int // maphash of an element's bytes: its index in spans
	seed   maphash.Seed
	// seenPeak is the most entries seen held: clearing a map keeps its size.
	seenPeak int
	emitted  []bool // per span, while one body is built
	// refused are the events Persist refused, in journal order: commit keeps them in
	// refused.jsonl (kept, once it did) before it moves the offset past them.
	refused []refusal
	kept    bool
}

// refusal is an event Persist refused (its index in batchState.events), and why.
type refusal struct {
	event  int
	reason string
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
	eventRejected                   // refused by Persist: kept in refused.jsonl, not delivered
)

type span struct{ off, end int }

func (b *batchState) reset() {
	b.events, b.elems, b.spans = b.events[:0], b.elems[:0], b.spans[:0]
	b.seenPeak = max(b.seenPeak, len(b.seen))
	clear(b.seen)
	b.refused, b.kept = b.refused[:0], false
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

// bodySize is the size of a body of all the batch's events.
func (b *batchState) bodySize() int {
	return len(b.elems) + len(b.spans) + len(`{"vertices":[],"edges":[]}`)
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

// factsLines appends the facts log lines of the ingested events to dst and returns
// it and their number.
func (b *batchState) factsLines(dst []byte, recs []record) ([]byte, int) {
	n := 0
	for _, e := range b.events {
		if e.state == eventIngested {
			dst = appendLine(dst, recs[e.rec].payload)
			n++
		}
	}
	return dst, n
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
