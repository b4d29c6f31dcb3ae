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
)

func TestEventRoundTrip(t *testing.T) {
	f, err := clickfact.Build(testClick, testEventID)
	if err != nil {
		t.Fatal(err)
	}
	uuid := [16]byte{0: 0xff, 6: 0xff, 8: 0xff, 15: 1}
	at := time.Date(2026, 11, 30, 8, 9, 10, 0, time.UTC)
	b := clickfact.AppendEvent(nil, &uuid, "000000000000", "eu-west-1", at, f.Detail)
	var env struct {
		ID         string          `json:"id"`
		Version    string          `json:"version"`
		DetailType string          `json:"detail-type"`
		Source     string          `json:"source"`
		Time       string          `json:"time"`
		Region     string          `json:"region"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("event is not JSON: %v\n%s", err, b)
	}
	if env.ID != "ff000000-0000-4f00-bf00-000000000001" || env.DetailType != clickfact.DetailType || env.Source != clickfact.Source ||
		env.Time != "2026-11-30T08:09:10Z" || env.Region != "eu-west-1" || !bytes.Equal(env.Detail, f.Detail) {
		t.Fatalf("event = %+v", env)
	}
	var ev clickfact.Event
	vertex, edge, err := ev.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(vertex), `{"@type":"g:Vertex"`) || !strings.HasPrefix(string(edge), `{"@type":"g:Edge"`) {
		t.Fatalf("elements:\n%s\n%s", vertex, edge)
	}
	if !bytes.Contains(f.Detail, append(append([]byte(`"vertices":[`), vertex...), `],"edges":[`...)) ||
		!bytes.Contains(f.Detail, append(append([]byte(`"edges":[`), edge...), `]}}`...)) {
		t.Fatalf("elements are not the fact's:\n%s\n%s", vertex, edge)
	}
}

// TestEventParseFastPathAgreesWithDecoder: events in the bus's own layout are read
// by position; the same bytes with the envelope's members in another order (valid
// JSON, another layout) take the decoder, and both give the same elements. A
// mangled layout byte never slips through the fast path.
func TestEventParseFastPathAgreesWithDecoder(t *testing.T) {
	r := mathrand.New(mathrand.NewPCG(5, 6))
	for i := range 300 {
		c := testClick
		c.Target = fmt.Sprintf("https://example.com/%d?q=%q&x=],\"edges\":[", r.IntN(1e6), "a\"b")
		c.UserAgent = strings.Repeat("é\"\\", r.IntN(20))
		f, err := clickfact.Build(c, fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", i))
		if err != nil {
			t.Fatal(err)
		}
		var uuid [16]byte
		own := clickfact.AppendEvent(nil, &uuid, "000000000000", "eu-west-1", time.Unix(int64(r.Uint32()), 0), f.Detail)
		reordered := bytes.Replace(own, []byte(`{"version":"0",`), []byte(`{`), 1)
		reordered = append(reordered[:len(reordered)-1], `,"version":"0"}`...)
		var a, b clickfact.Event
		v1, e1, err1 := a.Parse(own)
		v2, e2, err2 := b.Parse(reordered)
		if err1 != nil || err2 != nil || !bytes.Equal(v1, v2) || !bytes.Equal(e1, e2) {
			t.Fatalf("case %d: fast %v, decoder %v\n%s\n%s", i, err1, err2, own, reordered)
		}
		if b.Detail.IdempotencyKey != f.IdempotencyKey {
			t.Fatalf("case %d: the decoder path read idempotency key %q", i, b.Detail.IdempotencyKey)
		}
		if a.ID != "" { // the fast path leaves the fields unset
			t.Fatalf("case %d: an event in AppendEvent's own layout was read by the decoder", i)
		}
		// One byte changed anywhere: refused, or accepted with elements that are
		// each at most one element of an ingest document. The fast path leaves the
		// rest of the JSON grammar to Persist, which refuses the document.
		j := r.IntN(len(own))
		bad := bytes.Clone(own)
		bad[j] ^= 0x20
		var d clickfact.Event
		if v, e, err := d.Parse(bad); err == nil {
			for _, el := range [][]byte{v, e} {
				if n, ok := elementsIn(el); ok && n != 1 {
					t.Fatalf("case %d: byte %d changed, accepted an element that splices as %d: %s", i, j, n, el)
				}
			}
		}
	}
}

// elementsIn is how many elements el makes in an ingest document's list; ok is false
// when the list is not JSON (Persist refuses the document).
func elementsIn(el []byte) (int, bool) {
	var list []json.RawMessage
	if err := json.Unmarshal(append(append([]byte("["), el...), ']'), &list); err != nil {
		return 0, false
	}
	return len(list), true
}

// An event whose vertex or edge would splice into an ingest document as two
// elements, or as a broken one, is never accepted with such an element: the fast
// path refuses it and the decoder either refuses it too or returns whole elements.
func TestEventParseFastPathNeverSplitsAnElement(t *testing.T) {
	f, _ := clickfact.Build(testClick, testEventID)
	var uuid [16]byte
	good := string(clickfact.AppendEvent(nil, &uuid, "000000000000", "us-east-1", time.Unix(0, 0), f.Detail))
	v, e, err := new(clickfact.Event).Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	for name, payload := range map[string]string{
		"two vertices":    strings.Replace(good, string(v), string(v)+","+string(v), 1),
		"two edges":       strings.Replace(good, string(e), string(e)+","+string(e), 1),
		"closed early":    strings.Replace(good, string(v), string(v[:len(v)-1])+`},{"x":{`, 1),
		"line break":      strings.Replace(good, string(e), string(e[:len(e)-1])+"\n}", 1),
		"unclosed string": strings.Replace(good, string(v), string(v[:len(v)-1])+`,"x":"}`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			if payload == good {
				t.Fatal("the case did not change the event")
			}
			vv, ee, err := new(clickfact.Event).Parse([]byte(payload))
			if err == nil {
				for _, el := range [][]byte{vv, ee} {
					if n, ok := elementsIn(el); !ok || n != 1 {
						t.Fatalf("accepted %q (%d elements, JSON %v)", el, n, ok)
					}
				}
			}
		})
	}
}

