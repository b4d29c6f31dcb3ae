// Package graphson is Linoone's wire library for Persist: GraphSON v3 documents of
// vertices and edges, typed GraphSON v3 values, and the identity hash that gives every
// element its id. It is shared by producers (the service) and by local Persist, and it
// knows nothing of short URLs.
//
// The identity rule is written down in schemas/IDENTITY.md and pinned by the vectors in
// schemas/testdata/identity-vectors.json.
package graphson

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// ErrInvalid reports a document, element or value that breaks the GraphSON v3 subset
// Linoone speaks.
var ErrInvalid = errors.New("invalid graphson")

// Properties maps property keys to values. A value is a string, a bool or an int64;
// nothing else has a canonical form, so nothing else is accepted.
type Properties map[string]any

// Vertex is a graph vertex whose ID is the identity hash of its label and properties.
type Vertex struct {
	ID         string
	Label      string
	Properties Properties
}

// Edge is a graph edge whose ID is the identity hash of its label, its two endpoint
// ids and its properties.
type Edge struct {
	ID         string
	Label      string
	OutV       string
	OutVLabel  string
	InV        string
	InVLabel   string
	Properties Properties
}

// Document is the body of a Persist ingest: vertices and edges.
type Document struct {
	Vertices []Vertex
	Edges    []Edge
}

// isName reports whether s matches ^[a-z][a-z0-9_]{0,63}$ (labels and keys).
func isName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// NewVertex builds a vertex and computes its identity.
func NewVertex(label string, props Properties) (Vertex, error) {
	id, err := VertexID(label, props)
	if err != nil {
		return Vertex{}, err
	}
	return Vertex{ID: id, Label: label, Properties: props}, nil
}

// NewEdge builds an edge from out to in and computes its identity.
func NewEdge(label string, out, in Vertex, props Properties) (Edge, error) {
	id, err := EdgeID(label, out.ID, in.ID, props)
	if err != nil {
		return Edge{}, err
	}
	return Edge{ID: id, Label: label, OutV: out.ID, OutVLabel: out.Label, InV: in.ID, InVLabel: in.Label, Properties: props}, nil
}

// VertexID is the identity of a vertex: the lower-case hex SHA-256 of the canonical
// JSON of {"label", "properties"}.
func VertexID(label string, props Properties) (string, error) {
	b, err := CanonicalVertex(label, props)
	if err != nil {
		return "", err
	}
	return hash(b), nil
}

// EdgeID is the identity of an edge: the lower-case hex SHA-256 of the canonical JSON
// of {"in_v", "label", "out_v", "properties"}.
func EdgeID(label, outV, inV string, props Properties) (string, error) {
	b, err := CanonicalEdge(label, outV, inV, props)
	if err != nil {
		return "", err
	}
	return hash(b), nil
}

// CanonicalVertex returns the bytes a vertex's identity is hashed from.
func CanonicalVertex(label string, props Properties) ([]byte, error) {
	if err := checkName("label", label); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"label":`...)
	b = appendString(b, label)
	b = append(b, `,"properties":`...)
	b, err := appendProperties(b, props)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// CanonicalEdge returns the bytes an edge's identity is hashed from.
func CanonicalEdge(label, outV, inV string, props Properties) ([]byte, error) {
	if err := checkName("label", label); err != nil {
		return nil, err
	}
	if !IsID(outV) || !IsID(inV) {
		return nil, fmt.Errorf("%w: edge endpoints must be element ids", ErrInvalid)
	}
	b := make([]byte, 0, 384)
	b = append(b, `{"in_v":`...)
	b = appendString(b, inV)
	b = append(b, `,"label":`...)
	b = appendString(b, label)
	b = append(b, `,"out_v":`...)
	b = appendString(b, outV)
	b = append(b, `,"properties":`...)
	b, err := appendProperties(b, props)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// IsID reports whether s has the shape of an identity: 64 lower-case hex digits.
func IsID(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func checkName(what, s string) error {
	if !isName(s) {
		return fmt.Errorf("%w: %s %q must match ^[a-z][a-z0-9_]{0,63}$", ErrInvalid, what, s)
	}
	return nil
}

func appendProperties(b []byte, props Properties) ([]byte, error) {
	keys := make([]string, 0, len(props))
	for k := range props {
		if err := checkName("property key", k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, props[k]); err != nil {
			return nil, fmt.Errorf("property %s: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// appendValue writes v as a GraphSON v3 typed value in canonical form.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("%w: string is not valid UTF-8", ErrInvalid)
		}
		return appendString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int64:
		b = append(b, `{"@type":"g:Int64","@value":`...)
		b = strconv.AppendInt(b, v, 10)
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("%w: unsupported value type %T", ErrInvalid, v)
	}
}

// AppendString appends s as a canonical JSON string (see appendString). Producers that
// write elements of a fixed shape by hand use it to stay byte-identical with
// CanonicalVertex, CanonicalEdge and Document.AppendJSON.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// appendString writes s as a JSON string the canonical way (RFC 8785): only the
// quotation mark, the reverse solidus and control characters are escaped; control
// characters use \b \t \n \f \r or \u00xx with lower-case hex; everything else,
// non-ASCII included, is written as its UTF-8 bytes.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0 // s[start:i] needs no escaping: appended in one piece
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
