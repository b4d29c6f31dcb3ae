package localpersist

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/core/graphson"
)

// Gremlin Server response status codes (org.apache.tinkerpop.gremlin.driver.message.ResponseStatusCode).
const (
	codeSuccess                 = 200
	codeInvalidRequestArguments = 499
	codeServerError             = 500
	codeScriptEvaluationError   = 597
)

// gremlinContentType is the media type of every /persist/gremlin response.
const gremlinContentType = "application/vnd.gremlin-v3.0+json"

func (s *Store) handleGremlin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeGremlin(w, http.StatusMethodNotAllowed, codeInvalidRequestArguments, "method "+r.Method+" not allowed: use POST", nil)
		return
	}
	if ct := r.Header.Get("Content-Type"); !isJSONContentType(ct) {
		writeGremlin(w, http.StatusUnsupportedMediaType, codeInvalidRequestArguments, fmt.Sprintf("content type %q is not supported: send application/json", ct), nil)
		return
	}
	if accept := r.Header.Get("Accept"); !acceptsGraphSONv3(accept) {
		writeGremlin(w, http.StatusNotAcceptable, codeInvalidRequestArguments, fmt.Sprintf("no serializer for requested Accept header %q: only %s (typed GraphSON v3) is served", accept, gremlinContentType), nil)
		return
	}
	body, status, err := readBody(w, r, s.maxBody)
	if err != nil {
		writeGremlin(w, status, codeInvalidRequestArguments, err.Error(), nil)
		return
	}
	script, bindings, err := decodeGremlinRequest(body)
	if err != nil {
		writeGremlin(w, http.StatusBadRequest, codeInvalidRequestArguments, err.Error(), nil)
		return
	}
	data, err := s.run(ctx, script, bindings)
	if err == nil {
		writeGremlin(w, http.StatusOK, codeSuccess, "", data)
		return
	}
	// Declared past the answer: errors.As moves its targets to the heap, an
	// allocation a request that succeeds need not pay.
	var serr *scriptError
	var lerr *limitError
	switch {
	case errors.As(err, &lerr):
		writeGremlin(w, http.StatusBadRequest, codeInvalidRequestArguments, lerr.Error(), nil)
	case errors.As(err, &serr):
		s.log.DebugContext(ctx, "gremlin script error", "error", err)
		writeGremlin(w, http.StatusInternalServerError, codeScriptEvaluationError, err.Error(), nil)
	case ctx.Err() != nil:
		return // the client went away
	default:
		s.log.ErrorContext(ctx, "gremlin evaluation failed", "error", err)
		writeGremlin(w, http.StatusInternalServerError, codeServerError, "storage failure while evaluating the traversal", nil)
	}
}

// run parses, compiles and evaluates a script and returns the encoded g:List.
func (s *Store) run(ctx context.Context, script string, bindings map[string]any) ([]byte, error) {
	root, err := s.scripts.parse(script)
	if err != nil {
		return nil, err
	}
	p, err := compile(script, root, bindings)
	if err != nil {
		return nil, err
	}
	results, err := s.evaluate(ctx, p)
	if err != nil {
		return nil, err
	}
	data, err := appendResults(make([]byte, 0, 256), results, s.maxAnswer)
	if err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	return data, nil
}

// scriptCache keeps the syntax trees of recently seen scripts. Linoone sends the same
// few scripts with different bindings, so parsing is mostly skipped. Trees are never
// modified after parsing, so they are shared freely; failures are not cached.
type scriptCache struct {
	mu sync.Mutex
	m  map[string]*traversal
}

const (
	maxCachedScripts     = 256
	maxCachedScriptBytes = 4096
)

func (c *scriptCache) parse(src string) (*traversal, error) {
	if len(src) > maxCachedScriptBytes {
		return parse(src)
	}
	c.mu.Lock()
	t, ok := c.m[src]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := parse(src)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedScripts {
		// Inlined literals (the Neptune mode) make every script new: start over
		// rather than grow.
		c.m = make(map[string]*traversal, maxCachedScripts)
	}
	c.m[src] = t
	c.mu.Unlock()
	return t, nil
}

// maxScriptBytes bounds a script, which is tokenised whole before it is parsed (a
// token is ~40 bytes of memory, so an 8 MiB script took ~1 GB). It is Gremlin
// Server's default maxContentLength; the largest script Linoone sends, a Neptune-mode
// lookup of 1,000 tokens inlined as literals, is ~14 KB.
const maxScriptBytes = 64 << 10

// maxBindingList bounds a list binding (within(…)): each value is an SQL parameter,
// and SQLite takes at most 32,766 in a statement. Linoone's largest is 1,000 tokens.
const maxBindingList = 10_000

