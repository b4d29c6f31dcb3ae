package localpersist

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/foundation/yield"
)

// createdAtLayout is RFC 3339 in UTC with millisecond precision.
const createdAtLayout = "2006-01-02T15:04:05.000Z"

// writeStmts are the writer's prepared statements, on its single connection.
type writeStmts struct {
	insertVertex *sql.Stmt
	insertEdge   *sql.Stmt
	vertexLabel  *sql.Stmt
	countEdges   *sql.Stmt
	known        *knownVertices    // set by in: the writer's, for one transaction
	created      map[edgeKey]int64 // set by in: edges the transaction created, per vertex and label
	// pace yields the writer's P between rows. Inside `serve` with one P (the
	// inline consumer's ingest, a batch issuance), a large document would otherwise
	// hold the core for milliseconds while redirects wait.
	pace yield.Point
}

// edgeKey is a vertex and an edge label: a row of edge_counts.
type edgeKey struct{ outV, label string }

func (w *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&w.insertVertex, insertVertexSQL("vertices")},
		{&w.insertEdge, `INSERT INTO edges (id, label, out_v, out_label, in_v, in_label, created_at, properties, effective_at, user_agent, visitor_ip_address) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`},
		{&w.vertexLabel, `SELECT label FROM vertices WHERE id = ?`},
		{&w.countEdges, `INSERT INTO edge_counts (out_v, label, n) VALUES (?, ?, ?) ON CONFLICT (out_v, label) DO UPDATE SET n = n + excluded.n`},
	} {
		st, err := db.PrepareContext(ctx, p.query)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.query, err)
		}
		*p.dst = st
	}
	return nil
}

func (w *writeStmts) close() error {
	return closeStmts(w.insertVertex, w.insertEdge, w.vertexLabel, w.countEdges)
}

// in binds the statements to a transaction that records the vertices it writes or
// reads in known.
func (w *writeStmts) in(ctx context.Context, tx *sql.Tx, known *knownVertices) *writeStmts {
	return &writeStmts{
		known:        known,
		created:      map[edgeKey]int64{},
		countEdges:   tx.StmtContext(ctx, w.countEdges),
		insertVertex: tx.StmtContext(ctx, w.insertVertex),
		insertEdge:   tx.StmtContext(ctx, w.insertEdge),
		vertexLabel:  tx.StmtContext(ctx, w.vertexLabel),
	}
}

// runWriter is the single writer goroutine. It takes whatever documents are waiting
// (up to maxBatch), commits them in one transaction, and only then answers each.
// It returns when the queue is closed and drained.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	batch := make([]*ingestRequest, 0, s.maxBatch)
	idle := time.NewTimer(s.idleCkpt)
	idle.Stop()
	dirty := false // written since the WAL was last truncated
	for {
		var req *ingestRequest
		ok := true
		if dirty {
			select {
			case req, ok = <-s.queue:
			case <-idle.C:
				if dirty = !s.truncateWAL(); dirty {
					idle.Reset(s.idleCkpt)
				} else {
					s.freeHeap()
				}
				continue
			}
		} else {
			req, ok = <-s.queue
		}
		if !ok {
			return
		}
		batch = append(batch[:0], req)
		// The first document's send made this goroutine the next to run; yield once,
		// so that on one P the requests already runnable queue their documents for
		// this transaction instead of each paying a commit of its own.
		runtime.Gosched()
	drain:
		for len(batch) < s.maxBatch {
			select {
			case r, ok := <-s.queue:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		s.commitBatch(batch)
		clear(batch)
		dirty = true
		idle.Reset(s.idleCkpt)
	}
}

// truncateWAL copies the WAL into the database and cuts it to zero bytes, once the
// writer has been idle: a burst's WAL would stay at its high-water mark otherwise.
// A reader in another process holding an old snapshot keeps it from finishing; the
// next idle spell tries again. It reports whether the WAL was truncated.
func (s *Store) truncateWAL() bool {
	var busy, logPages, done int
	err := s.wdb.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done)
	if err != nil {
		s.log.Warn("idle WAL checkpoint failed", "error", err)
		return false
	}
	s.log.Debug("idle WAL checkpoint", "busy", busy == 1, "wal_pages", logPages, "checkpointed", done)
	return busy == 0
}

