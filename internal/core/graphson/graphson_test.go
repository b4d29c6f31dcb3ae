package graphson

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type vector struct {
	Name       string                     `json:"name"`
	Kind       string                     `json:"kind"`
	Label      string                     `json:"label"`
	OutV       string                     `json:"out_v"`
	InV        string                     `json:"in_v"`
	Properties map[string]json.RawMessage `json:"properties"`
	Canonical  string                     `json:"canonical"`
	ID         string                     `json:"id"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("../../../schemas/testdata/identity-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) < 5 {
		t.Fatalf("only %d vectors", len(f.Vectors))
	}
	return f.Vectors
}

func TestIdentityVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			props := Properties{}
			for k, raw := range v.Properties {
				val, err := DecodeValue(raw)
				if err != nil {
					t.Fatalf("decode %s: %v", k, err)
				}
				props[k] = val
			}
			var canon []byte
			var id string
			var err error
			switch v.Kind {
			case "vertex":
				canon, err = CanonicalVertex(v.Label, props)
				if err == nil {
					id, err = VertexID(v.Label, props)
				}
			case "edge":
				canon, err = CanonicalEdge(v.Label, v.OutV, v.InV, props)
				if err == nil {
					id, err = EdgeID(v.Label, v.OutV, v.InV, props)
				}
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(canon) != v.Canonical {
				t.Errorf("canonical:\n got %s\nwant %s", canon, v.Canonical)
			}
			if id != v.ID {
				t.Errorf("id = %s, want %s", id, v.ID)
			}
		})
	}
}

func TestIdentityChangesWithEveryProperty(t *testing.T) {
	base := Properties{"short_url_token": "7BTadEDkJ8", "short_url_path": "https://s.example/7BTadEDkJ8", "target_url": "https://example.com/"}
	id, err := VertexID("short_url", base)
	if err != nil {
		t.Fatal(err)
	}
	for k := range base {
		variant := Properties{}
		for kk, vv := range base {
			variant[kk] = vv
		}
		variant[k] = base[k].(string) + "x"
		other, err := VertexID("short_url", variant)
		if err != nil {
			t.Fatal(err)
		}
		if other == id {
			t.Errorf("changing %s did not change the identity", k)
		}
	}
	withExtra := Properties{"created_by": "producer"}
	for k, v := range base {
		withExtra[k] = v
	}
	if other, err := VertexID("short_url", withExtra); err != nil || other == id {
		t.Errorf("an extra property did not change the identity (%v)", err)
	}
	if other, err := VertexID("short_urls", base); err != nil || other == id {
		t.Errorf("the label is not part of the identity (%v)", err)
	}
}

func TestCanonicalRejects(t *testing.T) {
	tests := []struct {
		name  string
		label string
		props Properties
	}{
		{"upper-case label", "ShortURL", Properties{}},
		{"empty label", "", Properties{}},
		{"bad key", "short_url", Properties{"Target-URL": "x"}},
		{"float value", "short_url", Properties{"n": 1.5}},
		{"int not int64", "short_url", Properties{"n": 1}},
		{"nil value", "short_url", Properties{"n": nil}},
		{"invalid utf-8", "short_url", Properties{"n": "\xff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := VertexID(tt.label, tt.props); !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := EdgeID("e", "not-an-id", "x", Properties{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("edge with bad endpoints: err = %v", err)
	}
}

func TestDocumentRoundTrip(t *testing.T) {
	v, err := NewVertex("short_url", Properties{"short_url_token": "7BTadEDkJ8", "short_url_path": "https://s.example/7BTadEDkJ8", "target_url": "https://example.com/a?b=c&d=\"e\""})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEdge("short_url_visited", v, v, Properties{"event_identifier": "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", "n": int64(3), "ok": true})
	if err != nil {
		t.Fatal(err)
	}
	doc := Document{Vertices: []Vertex{v}, Edges: []Edge{e}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("not JSON: %s", b)
	}
	var back Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if err := back.Verify(); err != nil {
		t.Errorf("verify: %v", err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Errorf("encoding is not deterministic:\n%s\n%s", b, b2)
	}
}

func TestVerifyCatchesForgedIDs(t *testing.T) {
	v, _ := NewVertex("short_url", Properties{"short_url_token": "7BTadEDkJ8"})
	forged := v
	forged.Properties = Properties{"short_url_token": "7BTadEDkJ9"}
	if err := (Document{Vertices: []Vertex{forged}}).Verify(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("vertex: err = %v", err)
	}
	e, _ := NewEdge("short_url_visited", v, v, Properties{"event_identifier": "ev_1"})
	e.Properties = Properties{"event_identifier": "ev_2"}
	if err := (Document{Edges: []Edge{e}}).Verify(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("edge: err = %v", err)
	}
}

func TestUnmarshalRejects(t *testing.T) {
	tests := map[string]string{
		"not json":          `{`,
		"unknown member":    `{"vertices":[],"edges":[],"extra":1}`,
		"wrong vertex type": `{"vertices":[{"@type":"g:Edge","@value":{}}],"edges":[]}`,
		"two values":        `{"vertices":[{"@type":"g:Vertex","@value":{"id":"x","label":"a","properties":{"k":[{"@type":"g:VertexProperty","@value":{"id":"x/k","label":"k","value":"1"}},{"@type":"g:VertexProperty","@value":{"id":"x/k","label":"k","value":"2"}}]}}}],"edges":[]}`,
		"mislabelled":       `{"vertices":[{"@type":"g:Vertex","@value":{"id":"x","label":"a","properties":{"k":[{"@type":"g:VertexProperty","@value":{"id":"x/k","label":"j","value":"1"}}]}}}],"edges":[]}`,
		"list value":        `{"vertices":[{"@type":"g:Vertex","@value":{"id":"x","label":"a","properties":{"k":[{"@type":"g:VertexProperty","@value":{"id":"x/k","label":"k","value":{"@type":"g:List","@value":[]}}}]}}}],"edges":[]}`,
		"untyped number":    `{"vertices":[{"@type":"g:Vertex","@value":{"id":"x","label":"a","properties":{"k":[{"@type":"g:VertexProperty","@value":{"id":"x/k","label":"k","value":3}}]}}}],"edges":[]}`,
		"edge property":     `{"vertices":[],"edges":[{"@type":"g:Edge","@value":{"id":"x","label":"a","inV":"i","inVLabel":"l","outV":"o","outVLabel":"l","properties":{"k":{"@type":"g:VertexProperty","@value":{"key":"k","value":"v"}}}}}]}`,
		"trailing data":     `{"vertices":[],"edges":[]} {}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var d Document
			if err := json.Unmarshal([]byte(in), &d); err == nil {
				t.Fatalf("accepted %s", in)
			}
		})
	}
}