func TestEventParseRejects(t *testing.T) {
	f, _ := clickfact.Build(testClick, testEventID)
	var uuid [16]byte
	good := string(clickfact.AppendEvent(nil, &uuid, "000000000000", "us-east-1", time.Unix(0, 0), f.Detail))
	var ev clickfact.Event
	for name, payload := range map[string]string{
		"not json":        good[:40],
		"other source":    strings.Replace(good, `"source":"shorturl"`, `"source":"other"`, 1),
		"other type":      strings.Replace(good, `"detail-type":"GraphFactProduced"`, `"detail-type":"X"`, 1),
		"other fact":      strings.Replace(good, `"fact_type":"short_url.visited"`, `"fact_type":"x"`, 1),
		"bad key":         strings.Replace(good, `"idempotency_key":"shorturl:ev_`, `"idempotency_key":"x:ev_`, 1),
		"no edge":         strings.Replace(good, `"edges":[{`, `"edges":[],"x":[{`, 1),
		"element a value": strings.Replace(good, `"vertices":[{"@type":"g:Vertex"`, `"vertices":[1],"y":[{"@type":"g:Vertex"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := ev.Parse([]byte(payload)); !errors.Is(err, clickfact.ErrInvalid) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// A reused Event forgets the last one: a good event parses after bad ones.
	if _, _, err := ev.Parse([]byte(good)); err != nil {
		t.Fatal(err)
	}
}

func TestBuildRejectsBadClick(t *testing.T) {
	for name, c := range map[string]clickfact.Click{
		"short token":      {Token: "7BTadEDkJ", Path: testClick.Path, Target: testClick.Target},
		"token not base62": {Token: "7BTadEDk-8", Path: testClick.Path, Target: testClick.Target},
		"invalid target":   {Token: "7BTadEDkJ8", Path: testClick.Path, Target: "https://e.example/\xff"},
	} {
		if _, err := clickfact.Build(c, testEventID); !errors.Is(err, clickfact.ErrInvalid) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestEventUUID(t *testing.T) {
	// 01ARZ3NDEKTSV4RRFFQ69G5FAV is the ULID spec's example; its bytes are
	// 01 56 3E 3A B5 D3 D6 76 4C 61 EF B9 93 02 BD 5B.
	var u [16]byte
	if !clickfact.EventUUID("ev_01ARZ3NDEKTSV4RRFFQ69G5FAV", &u) {
		t.Fatal("a valid event id was refused")
	}
	want := [16]byte{0x01, 0x56, 0x3E, 0x3A, 0xB5, 0xD3, 0xD6, 0x76, 0x4C, 0x61, 0xEF, 0xB9, 0x93, 0x02, 0xBD, 0x5B}
	if u != want {
		t.Fatalf("EventUUID = % x, want % x", u, want)
	}
	if clickfact.EventUUID("ev_01ARZ3NDEKTSV4RRFFQ69G5FAU", &u) || clickfact.EventUUID("01ARZ3NDEKTSV4RRFFQ69G5FAV", &u) {
		t.Fatal("an invalid event id was accepted")
	}
}

func TestAppendTimeMatchesAppendFormat(t *testing.T) {
	r := mathrand.New(mathrand.NewPCG(3, 4))
	times := []time.Time{time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}
	for range 2000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(time.FixedZone("X", int(r.Int64N(50000))-25000)))
	}
	for _, at := range times {
		var uuid [16]byte
		got := clickfact.AppendEvent(nil, &uuid, "000000000000", "us-east-1", at, []byte(`{}`))
		want := `"time":"` + at.UTC().Format("2006-01-02T15:04:05Z07:00") + `"`
		if !strings.Contains(string(got), want) {
			t.Fatalf("%v: event %s does not contain %s", at, got, want)
		}
		c := testClick
		c.At = at
		f, err := clickfact.Build(c, testEventID)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"value":"` + at.UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`; !strings.Contains(string(f.Detail), want) {
			t.Fatalf("%v: fact does not contain %s", at, want)
		}
	}
}
