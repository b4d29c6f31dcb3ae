package localpersist

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/foundation/yield"
)

// strictDecode is the reference: graphson's decoder.
func strictDecode(body []byte) (graphson.Document, error) {
	var doc graphson.Document
	err := json.Unmarshal(body, &doc)
	return doc, err
}

// sameDocument compares documents, nil and empty slices alike.
func sameDocument(t *testing.T, want, got graphson.Document) {
	t.Helper()
	if len(want.Vertices) == 0 && len(got.Vertices) == 0 {
		want.Vertices, got.Vertices = nil, nil
	}
	if len(want.Edges) == 0 && len(got.Edges) == 0 {
		want.Edges, got.Edges = nil, nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fast path differs from the strict decoder (-strict +fast):\n%s", diff)
	}
}

func TestFastDecodeAgrees(t *testing.T) {
	v := shortURL(t, "7BTadEDkJ8")
	sample, err := graphson.NewVertex("sample", graphson.Properties{"count": int64(-42), "flag": true, "off": false, "name": "x", "utf8": "café 😀"})
	if err != nil {
		t.Fatal(err)
	}
	link, err := graphson.NewEdge("link", sample, v, graphson.Properties{"weight": int64(7), "ok": false, "note": "naïve"})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := graphson.NewVertex("empty", graphson.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	doc := graphson.Document{Vertices: []graphson.Vertex{v, sample, empty}, Edges: []graphson.Edge{click(t, v, "ev_1"), link}}
	body := docJSON(t, doc)
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", " \t\r"); err != nil {
		t.Fatal(err)
	}
	vs := docJSON(t, graphson.Document{Vertices: doc.Vertices})
	es := docJSON(t, graphson.Document{Edges: doc.Edges})
	cases := map[string]string{
		"as written":      string(body),
		"whitespace":      " \n" + indented.String() + "\n",
		"edges first":     `{"edges":` + string(es[len(`{"vertices":[],"edges":`):len(es)-1]) + `,"vertices":` + string(vs[len(`{"vertices":`):len(vs)-len(`,"edges":[]}`)]) + `}`,
		"int32":           strings.ReplaceAll(string(body), `"g:Int64"`, `"g:Int32"`),
		"no edges at all": string(vs),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := strictDecode([]byte(b))
			if err != nil {
				t.Fatalf("strict decoder refuses the case: %v\n%s", err, b)
			}
			got, ok := fastDocument([]byte(b), new(yield.Point))
			if !ok {
				t.Fatalf("fast path declined:\n%s", b)
			}
			sameDocument(t, want, got)
		})
	}
}

// TestFastDecodeDeclines lists inputs the fast path must leave to the strict
// decoder, whether that accepts them (escapes, nulls) or refuses them.
func TestFastDecodeDeclines(t *testing.T) {
	v := shortURL(t, "7BTadEDkJ8")
	body := string(docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(t, v, "ev_1")}}))
	edit := func(old, new string) string {
		t.Helper()
		if !strings.Contains(body, old) {
			t.Fatalf("%q not in body", old)
		}
		return strings.Replace(body, old, new, 1)
	}
	cases := map[string]string{
		"escape in a value":     edit(`"ev_1"`, `"ev\u005f1"`),
		"escape in a key":       edit(`"user_agent":{`, `"user\u005fagent":{`),
		"null document":         `null`,
		"null edges":            `{"vertices":[],"edges":null}`,
		"missing edges":         `{"vertices":[]}`,
		"duplicate member":      edit(`"label":"short_url_visited"`, `"label":"short_url_visited","label":"short_url_visited"`),
		"unknown member":        edit(`"label":"short_url_visited"`, `"label":"short_url_visited","weight":1`),
		"unknown top member":    edit(`{"vertices"`, `{"x":1,"vertices"`),
		"trailing data":         body + `{}`,
		"trailing comma":        edit(`]}`, `],}`),
		"double value":          edit(`"ev_1"`, `{"@type":"g:Double","@value":1.5}`),
		"fraction in an int":    edit(`"ev_1"`, `{"@type":"g:Int64","@value":1.0}`),
		"leading zero":          edit(`"ev_1"`, `{"@type":"g:Int64","@value":01}`),
		"int out of range":      edit(`"ev_1"`, `{"@type":"g:Int64","@value":9223372036854775808}`),
		"null value":            edit(`"ev_1"`, `null`),
		"wrong element type":    edit(`"g:Edge"`, `"g:Vertex"`),
		"wrong property type":   edit(`"g:Property"`, `"g:VertexProperty"`),
		"property key mismatch": edit(`"key":"event_identifier"`, `"key":"event_id"`),
		"two vertex values":     strings.Replace(body, `}}],"short_url_token"`, `}},{"@type":"g:VertexProperty","@value":{"id":"x","label":"short_url_path","value":"y"}}],"short_url_token"`, 1),
		"vertex property id":    strings.Replace(body, `/short_url_token"`, `/other"`, 1),
		"invalid utf-8":         edit(`"ev_1"`, "\"ev\xff\""),
		"control character":     edit(`"ev_1"`, "\"ev\x01\""),
		"not json":              `{"vertices":`,
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if doc, ok := fastDocument([]byte(b), new(yield.Point)); ok {
				t.Errorf("fast path took it: %+v\n%s", doc, b)
			}
		})
	}
}

// FuzzFastDecode checks the fast path's one promise: whatever it accepts, the
// strict decoder accepts with the same result.
func FuzzFastDecode(f *testing.F) {
	v := shortURL(f, "7BTadEDkJ8")
	f.Add(docJSON(f, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(f, v, "ev_1")}}))
	f.Add([]byte(`{"vertices":[],"edges":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := fastDocument(b, new(yield.Point))
		if !ok {
			return
		}
		want, err := strictDecode(b)
		if err != nil {
			t.Fatalf("fast path took what the strict decoder refuses (%v):\n%s", err, b)
		}
		sameDocument(t, want, got)
	})
}

func TestDecodeProperties(t *testing.T) {
	props := graphson.Properties{"n": int64(-3), "b": true, "s": "caf\u00e9 \"q\" \\ \u0001 😀", "plain": "x"}
	raw, err := canonicalProperties("link", strings.Repeat("a", 64), strings.Repeat("b", 64), props)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeProperties(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any(props), got); diff != "" {
		t.Errorf("round trip of %s (-want +got):\n%s", raw, diff)
	}
}
