package localpersist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/foundation/yield"
)

// serverProperty is the property Persist manages itself; a producer may not send it.
const serverProperty = "created_at"

// ingestRequest is a validated document on its way to the writer. done receives
// exactly one result, after the document's transaction committed or failed.
type ingestRequest struct {
	doc         graphson.Document
	vertexProps []string          // per vertex: canonical JSON of its properties
	edgeProps   []string          // per edge: canonical JSON of its properties
	labels      map[string]string // id → label of the document's own vertices
	done        chan ingestResult
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
// recomputed, derived vertex-property ids, edge endpoints that are vertices of the
// document carrying the declared labels. Endpoints not in the document are checked
// by the writer, inside the transaction.
func parseIngest(body []byte) (*ingestRequest, error) {
	var pace yield.Point // a click batch is thousands of elements: let redirects in
	doc, err := decodeDocument(body, &pace)
	if err != nil {
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
	vertexProps, edgeProps, err := verifyIdentities(&doc, &pace)
	if err != nil {
		return nil, fmt.Errorf("identity check failed: %w", err)
	}
	labels := make(map[string]string, len(doc.Vertices))
	for _, v := range doc.Vertices {
		labels[v.ID] = v.Label
	}
	for i, e := range doc.Edges {
		if err := checkEndpointLabel(i, &e, "outV", e.OutV, e.OutVLabel, labels); err != nil {
			return nil, err
		}
		if err := checkEndpointLabel(i, &e, "inV", e.InV, e.InVLabel, labels); err != nil {
			return nil, err
		}
	}
	return &ingestRequest{doc: doc, vertexProps: vertexProps, edgeProps: edgeProps, labels: labels, done: make(chan ingestResult, 1)}, nil
}

func checkEndpointLabel(i int, e *graphson.Edge, dir, id, label string, labels map[string]string) error {
	if l, ok := labels[id]; ok && l != label {
		return fmt.Errorf("edge %d (%s): %sLabel %q does not match vertex %s labelled %q", i, e.Label, dir, label, id, l)
	}
	return nil
}

// propertiesMember precedes an element's properties in its canonical JSON.
const propertiesMember = `,"properties":`

// verifyIdentities recomputes every element's identity, hashing a vertex that the
// document repeats only once, and returns each vertex's and each edge's canonical
// properties JSON: the "properties" member of the bytes its identity is hashed from,
// which is what the store keeps. It yields at pace between elements.
func verifyIdentities(doc *graphson.Document, pace *yield.Point) (vertexProps, edgeProps []string, err error) {
	type verifiedVertex struct {
		v     *graphson.Vertex
		props string
	}
	verified := make(map[string]verifiedVertex, len(doc.Vertices))
	vertexProps = make([]string, len(doc.Vertices))
	for i := range doc.Vertices {
		pace.Maybe()
		v := &doc.Vertices[i]
		if prev, ok := verified[v.ID]; ok && prev.v.Label == v.Label && maps.Equal(prev.v.Properties, v.Properties) {
			vertexProps[i] = prev.props
			continue
		}
		b, err := graphson.CanonicalVertex(v.Label, v.Properties)
		if err != nil {
			return nil, nil, fmt.Errorf("vertex %s: %w", v.Label, err)
		}
		if id, ok := hashIs(b, v.ID); !ok {
			return nil, nil, fmt.Errorf("%w: vertex %s has id %q, identity is %s", graphson.ErrInvalid, v.Label, v.ID, id)
		}
		vertexProps[i] = propertiesOf(b)
		verified[v.ID] = verifiedVertex{v, vertexProps[i]}
	}
	edgeProps = make([]string, len(doc.Edges))
	for i := range doc.Edges {
		pace.Maybe()
		e := &doc.Edges[i]
		b, err := graphson.CanonicalEdge(e.Label, e.OutV, e.InV, e.Properties)
		if err != nil {
			return nil, nil, fmt.Errorf("edge %s: %w", e.Label, err)
		}
		if id, ok := hashIs(b, e.ID); !ok {
			return nil, nil, fmt.Errorf("%w: edge %s has id %q, identity is %s", graphson.ErrInvalid, e.Label, e.ID, id)
		}
		edgeProps[i] = propertiesOf(b)
	}
	return vertexProps, edgeProps, nil
}

// propertiesOf cuts the properties JSON out of an element's canonical bytes. The
// label is a name and an edge's endpoints are hex ids, so the first match is the
// member itself.
func propertiesOf(canonical []byte) string {
	at := bytes.Index(canonical, []byte(propertiesMember))
	return string(canonical[at+len(propertiesMember) : len(canonical)-1])
}

// canonicalProperties is the canonical properties JSON of an edge.
func canonicalProperties(label, outV, inV string, props graphson.Properties) (string, error) {
	b, err := graphson.CanonicalEdge(label, outV, inV, props)
	if err != nil {
		return "", err
	}
	return propertiesOf(b), nil
}

// canonicalVertexProperties is the canonical properties JSON of a vertex.
func canonicalVertexProperties(label string, props graphson.Properties) (string, error) {
	b, err := graphson.CanonicalVertex(label, props)
	if err != nil {
		return "", err
	}
	return propertiesOf(b), nil
}

// hashIs reports whether id is the identity of canonical bytes b, and the identity.
func hashIs(b []byte, id string) (string, bool) {
	sum := sha256.Sum256(b)
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], sum[:])
	if string(hx[:]) == id {
		return id, true
	}
	return string(hx[:]), false
}

// readBody reads at most limit bytes of the request body. On failure it also
// returns the HTTP status to answer with.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, int, error) {
	if whole, ok := r.Body.(ReadBody); ok {
		// The signature check read the whole body: take its bytes rather than
		// copy them again.
		body := whole.Unread()
		if int64(len(body)) > limit {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes", limit)
		}
		return body, 0, nil
	}
	// A declared length sizes the buffer once (a click batch is hundreds of KB);
	// the limit still applies to what is actually read.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), limit)+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	body := buf.Bytes()
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