// freeHeapAbove is how much heap the process may hold from the OS once the writer is
// idle before freeHeap returns what is free: three request bodies at their most. A
// catch-up's ingests (a consumer draining a backlog, three bodies of up to 6 MiB in
// flight, each decoded) grow the heap to some 45 MiB, and an idle process collects
// only every two minutes, so it stayed there (issue 47: local Persist 28 % above its
// level while clicks were sent, 30 s after the drain); steady traffic holds ~15 MiB.
const freeHeapAbove = 3 * DefaultMaxBodyBytes

// freeHeap returns the free heap to the OS (debug.FreeOSMemory, a full collection)
// when the heap holds more than s.freeAbove; runWriter calls it once per idle spell,
// after the WAL is truncated.
func (s *Store) freeHeap() {
	if heapHeld() > s.freeAbove {
		debug.FreeOSMemory()
		s.heapFrees.Add(1)
	}
}

// heapHeld is the heap memory the runtime holds from the OS: live and dead objects,
// and free spans not yet returned.
func heapHeld() uint64 {
	ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(ms)
	var n uint64
	for _, m := range ms {
		if m.Value.Kind() == metrics.KindUint64 {
			n += m.Value.Uint64()
		}
	}
	return n
}

// commitBatch writes a batch in one transaction. If that transaction fails, each
// document is retried in a transaction of its own, so one bad document cannot fail
// the others; every document is answered exactly once, after its outcome is final.
func (s *Store) commitBatch(batch []*ingestRequest) {
	// Writes are not tied to any one request's context: once started they finish.
	ctx := context.Background()
	now := s.now().UTC().Format(createdAtLayout)
	results, err := s.writeBatch(ctx, batch, now)
	if err == nil {
		s.acknowledge(batch, results)
		return
	}
	if len(batch) == 1 {
		batch[0].done <- ingestResult{err: err}
		return
	}
	s.log.Warn("group commit failed, retrying documents one by one", "documents", len(batch), "error", err)
	for _, req := range batch {
		one := []*ingestRequest{req}
		results, err := s.writeBatch(ctx, one, now)
		if err != nil {
			req.done <- ingestResult{err: err}
			continue
		}
		s.acknowledge(one, results)
	}
}

// acknowledge counts the documents of a committed transaction, then answers them.
func (s *Store) acknowledge(batch []*ingestRequest, results []ingestResult) {
	var written uint64
	for _, r := range results {
		if r.reject == nil {
			written++
		}
	}
	s.transactions.Add(1)
	s.documents.Add(written)
	for {
		cur := s.largestBatch.Load()
		if written <= cur || s.largestBatch.CompareAndSwap(cur, written) {
			break
		}
	}
	for i, req := range batch {
		req.done <- results[i]
	}
}

// writeBatch writes the documents in one transaction and commits it. A document that
// is invalid given the stored graph is rejected without writing anything of it and
// without failing the others; any database error fails the whole transaction.
func (s *Store) writeBatch(ctx context.Context, batch []*ingestRequest, now string) (_ []ingestResult, err error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin write transaction: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
			s.known.rollback()
		}
	}()
	st := s.ws.in(ctx, tx, s.known)
	results := make([]ingestResult, len(batch))
	for i, req := range batch {
		if results[i], err = st.writeDocument(ctx, req, now); err != nil {
			return nil, err
		}
	}
	if err := st.addEdgeCounts(ctx); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit write transaction: %w", err)
	}
	s.known.commit()
	return results, nil
}

