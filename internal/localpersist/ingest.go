package localpersist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/linoone/linoone/internal/graphson"
)

// serverProperty is the property Persist manages itself; a producer may not send it.
const serverProperty = "created_at"

// ingestRequest is a validated document on its way to the writer. done receives
// exactly one result, after the document's transaction committed or failed.
type ingestRequest struct {
	doc    graphson.Document
	labels map[string]string // id → label of the document's own vertices
	done   chan ingestResult
}

// ingestResult is the writer's answer for one document: either counts, or a
// rejection (the document is invalid given what is stored: 400), or a database
// failure (500).
type ingestResult struct {
	vertices, edges ingestCount
	reject          error
	err             error
}

type ingestCount struct {
	Received int `json:"received"`
	Created  int `json:"created"`
}

func (s *Store) handleIngest(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSONError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: use POST")
		return
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		writeJSONError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q is not supported: send application/json", r.Header.Get("Content-Type")))
		return
	}
	body, status, err := readBody(w, r, s.maxBody)
	if err != nil {
		writeJSONError(w, status, err.Error())
		return
	}
	req, err := parseIngest(body)
	if err != nil {
		s.log.DebugContext(ctx, "ingest rejected", "error", err, "bytes", len(body))
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.submit(ctx, req)
	switch {
	case errors.Is(err, errClosed):
		writeJSONError(w, http.StatusServiceUnavailable, err.Error())
		return
	case err != nil:
		// The client went away while waiting; there is nobody to answer.
		s.log.DebugContext(ctx, "ingest abandoned by client", "error", err)
		return
	case res.reject != nil:
		s.log.DebugContext(ctx, "ingest rejected", "error", res.reject)
		writeJSONError(w, http.StatusBadRequest, res.reject.Error())
		return
	case res.err != nil:
		s.log.ErrorContext(ctx, "ingest failed", "error", res.err, "vertices", len(req.doc.Vertices), "edges", len(req.doc.Edges))
		writeJSONError(w, http.StatusInternalServerError, "database failure: the document was not stored")
		return
	}
	out, err := json.Marshal(struct {
		Vertices ingestCount `json:"vertices"`
		Edges    ingestCount `json:"edges"`
	}{res.vertices, res.edges})
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "encode response")
		return
	}
	s.log.DebugContext(ctx, "ingested", "vertices_created", res.vertices.Created, "edges_created", res.edges.Created)
	writeJSON(w, http.StatusOK, out)
}

// submit hands a document to the writer and waits for its result.
func (s *Store) submit(ctx context.Context, req *ingestRequest) (ingestResult, error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ingestResult{}, errClosed
	}
	select {
	case s.queue <- req:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return ingestResult{}, ctx.Err()
	}
	select {
	case res := <-req.done:
		return res, nil
	case <-ctx.Done():
		return ingestResult{}, ctx.Err()
	}
}

// parseIngest decodes and checks everything about a document that does not depend
// on what is stored: strict GraphSON v3, no server-managed property, every identity
// recomputed, derived vertex-property ids (checked by graphson), edge endpoints that are vertices of the
// document carrying the declared labels. Endpoints not in the document are checked
// by the writer, inside the transaction.
func parseIngest(body []byte) (*ingestRequest, error) {
	var doc graphson.Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("invalid graphson document: %w", err)
	}
	if len(doc.Vertices) == 0 && len(doc.Edges) == 0 {
		return nil, errors.New("invalid graphson document: no vertices and no edges")
	}
	for i, v := range doc.Vertices {
		if _, ok := v.Properties[serverProperty]; ok {
			return nil, fmt.Errorf("vertex %d (%s): property %s is server-managed and must not be sent", i, v.Label, serverProperty)
		}
	}
	for i, e := range doc.Edges {
		if _, ok := e.Properties[serverProperty]; ok {
			return nil, fmt.Errorf("edge %d (%s): property %s is server-managed and must not be sent", i, e.Label, serverProperty)
		}
	}
	if err := doc.Verify(); err != nil {
		return nil, fmt.Errorf("identity check failed: %w", err)
	}
	labels := make(map[string]string, len(doc.Vertices))
	for _, v := range doc.Vertices {
		labels[v.ID] = v.Label
	}
	for i, e := range doc.Edges {
		for _, end := range []struct{ dir, id, label string }{{"outV", e.OutV, e.OutVLabel}, {"inV", e.InV, e.InVLabel}} {
			if l, ok := labels[end.id]; ok && l != end.label {
				return nil, fmt.Errorf("edge %d (%s): %sLabel %q does not match vertex %s labelled %q", i, e.Label, end.dir, end.label, end.id, l)
			}
		}
	}
	return &ingestRequest{doc: doc, labels: labels, done: make(chan ingestResult, 1)}, nil
}

// readBody reads at most limit bytes of the request body. On failure it also
// returns the HTTP status to answer with.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes", limit)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("read request body: %w", err)
	}
	return body, 0, nil
}

// isJSONContentType accepts a missing Content-Type, application/json and any
// structured +json type (application/vnd.gremlin-v3.0+json).
func isJSONContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	b, err := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	if err != nil {
		b = []byte(`{"error":` + strconv.Quote(http.StatusText(status)) + `}`)
	}
	writeJSON(w, status, b)
}