// TestNestedValueRefusedByItsType: a property value nested thousands of lists deep
// (a 60 KB body) is refused without decoding each level, which copied the rest of
// the value at every one: 183 MB allocated where this allows 8.
func TestNestedValueRefusedByItsType(t *testing.T) {
	const depth = 2000
	value := strings.Repeat(`{"@type":"g:List","@value":[`, depth) + `"x"` + strings.Repeat(`]}`, depth)
	doc := []byte(`{"vertices":[{"@type":"g:Vertex","@value":{"id":"x","label":"a","properties":{"k":[{"@type":"g:VertexProperty","@value":{"id":"x/k","label":"k","value":` + value + `}}]}}}],"edges":[]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var d Document
	err := json.Unmarshal(doc, &d)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "g:List") {
		t.Errorf("err = %v, want ErrInvalid naming g:List", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("allocated %d MB to refuse a %d KB document", got>>20, len(doc)>>10)
	}
}

func TestDecodeValue(t *testing.T) {
	in := `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","n",{"@type":"g:Int64","@value":12},"d",{"@type":"g:Double","@value":1.5},"l",{"@type":"g:List","@value":[true,null]}]}]}`
	got, err := DecodeValue(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"short_url_token": "7BTadEDkJ8", "n": int64(12), "d": 1.5, "l": []any{true, nil}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	enc, err := AppendValue(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeValue(enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("append/decode round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"@type":"g:Map","@value":["k"]}`, `{"@type":"g:Map","@value":[1,2]}`, `{"@type":"g:Nope","@value":1}`, `[1]`, `12`, `{"@type":"g:Int64","@value":"x"}`, ``} {
		if _, err := DecodeValue(json.RawMessage(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeValue(%s) err = %v, want ErrInvalid", bad, err)
		}
	}
}

// nested wraps inner in depth collections of the given shape, written compactly
// as Gremlin servers write them or with @value before @type, which takes the
// general path at every level.
func nested(shape string, depth int, inner string) string {
	pre, post := `{"@type":"g:List","@value":[`, `]}`
	switch shape {
	case "map":
		pre = `{"@type":"g:Map","@value":["k",`
	case "reordered":
		pre, post = `{"@value":[`, `],"@type":"g:Set"}`
	}
	return strings.Repeat(pre, depth) + inner + strings.Repeat(post, depth)
}

// TestDecodeValueDepthBounded: collections nest at most maxDepth levels. Deeper
// values are refused before the level that passes the bound is split: decoding
// them cost the size of the value at every level, so 4,999 levels (the deepest
// encoding/json reads) took 5.7 s and allocated 1.1 GB where this allows 32 MB.
func TestDecodeValueDepthBounded(t *testing.T) {
	for _, shape := range []string{"list", "map", "reordered"} {
		t.Run(shape, func(t *testing.T) {
			v, err := DecodeValue([]byte(nested(shape, maxDepth, `"x"`)))
			if err != nil {
				t.Fatalf("%d levels: %v", maxDepth, err)
			}
			for range maxDepth {
				switch c := v.(type) {
				case []any:
					v = c[0]
				case map[string]any:
					v = c["k"]
				default:
					t.Fatalf("%d levels decoded to %#v", maxDepth, v)
				}
			}
			if v != "x" {
				t.Fatalf("%d levels: innermost value %#v", maxDepth, v)
			}
			if _, err := DecodeValue([]byte(nested(shape, maxDepth+1, `"x"`))); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "nested deeper than") {
				t.Errorf("%d levels: err = %v, want ErrInvalid naming the bound", maxDepth+1, err)
			}
		})
	}
	deep := []byte(nested("list", 4999, `"x"`))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeValue(deep)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("4,999 levels: err = %v, want ErrInvalid naming the bound", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("allocated %d MB to refuse a %d KB value", got>>20, len(deep)>>10)
	}
	if _, err := DecodeValue([]byte(nested("list", 10_000, `"x"`))); !errors.Is(err, ErrInvalid) {
		t.Errorf("10,000 levels: err = %v, want ErrInvalid", err)
	}
}

func FuzzDecodeDocument(f *testing.F) {
	v, _ := NewVertex("short_url", Properties{"short_url_token": "7BTadEDkJ8", "n": int64(1)})
	e, _ := NewEdge("short_url_visited", v, v, Properties{"event_identifier": "ev_1"})
	seed, _ := json.Marshal(Document{Vertices: []Vertex{v}, Edges: []Edge{e}})
	f.Add(seed)
	f.Add([]byte(`{"vertices":[],"edges":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Document
		if err := json.Unmarshal(b, &d); err != nil {
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			return // a value without canonical form survived parsing only as far as Marshal
		}
		var again Document
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("re-parse of own output failed: %v\n%s", err, out)
		}
	})
}

func TestIsName(t *testing.T) {
	for s, want := range map[string]bool{"a": true, "short_url": true, "a9_z": true, "": false, "9a": false, "A": false, "a-b": false, "_a": false,
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl":  true,
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm": false, "é": false} {
		if got := isName(s); got != want {
			t.Errorf("isName(%q) = %v, want %v (len %d)", s, got, want, len(s))
		}
	}
}

func TestUnmarshalChecksVertexPropertyIDs(t *testing.T) {
	v, _ := NewVertex("short_url", Properties{"short_url_token": "7BTadEDkJ8"})
	b, _ := Document{Vertices: []Vertex{v}}.AppendJSON(nil)
	bad := strings.Replace(string(b), v.ID+"/short_url_token", v.ID+"/other", 1)
	var d Document
	if err := json.Unmarshal([]byte(bad), &d); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a wrong vertex-property id was accepted: %v", err)
	}
	esc := strings.Replace(string(b), `"value":"7BTadEDkJ8"`, `"value":"7BTa\u0064EDkJ8"`, 1)
	if err := json.Unmarshal([]byte(esc), &d); err != nil || d.Vertices[0].Properties["short_url_token"] != "7BTadEDkJ8" {
		t.Fatalf("escaped string: %v %v", err, d.Vertices)
	}
}

func BenchmarkUnmarshalClickDocument(b *testing.B) {
	v, _ := NewVertex("short_url", Properties{"short_url_token": "7BTadEDkJ8", "short_url_path": "https://s.example.com/7BTadEDkJ8", "target_url": "https://example.com/landing?message_id=msg_123"})
	e, _ := NewEdge("short_url_visited", v, v, Properties{"event_identifier": "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", "visitor_ip_address": "203.0.113.7", "user_agent": "Mozilla/5.0", "effective_at": "2026-11-29T17:13:58.123Z"})
	data, _ := Document{Vertices: []Vertex{v}, Edges: []Edge{e}}.AppendJSON(nil)
	b.ReportAllocs()
	for b.Loop() {
		var d Document
		if err := json.Unmarshal(data, &d); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeGeneral decodes a typed value on the general path, which the compact fast
// paths of DecodeValue must agree with.
func decodeGeneral(raw string) (any, error) {
	var ty typed
	if err := strictUnmarshal([]byte(raw), &ty); err != nil {
		return nil, err
	}
	return decodeTyped(ty, 0)
}

// compactInt is only a faster road to what the general path decodes: every spelling
// either decodes alike through both or is left to the general path.
func TestCompactIntAgreesWithTheGeneralPath(t *testing.T) {
	for _, v := range []string{"0", "7", "-7", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"-0", "007", "+5", "1e5", "1.0", "", "-", " 5", "5 ", "\"5\"", "null"} {
		for _, typ := range []string{"g:Int64", "g:Int32"} {
			raw := `{"@type":"` + typ + `","@value":` + v + `}`
			n, fast := compactInt([]byte(raw))
			want, err := decodeGeneral(raw)
			switch {
			case fast && (err != nil || want != n):
				t.Errorf("%s: fast path %d, general path %v %v", raw, n, want, err)
			case fast != (v == "0" || v == "7" || v == "-7" || v == "9223372036854775807" || v == "-9223372036854775808"):
				t.Errorf("%s: fast path taken = %v", raw, fast)
			}
			got, gerr := DecodeValue([]byte(raw))
			if (gerr == nil) != (err == nil) || (err == nil && got != want) {
				t.Errorf("%s: DecodeValue %v %v, general path %v %v", raw, got, gerr, want, err)
			}
		}
	}
}

// compactCollection is only a faster road to what the general path decodes.
func TestCompactCollectionAgreesWithTheGeneralPath(t *testing.T) {
	for _, raw := range []string{
		`{"@type":"g:List","@value":[]}`,
		`{"@type":"g:List","@value":["a",{"@type":"g:Int64","@value":2}]}`,
		`{"@type":"g:Set","@value":["a","a"]}`,
		`{"@type":"g:Map","@value":["k",{"@type":"g:Map","@value":["ua",{"@type":"g:Int64","@value":3}]}]}`,
		`{"@type":"g:Map","@value":["k"]}`,
		`{"@type":"g:Map","@value":[1,2]}`,
		`{"@type":"g:List","@value":[1],"x":1}`,
		`{"@type":"g:List","@value":[1]}}`,
		`{"@type":"g:List","@value":[1] }`,
		`{"@type":"g:List","@value":[1],"@value":[2]}`,
		`{"@type":"g:List","@value":[}`,
	} {
		want, werr := decodeGeneral(raw)
		got, gerr := DecodeValue([]byte(raw))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: DecodeValue %#v %v, general path %#v %v", raw, got, gerr, want, werr)
		}
	}
	// Stricter in one way: a repeated @value, which encoding/json resolves to the
	// last, is refused.
	if v, err := DecodeValue([]byte(`{"@type":"g:List","@value":["a"],"@value":["b"]}`)); err == nil {
		t.Errorf("a repeated @value decoded as %v", v)
	}
}
