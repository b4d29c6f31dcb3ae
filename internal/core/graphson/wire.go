package graphson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// MarshalJSON writes the document in typed GraphSON v3 form:
//
//	{"vertices":[{"@type":"g:Vertex","@value":{"id":…,"label":…,"properties":{k:[{"@type":"g:VertexProperty",…}]}}}],
//	 "edges":[{"@type":"g:Edge","@value":{"id":…,"label":…,"inV":…,"inVLabel":…,"outV":…,"outVLabel":…,"properties":{k:{"@type":"g:Property",…}}}}]}
//
// Keys are written in a fixed order and properties sorted, so equal documents are
// equal bytes.
func (d Document) MarshalJSON() ([]byte, error) {
	return d.AppendJSON(make([]byte, 0, 512))
}

// AppendJSON appends the document's JSON to b.
func (d Document) AppendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"vertices":[`...)
	for i, v := range d.Vertices {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = v.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"edges":[`...)
	for i, e := range d.Edges {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = e.appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}

func (v Vertex) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"@type":"g:Vertex","@value":{"id":`...)
	b = appendString(b, v.ID)
	b = append(b, `,"label":`...)
	b = appendString(b, v.Label)
	b = append(b, `,"properties":{`...)
	for i, k := range sortedKeys(v.Properties) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, `:[{"@type":"g:VertexProperty","@value":{"id":`...)
		b = appendString(b, v.ID+"/"+k)
		b = append(b, `,"label":`...)
		b = appendString(b, k)
		b = append(b, `,"value":`...)
		var err error
		if b, err = appendValue(b, v.Properties[k]); err != nil {
			return nil, fmt.Errorf("vertex %s property %s: %w", v.Label, k, err)
		}
		b = append(b, "}}]"...)
	}
	return append(b, "}}}"...), nil
}

func (e Edge) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"@type":"g:Edge","@value":{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"label":`...)
	b = appendString(b, e.Label)
	b = append(b, `,"inV":`...)
	b = appendString(b, e.InV)
	b = append(b, `,"inVLabel":`...)
	b = appendString(b, e.InVLabel)
	b = append(b, `,"outV":`...)
	b = appendString(b, e.OutV)
	b = append(b, `,"outVLabel":`...)
	b = appendString(b, e.OutVLabel)
	b = append(b, `,"properties":{`...)
	for i, k := range sortedKeys(e.Properties) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, `:{"@type":"g:Property","@value":{"key":`...)
		b = appendString(b, k)
		b = append(b, `,"value":`...)
		var err error
		if b, err = appendValue(b, e.Properties[k]); err != nil {
			return nil, fmt.Errorf("edge %s property %s: %w", e.Label, k, err)
		}
		b = append(b, "}}"...)
	}
	return append(b, "}}}"...), nil
}

func sortedKeys(p Properties) []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type typed struct {
	Type  string          `json:"@type"`
	Value json.RawMessage `json:"@value"`
}

// The wire shapes of a document, decoded in a single pass (one decoder, unknown
// members refused at every level); only scalar values stay raw.
type (
	wireDocument struct {
		Vertices []wireVertex `json:"vertices"`
		Edges    []wireEdge   `json:"edges"`
	}
	wireVertex struct {
		Type  string `json:"@type"`
		Value struct {
			ID         string                          `json:"id"`
			Label      string                          `json:"label"`
			Properties map[string][]wireVertexProperty `json:"properties"`
		} `json:"@value"`
	}
	wireVertexProperty struct {
		Type  string `json:"@type"`
		Value struct {
			ID    string          `json:"id"`
			Label string          `json:"label"`
			Value json.RawMessage `json:"value"`
		} `json:"@value"`
	}
	wireEdge struct {
		Type  string `json:"@type"`
		Value struct {
			ID         string                  `json:"id"`
			Label      string                  `json:"label"`
			InV        string                  `json:"inV"`
			InVLabel   string                  `json:"inVLabel"`
			OutV       string                  `json:"outV"`
			OutVLabel  string                  `json:"outVLabel"`
			Properties map[string]wireProperty `json:"properties"`
		} `json:"@value"`
	}
	wireProperty struct {
		Type  string `json:"@type"`
		Value struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		} `json:"@value"`
	}
)

