package clickfact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/golden"
	"github.com/linoone/linoone/internal/testutil/schematest"
)

var testClick = clickfact.Click{
	Token: "7BTadEDkJ8", Path: "https://short.example.com/7BTadEDkJ8", Target: "https://example.com/landing?message_id=msg_123",
	IP: "203.0.113.7", UserAgent: "Mozilla/5.0 (X11; Linux x86_64)", At: time.Date(2026, 11, 29, 17, 13, 58, 123456789, time.FixedZone("CET", 3600)),
}

const testEventID = "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G"

func TestBuild(t *testing.T) {
	f, err := clickfact.Build(testClick, testEventID)
	if err != nil {
		t.Fatal(err)
	}
	if f.IdempotencyKey != "shorturl:"+testEventID || f.EventID != testEventID {
		t.Fatalf("fact = %+v", f)
	}
	golden.JSON(t, "click_fact.json", f.Detail)
	schematest.MustValidate(t, schematest.GraphFact, f.Detail)
	if strings.Contains(string(f.Detail), "created_at") || strings.Contains(string(f.Detail), "metadata") {
		t.Fatal("fact carries created_at or metadata")
	}
	back, err := clickfact.Parse(f.Detail)
	if err != nil {
		t.Fatalf("ParseFact of own fact: %v", err)
	}
	if back.IdempotencyKey != f.IdempotencyKey || !bytes.Equal(back.Detail, f.Detail) {
		t.Fatalf("ParseFact = %+v", back)
	}
	// A replayed fact is the same edge: same inputs, same bytes.
	again, _ := clickfact.Build(testClick, testEventID)
	if !bytes.Equal(again.Detail, f.Detail) {
		t.Fatal("the same click built twice differs")
	}
}

func TestBuildHostileUserAgent(t *testing.T) {
	v := testClick
	v.UserAgent = "\"}]}\xff\x00" + strings.Repeat("A", 5000)
	f, err := clickfact.Build(v, testEventID)
	if err != nil {
		t.Fatal(err)
	}
	schematest.MustValidate(t, schematest.GraphFact, f.Detail)
	if _, err := clickfact.Parse(f.Detail); err != nil {
		t.Fatal(err)
	}
}

func TestBuildRejectsBadEventID(t *testing.T) {
	for _, id := range []string{"", "01JZ8Q6W3C4V5B6N7M8K9J0H1G", "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1", "ev_01JZ8Q6W3C4V5B6N7M8K9J0HIL"} {
		if _, err := clickfact.Build(testClick, id); !errors.Is(err, clickfact.ErrInvalid) {
			t.Errorf("%q: err = %v", id, err)
		}
	}
}

func TestFactSchemaAndParserRejectHandMadeFacts(t *testing.T) {
	f, _ := clickfact.Build(testClick, testEventID)
	mutate := func(edit func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(f.Detail, &m)
		edit(m)
		b, _ := json.Marshal(m)
		return b
	}
	edge := func(m map[string]any) map[string]any {
		return m["graphson"].(map[string]any)["edges"].([]any)[0].(map[string]any)["@value"].(map[string]any)
	}
	tests := map[string][]byte{
		"metadata object": mutate(func(m map[string]any) { m["metadata"] = map[string]any{"campaign": "x"} }),
		"wrong fact type": mutate(func(m map[string]any) { m["fact_type"] = "short_url.clicked" }),
		"key mismatch":    mutate(func(m map[string]any) { m["idempotency_key"] = "shorturl:ev_01JZ8Q6W3C4V5B6N7M8K9J0H1H" }),
		"no edge":         mutate(func(m map[string]any) { m["graphson"].(map[string]any)["edges"] = []any{} }),
		"created_at on edge": mutate(func(m map[string]any) {
			edge(m)["properties"].(map[string]any)["created_at"] = map[string]any{"@type": "g:Property", "@value": map[string]any{"key": "created_at", "value": "x"}}
		}),
		"edge without user agent": mutate(func(m map[string]any) { delete(edge(m)["properties"].(map[string]any), "user_agent") }),
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			// JSON Schema cannot compare two members; the parser checks the key.
			if err := schematest.Validate(schematest.GraphFact, b); err == nil && name != "key mismatch" {
				t.Errorf("schema accepted it")
			}
			if _, err := clickfact.Parse(b); !errors.Is(err, clickfact.ErrInvalid) {
				t.Errorf("ParseFact err = %v", err)
			}
		})
	}
}