// writeDocument writes one document inside the writer's transaction.
func (st *writeStmts) writeDocument(ctx context.Context, req *ingestRequest, now string) (ingestResult, error) {
	if res, err := st.checkStoredEndpoints(ctx, req); res.reject != nil || err != nil {
		return res, err
	}
	doc := &req.doc
	res := ingestResult{vertices: ingestCount{Received: len(doc.Vertices)}, edges: ingestCount{Received: len(doc.Edges)}}
	for i := range doc.Vertices {
		st.pace.Maybe()
		created, err := st.writeVertex(ctx, &doc.Vertices[i], req.vertexProps[i], now)
		if err != nil {
			return ingestResult{}, err
		}
		if created {
			res.vertices.Created++
		}
	}
	for i := range doc.Edges {
		st.pace.Maybe()
		e := &doc.Edges[i]
		cols := edgeColumnValues(e.Properties)
		created, err := execCreated(ctx, st.insertEdge, e.ID, e.Label, e.OutV, e.OutVLabel, e.InV, e.InVLabel, now, req.edgeProps[i], cols[0], cols[1], cols[2])
		if err != nil {
			return ingestResult{}, fmt.Errorf("insert edge %s: %w", e.ID, err)
		}
		if created {
			res.edges.Created++
			st.created[edgeKey{e.OutV, e.Label}]++
		}
	}
	return res, nil
}

// addEdgeCounts adds the edges the transaction created to edge_counts, one row per
// vertex and label however many clicks it took.
func (st *writeStmts) addEdgeCounts(ctx context.Context) error {
	for k, n := range st.created {
		if _, err := st.countEdges.ExecContext(ctx, k.outV, k.label, n); err != nil {
			return fmt.Errorf("count edges of %s: %w", k.outV, err)
		}
	}
	return nil
}

// checkStoredEndpoints rejects a document with an edge whose endpoint is neither
// one of its vertices nor a stored vertex with the declared label.
func (st *writeStmts) checkStoredEndpoints(ctx context.Context, req *ingestRequest) (ingestResult, error) {
	for i, e := range req.doc.Edges {
		for _, end := range [2]struct{ dir, id, label string }{{"outV", e.OutV, e.OutVLabel}, {"inV", e.InV, e.InVLabel}} {
			if _, ok := req.labels[end.id]; ok {
				continue // checked against the document by parseIngest
			}
			label, ok := st.known.label(end.id)
			if !ok {
				err := st.vertexLabel.QueryRowContext(ctx, end.id).Scan(&label)
				if errors.Is(err, sql.ErrNoRows) {
					return ingestResult{reject: fmt.Errorf("edge %d (%s): %s %s is neither a vertex of the document nor a stored vertex", i, e.Label, end.dir, end.id)}, nil
				}
				if err != nil {
					return ingestResult{}, fmt.Errorf("look up vertex %s: %w", end.id, err)
				}
				st.known.add(end.id, label)
			}
			if label != end.label {
				return ingestResult{reject: fmt.Errorf("edge %d (%s): %sLabel %q does not match stored vertex %s labelled %q", i, e.Label, end.dir, end.label, end.id, label)}, nil
			}
		}
	}
	return ingestResult{}, nil
}

// writeVertex inserts a vertex, whose canonical properties JSON is props. A vertex
// known to be stored costs nothing: same id, same label and properties.
func (st *writeStmts) writeVertex(ctx context.Context, v *graphson.Vertex, props, now string) (bool, error) {
	if _, ok := st.known.label(v.ID); ok {
		return false, nil
	}
	created, err := execCreated(ctx, st.insertVertex, v.ID, v.Label, now, props, tokenColumn(v.Properties))
	if err != nil {
		return false, fmt.Errorf("insert vertex %s: %w", v.ID, err)
	}
	st.known.add(v.ID, v.Label)
	return created, nil
}

// insertVertexSQL inserts a vertex into the version 5 vertex table name, unless its
// id is there already.
func insertVertexSQL(name string) string {
	return `INSERT INTO ` + name + ` (id, label, created_at, properties, token) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
}

// tokenColumn is the value of a vertex's token column: its tokenKey property when
// that is a string, else nil (NULL).
func tokenColumn(props map[string]any) any {
	if s, ok := props[tokenKey].(string); ok {
		return s
	}
	return nil
}

// execCreated runs an INSERT … ON CONFLICT DO NOTHING and reports whether it
// inserted a row.
func execCreated(ctx context.Context, st *sql.Stmt, args ...any) (bool, error) {
	r, err := st.ExecContext(ctx, args...)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("rows affected: %w", err)
	}
	return n == 1, nil
}