// UnmarshalJSON parses a typed GraphSON v3 document strictly: unknown members,
// unknown types, vertex-property ids other than "<vertex id>/<key>" and values
// without a canonical form are errors. Element ids are taken as written; Verify
// checks them.
func (d *Document) UnmarshalJSON(data []byte) error {
	var w wireDocument
	if err := strictUnmarshal(data, &w); err != nil {
		return fmt.Errorf("%w: document: %v", ErrInvalid, err)
	}
	out := Document{Vertices: make([]Vertex, 0, len(w.Vertices)), Edges: make([]Edge, 0, len(w.Edges))}
	for i := range w.Vertices {
		v, err := w.Vertices[i].vertex()
		if err != nil {
			return fmt.Errorf("vertex %d: %w", i, err)
		}
		out.Vertices = append(out.Vertices, v)
	}
	for i := range w.Edges {
		e, err := w.Edges[i].edge()
		if err != nil {
			return fmt.Errorf("edge %d: %w", i, err)
		}
		out.Edges = append(out.Edges, e)
	}
	*d = out
	return nil
}

func (w *wireVertex) vertex() (Vertex, error) {
	if w.Type != "g:Vertex" {
		return Vertex{}, fmt.Errorf("%w: @type %q, want g:Vertex", ErrInvalid, w.Type)
	}
	v := Vertex{ID: w.Value.ID, Label: w.Value.Label, Properties: make(Properties, len(w.Value.Properties))}
	for k, list := range w.Value.Properties {
		if len(list) != 1 {
			return Vertex{}, fmt.Errorf("%w: property %s must have exactly one value", ErrInvalid, k)
		}
		p := &list[0]
		switch {
		case p.Type != "g:VertexProperty":
			return Vertex{}, fmt.Errorf("%w: property %s: @type %q, want g:VertexProperty", ErrInvalid, k, p.Type)
		case p.Value.Label != k:
			return Vertex{}, fmt.Errorf("%w: property %s carries label %q", ErrInvalid, k, p.Value.Label)
		case p.Value.ID != v.ID+"/"+k:
			return Vertex{}, fmt.Errorf("%w: property %s has id %q, want %q", ErrInvalid, k, p.Value.ID, v.ID+"/"+k)
		}
		val, err := scalar(p.Value.Value)
		if err != nil {
			return Vertex{}, fmt.Errorf("property %s: %w", k, err)
		}
		v.Properties[k] = val
	}
	return v, nil
}

func (w *wireEdge) edge() (Edge, error) {
	if w.Type != "g:Edge" {
		return Edge{}, fmt.Errorf("%w: @type %q, want g:Edge", ErrInvalid, w.Type)
	}
	x := &w.Value
	e := Edge{ID: x.ID, Label: x.Label, InV: x.InV, InVLabel: x.InVLabel, OutV: x.OutV, OutVLabel: x.OutVLabel, Properties: make(Properties, len(x.Properties))}
	for k, p := range x.Properties {
		switch {
		case p.Type != "g:Property":
			return Edge{}, fmt.Errorf("%w: property %s: @type %q, want g:Property", ErrInvalid, k, p.Type)
		case p.Value.Key != k:
			return Edge{}, fmt.Errorf("%w: property %s carries key %q", ErrInvalid, k, p.Value.Key)
		}
		val, err := scalar(p.Value.Value)
		if err != nil {
			return Edge{}, fmt.Errorf("property %s: %w", k, err)
		}
		e.Properties[k] = val
	}
	return e, nil
}

// Verify recomputes every element's identity. Whether an edge's endpoints exist is
// for the store to check.
func (d Document) Verify() error {
	for _, v := range d.Vertices {
		id, err := VertexID(v.Label, v.Properties)
		if err != nil {
			return fmt.Errorf("vertex %s: %w", v.Label, err)
		}
		if id != v.ID {
			return fmt.Errorf("%w: vertex %s has id %q, identity is %s", ErrInvalid, v.Label, v.ID, id)
		}
	}
	for _, e := range d.Edges {
		id, err := EdgeID(e.Label, e.OutV, e.InV, e.Properties)
		if err != nil {
			return fmt.Errorf("edge %s: %w", e.Label, err)
		}
		if id != e.ID {
			return fmt.Errorf("%w: edge %s has id %q, identity is %s", ErrInvalid, e.Label, e.ID, id)
		}
	}
	return nil
}