// limitError is a script that asks for more than local Persist's bounds allow
// (maxPlanParameters, maxProjectKeys, Options.MaxAnswerBytes). Like a request over
// maxScriptBytes or maxBindingList, it is refused as invalid request arguments,
// HTTP 400 / 499: sending it again cannot succeed, and it is no failure of the
// store.
type limitError struct {
	msg string
}

func (e *limitError) Error() string { return e.msg }

// decodeGremlinRequest reads {"gremlin": "…", "bindings": {…}} strictly. Binding values
// are plain JSON strings, integers and booleans, or arrays of them (a List on Gremlin
// Server, for within(…)), as Gremlin Server's HTTP endpoint receives them.
func decodeGremlinRequest(body []byte) (string, map[string]any, error) {
	var req struct {
		Gremlin  *string                    `json:"gremlin"`
		Bindings map[string]json.RawMessage `json:"bindings"`
		Language *string                    `json:"language"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return "", nil, fmt.Errorf("invalid request body: %w", err)
	}
	if dec.More() {
		return "", nil, errors.New("invalid request body: trailing data after the JSON object")
	}
	if req.Gremlin == nil || strings.TrimSpace(*req.Gremlin) == "" {
		return "", nil, errors.New("no gremlin script supplied")
	}
	if len(*req.Gremlin) > maxScriptBytes {
		return "", nil, fmt.Errorf("gremlin script is %d bytes, over the limit of %d: pass values as bindings", len(*req.Gremlin), maxScriptBytes)
	}
	if req.Language != nil && *req.Language != "gremlin-groovy" {
		return "", nil, fmt.Errorf("language %q is not supported: only gremlin-groovy", *req.Language)
	}
	names := make([]string, 0, len(req.Bindings))
	for name := range req.Bindings {
		names = append(names, name)
	}
	slices.Sort(names)
	bindings := make(map[string]any, len(names))
	for _, name := range names {
		if !isBindingName(name) {
			return "", nil, fmt.Errorf("binding name %q is not a valid variable name", name)
		}
		v, err := decodeBinding(req.Bindings[name])
		if err != nil {
			return "", nil, fmt.Errorf("binding %s: %w", name, err)
		}
		bindings[name] = v
	}
	return *req.Gremlin, bindings, nil
}

func decodeBinding(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if list, ok := v.([]any); ok {
		if len(list) > maxBindingList {
			return nil, fmt.Errorf("a list of %d values, over the limit of %d", len(list), maxBindingList)
		}
		out := make([]any, len(list))
		for i, x := range list {
			s, err := scalarBinding(x)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = s
		}
		return out, nil
	}
	return scalarBinding(v)
}

func scalarBinding(v any) (any, error) {
	switch v := v.(type) {
	case string, bool:
		return v, nil
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s is not a 64-bit integer: only strings, integers and booleans are supported", v)
		}
		return n, nil
	}
	return nil, fmt.Errorf("%s is not supported: only strings, integers, booleans and arrays of them", typeOfJSON(v))
}

func typeOfJSON(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// isBindingName reports whether name can be referenced from a script: an identifier
// that is not a keyword or one of the traversal sources.
func isBindingName(name string) bool {
	if name == "" || !isIdentStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isIdentPart(name[i]) {
			return false
		}
	}
	switch name {
	case "g", "__", "true", "false", "null":
		return false
	}
	return true
}

// acceptsGraphSONv3 reports whether an Accept header admits typed GraphSON v3.
func acceptsGraphSONv3(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
				continue
			}
		}
		switch mt {
		case gremlinContentType:
			if params["types"] != "false" {
				return true
			}
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

// writeGremlin writes a response in the Gremlin Server HTTP shape. data is the
// encoded g:List, or nil for an error.
func writeGremlin(w http.ResponseWriter, httpStatus, code int, message string, data []byte) {
	b := make([]byte, 0, 256+len(data)+len(message))
	b = append(b, `{"requestId":"`...)
	b = append(b, newRequestID()...)
	b = append(b, `","status":{"message":`...)
	b = appendJSONString(b, message)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"attributes":{"@type":"g:Map","@value":[]}},"result":{"data":`...)
	if data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, data...)
	}
	b = append(b, `,"meta":{"@type":"g:Map","@value":[]}}}`...)
	w.Header().Set("Content-Type", gremlinContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(httpStatus)
	_, _ = w.Write(b)
}

// appendJSONString writes s as a JSON string, as graphson.AppendValue does, without
// converting it to an interface (an allocation for each key of every map).
func appendJSONString(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return graphson.AppendString(b, s)
	}
	// Not valid UTF-8: let encoding/json substitute U+FFFD.
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// newRequestID returns a random (version 4) UUID.
func newRequestID() []byte {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never returns an error
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:], u[10:])
	return out[:]
}
