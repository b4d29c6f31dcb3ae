package localpersist

import (
	"maps"
	"strings"
)

// knownVerticesLimit bounds the vertices the writer remembers (about 150 bytes
// each): the short URLs being clicked, not every vertex of the graph.
const knownVerticesLimit = 50_000

// knownVertices remembers the ids and labels of stored vertices, so that a short
// URL's vertex, which comes with every one of its clicks, costs no INSERT … ON
// CONFLICT DO NOTHING and no label lookup after the first. A vertex is immutable
// (its id is the hash of its label and properties) and never deleted, so an entry
// cannot go stale, whoever else writes the file. Only the writer goroutine uses it.
// What the open transaction wrote is pending until it commits: a rolled back
// transaction leaves nothing behind. When full it forgets everything and refills.
type knownVertices struct {
	committed map[string]string
	pending   map[string]string
}

func newKnownVertices() *knownVertices {
	return &knownVertices{committed: map[string]string{}, pending: map[string]string{}}
}

// label is the label of vertex id if it is known to be stored (or written by the
// open transaction).
func (k *knownVertices) label(id string) (string, bool) {
	if l, ok := k.pending[id]; ok {
		return l, true
	}
	l, ok := k.committed[id]
	return l, ok
}

// add records a vertex the open transaction wrote or read. It keeps copies: id and
// label are usually substrings of a decoded ingest body, which they would otherwise
// keep in memory whole for as long as the vertex stays known.
func (k *knownVertices) add(id, label string) {
	k.pending[strings.Clone(id)] = strings.Clone(label)
}

// commit keeps what the transaction that just committed wrote or read, as long as
// that fits: one transaction can bring hundreds of thousands of vertices (256
// documents of 1,000 new short URLs), more than it holds, and then it keeps what it had.
func (k *knownVertices) commit() {
	if len(k.pending) <= knownVerticesLimit {
		if len(k.committed)+len(k.pending) > knownVerticesLimit {
			k.committed = make(map[string]string, len(k.pending)) // replaced, as in forgetPending
		}
		maps.Copy(k.committed, k.pending)
	}
	k.forgetPending()
}

// rollback forgets what the transaction that was rolled back wrote or read.
func (k *knownVertices) rollback() { k.forgetPending() }

// forgetPending empties pending. A map that outgrew the limit is replaced rather
// than cleared: clear keeps a map's tables at their largest.
func (k *knownVertices) forgetPending() {
	if len(k.pending) > knownVerticesLimit {
		k.pending = map[string]string{}
		return
	}
	clear(k.pending)
}