// scalar decodes a property value: a string, a bool or a g:Int64/g:Int32. A typed
// value of any other type is refused by its type, before its value is decoded: a
// nested g:List would cost DecodeValue a copy of the rest of the value at every
// level, quadratic in a body of a few hundred KB.
func scalar(raw json.RawMessage) (any, error) {
	if s, ok := plainString(raw); ok {
		return s, nil
	}
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '{' {
		if n, ok := compactInt(raw); ok {
			return n, nil
		}
		var t typed
		if err := strictUnmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("%w: typed value: %v", ErrInvalid, err)
		}
		if t.Type != "g:Int32" && t.Type != "g:Int64" {
			return nil, fmt.Errorf("%w: property values must be strings, booleans or integers, got %.40q", ErrInvalid, t.Type)
		}
		return decodeTyped(t, 0)
	}
	v, err := DecodeValue(raw)
	if err != nil {
		return nil, err
	}
	switch v.(type) {
	case string, bool, int64:
		return v, nil
	default:
		return nil, fmt.Errorf("%w: property values must be strings, booleans or integers, got %T", ErrInvalid, v)
	}
}

// plainString decodes a JSON string without escapes, the common case, without the
// reflection of json.Unmarshal.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return "", false // escapes, controls or non-ASCII: let encoding/json decide
		}
	}
	return string(in), true
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

// maxDepth bounds how deeply the collections (g:List, g:Set, g:Map) of a value
// DecodeValue decodes may nest. Each level splits its value with json.Unmarshal,
// which reads and copies everything below it, so a value costs its size times its
// depth in time and in memory held: unbounded, a 30 KB value 1,000 levels deep took
// 0.3 s, and a 1.2 MB Gremlin answer held a core for 75 s after the call that
// fetched it had returned, where no timeout reached. Linoone's own answers nest
// three levels (a list of maps of maps of counts); 32 leaves room for any answer a
// Gremlin server gives to the queries Linoone sends and holds a hostile one to 32
// reads of its size (1.7 s for a 4 MiB lookup answer, the most the client reads).
const maxDepth = 32

// DecodeValue decodes one typed GraphSON v3 value as Gremlin Server writes it:
// strings and booleans plain; g:Int32 and g:Int64 as int64; g:Double and g:Float as
// float64; g:Date and g:Timestamp as time.Time; g:UUID as string; g:List and g:Set as
// []any; g:Map (alternating keys and values) as map[string]any; null as nil.
// Collections nested more than maxDepth (32) levels deep are refused (ErrInvalid).
func DecodeValue(raw json.RawMessage) (any, error) {
	return decodeValue(raw, 0)
}

// decodeValue is DecodeValue of a value inside depth collections.
func decodeValue(raw json.RawMessage, depth int) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: empty value", ErrInvalid)
	}
	switch raw[0] {
	case '"':
		if s, ok := plainString(raw); ok {
			return s, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return s, nil
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return b, nil
	case 'n':
		if string(raw) == "null" {
			return nil, nil
		}
	case '{':
		if n, ok := compactInt(raw); ok {
			return n, nil
		}
		if t, ok := compactCollection(raw); ok {
			return decodeTyped(t, depth)
		}
		var t typed
		if err := strictUnmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("%w: typed value: %v", ErrInvalid, err)
		}
		return decodeTyped(t, depth)
	}
	return nil, fmt.Errorf("%w: untyped value %.40s", ErrInvalid, raw)
}