func TestDeadLetter(t *testing.T) {
	f, _ := clickfact.Build(testClick, testEventID)
	d := clickfact.NewDeadLetter(f, testClick.At, 1, errors.New("PutEvents: FailedEntryCount=1 (InternalFailure)"))
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	golden.JSON(t, "click_dlq_message.json", b)
	schematest.MustValidate(t, schematest.ClickDLQ, b)
	if d := clickfact.NewDeadLetter(f, testClick.At, 0, nil); d.Reason == "" || d.Attempts != 1 {
		t.Fatalf("dead letter without a reason: %+v", d)
	}
	amp := testClick
	amp.Target = "https://example.com/a?b=<c>&d=e"
	fa, _ := clickfact.Build(amp, testEventID)
	enc, err := clickfact.NewDeadLetter(fa, testClick.At, 1, errors.New("x")).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := clickfact.ParseDeadLetter(enc); err != nil || !bytes.Equal(got.Detail, fa.Detail) {
		t.Fatalf("the fact did not survive the dead letter byte for byte: %v\n%s\n%s", err, got.Detail, fa.Detail)
	}
	back, fact, err := clickfact.ParseDeadLetter(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Attempts != 1 || fact.IdempotencyKey != f.IdempotencyKey || !bytes.Equal(fact.Detail, f.Detail) {
		t.Fatalf("ParseDeadLetter = %+v, %+v", back, fact)
	}
	for name, body := range map[string]string{
		"not json":      `{`,
		"attempts 0":    strings.Replace(string(b), `"attempts":1`, `"attempts":0`, 1),
		"extra member":  strings.Replace(string(b), `"attempts":1`, `"attempts":1,"x":1`, 1),
		"bad time":      strings.Replace(string(b), d.FailedAt, "yesterday", 1),
		"bad fact":      `{"graph_fact":{},"failed_at":"2026-01-01T00:00:00Z","attempts":1,"reason":"x"}`,
		"trailing data": string(b) + `{"graph_fact":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := schematest.Validate(schematest.ClickDLQ, []byte(body)); err == nil {
				t.Error("schema accepted it")
			}
			if _, _, err := clickfact.ParseDeadLetter([]byte(body)); !errors.Is(err, clickfact.ErrInvalid) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// referenceClickFact builds the fact the slow, obvious way through the generic
// GraphSON code: the fast builder must produce the same bytes.
func referenceClickFact(t *testing.T, c clickfact.Click, eventID string) []byte {
	t.Helper()
	// The vertex is the one issuance writes: the fact names the same short_url.
	vertex, err := shorturl.ShortURL{Token: shorturl.Token(c.Token), Path: c.Path, Target: c.Target}.Vertex()
	if err != nil {
		t.Fatal(err)
	}
	ua := strings.ToValidUTF8(c.UserAgent, "\uFFFD")
	if len(ua) > 1024 {
		ua = strings.ToValidUTF8(ua[:1024], "")
	}
	edge, err := graphson.NewEdge("short_url_visited", vertex, vertex, graphson.Properties{
		"event_identifier": eventID, "visitor_ip_address": c.IP, "user_agent": ua,
		"effective_at": c.At.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// AppendJSON, not json.Marshal: encoding/json would HTML-escape the output.
	doc, err := graphson.Document{Vertices: []graphson.Vertex{vertex}, Edges: []graphson.Edge{edge}}.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"schema_version":"1.0","graphson_format":"graphson-v3","fact_type":"short_url.visited","entity_types":["short_url"],"idempotency_key":"shorturl:` + eventID + `","graphson":` + string(doc) + `}`)
}

func TestFastFactBuilderMatchesReference(t *testing.T) {
	pieces := []string{"a", "Z", "/", "?", "&", "=", "\"", "\\", "\x01", "\x1f", "\t", "é", "😀", "\u2028", "<", ">", "%20", "'", "\xff"}
	r := mathrand.New(mathrand.NewPCG(1, 2))
	str := func(n int) string {
		var sb strings.Builder
		for range r.IntN(n) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		return sb.String()
	}
	for i := range 500 {
		c := clickfact.Click{Token: "7BTadEDkJ8", Path: "https://s.example.com/" + strings.ToValidUTF8(str(8), ""), Target: "https://example.com/" + strings.ToValidUTF8(str(40), ""),
			IP: []string{"203.0.113.7", "2001:db8::1", ""}[i%3], UserAgent: str(60), At: time.Unix(int64(r.Uint32()), int64(r.IntN(1e9)))}
		if i%50 == 0 {
			c.UserAgent = strings.Repeat("é", 700) // cut at 1024 bytes, mid-rune
		}
		id := fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", i)
		f, err := clickfact.Build(c, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceClickFact(t, c, id); !bytes.Equal(f.Detail, want) {
			t.Fatalf("case %d differs:\n got %s\nwant %s", i, f.Detail, want)
		}
		if _, err := clickfact.Parse(f.Detail); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := clickfact.Build(testClick, testEventID); err != nil {
			b.Fatal(err)
		}
	}
}