// compactInt reads a g:Int64 or g:Int32 written compactly, as Gremlin servers and
// local Persist write the counts of a groupCount(): {"@type":"g:Int64","@value":7}.
// It accepts exactly what the general path decodes to the same int64 and leaves
// every other spelling (spaces, member order, a bad number) to it: a stats answer
// holds thousands of these, and a json.Decoder each was most of its decoding.
func compactInt(raw []byte) (int64, bool) {
	for _, prefix := range [...]string{`{"@type":"g:Int64","@value":`, `{"@type":"g:Int32","@value":`} {
		if len(raw) < len(prefix)+2 || string(raw[:len(prefix)]) != prefix || raw[len(raw)-1] != '}' {
			continue
		}
		digits := raw[len(prefix) : len(raw)-1]
		d := digits
		if d[0] == '-' {
			d = d[1:]
		}
		// A JSON integer: no sign but a leading minus, no leading zero, no "-0".
		if len(d) == 0 || (d[0] == '0' && (len(d) > 1 || len(digits) > 1)) {
			return 0, false
		}
		for _, c := range d {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(string(digits), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// compactCollection reads the type and value of a g:List, g:Set or g:Map written
// compactly ({"@type":"g:Map","@value":[…]}) without a json.Decoder over the whole
// collection at every level of nesting. The value is still decoded strictly as one
// JSON array by decodeTyped, so a member after it or anything but an array fails
// there as it fails on the general path.
func compactCollection(raw []byte) (typed, bool) {
	for _, typ := range [...]string{"g:List", "g:Map", "g:Set"} {
		prefix := `{"@type":"` + typ + `","@value":`
		if len(raw) > len(prefix)+1 && string(raw[:len(prefix)]) == prefix && raw[len(raw)-1] == '}' && raw[len(prefix)] == '[' {
			return typed{Type: typ, Value: raw[len(prefix) : len(raw)-1]}, true
		}
	}
	return typed{}, false
}

// decodeTyped decodes the typed value t, found inside depth collections. A
// collection at maxDepth is refused before its items are split, the step that
// reads the whole of it.
func decodeTyped(t typed, depth int) (any, error) {
	if depth >= maxDepth && (t.Type == "g:List" || t.Type == "g:Set" || t.Type == "g:Map") {
		return nil, fmt.Errorf("%w: collections nested deeper than %d levels", ErrInvalid, maxDepth)
	}
	switch t.Type {
	case "g:Int32", "g:Int64":
		n, err := strconv.ParseInt(string(bytes.TrimSpace(t.Value)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, t.Type, err)
		}
		return n, nil
	case "g:Double", "g:Float":
		var f float64
		if err := json.Unmarshal(t.Value, &f); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, t.Type, err)
		}
		return f, nil
	case "g:Date", "g:Timestamp":
		ms, err := strconv.ParseInt(string(bytes.TrimSpace(t.Value)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, t.Type, err)
		}
		return time.UnixMilli(ms).UTC(), nil
	case "g:UUID":
		var s string
		if err := json.Unmarshal(t.Value, &s); err != nil {
			return nil, fmt.Errorf("%w: g:UUID: %v", ErrInvalid, err)
		}
		return s, nil
	case "g:List", "g:Set":
		var items []json.RawMessage
		if err := json.Unmarshal(t.Value, &items); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, t.Type, err)
		}
		out := make([]any, 0, len(items))
		for _, it := range items {
			v, err := decodeValue(it, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case "g:Map":
		var items []json.RawMessage
		if err := json.Unmarshal(t.Value, &items); err != nil {
			return nil, fmt.Errorf("%w: g:Map: %v", ErrInvalid, err)
		}
		if len(items)%2 != 0 {
			return nil, fmt.Errorf("%w: g:Map has an odd number of items", ErrInvalid)
		}
		out := make(map[string]any, len(items)/2)
		for i := 0; i < len(items); i += 2 {
			k, err := decodeValue(items[i], depth+1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("%w: g:Map key %T is not a string", ErrInvalid, k)
			}
			v, err := decodeValue(items[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[ks] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unsupported @type %q", ErrInvalid, t.Type)
}

// AppendValue appends v as a typed GraphSON v3 value, the inverse of DecodeValue:
// string, bool, nil, int64 (g:Int64), int (g:Int64), float64 (g:Double),
// time.Time (g:Date), []any (g:List) and map[string]any (g:Map, keys sorted).
func AppendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int:
		return appendValue(b, int64(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: %v has no JSON form", ErrInvalid, v)
		}
		b = append(b, `{"@type":"g:Double","@value":`...)
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		return append(b, '}'), nil
	case time.Time:
		b = append(b, `{"@type":"g:Date","@value":`...)
		b = strconv.AppendInt(b, v.UnixMilli(), 10)
		return append(b, '}'), nil
	case []any:
		b = append(b, `{"@type":"g:List","@value":[`...)
		for i, it := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendValue(b, it); err != nil {
				return nil, err
			}
		}
		return append(b, "]}"...), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, `{"@type":"g:Map","@value":[`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ',')
			var err error
			if b, err = AppendValue(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, "]}"...), nil
	}
	return appendValue(b, v)
}
