package localbus

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// FuzzConsumerRecord gives what the consumer does with one journal record — the check
// before ingest (clickfact.Event.Parse, by position for the bus's own layout, else by
// the decoder), its facts.jsonl line and keepRefused's reading — a payload of any
// bytes. A refusal is ErrInvalid. An accepted record's vertex and edge are each one
// object (on one line, on the fast path), so that spliced into the merged ingest document they are one
// element each, never two; only the fast path leaves the rest of the JSON grammar to
// Persist. Of a record that is JSON, the fast path takes the elements the decoder
// takes, the facts log gets exactly one line, and keepRefused finds its detail.
func FuzzConsumerRecord(f *testing.F) {
	var e encoder
	for _, fact := range facts(f, 2) {
		fr, err := e.encode(fact, fixedNow, defaultRegion, crcTable())
		if err != nil {
			f.Fatal(err)
		}
		own := bytes.Clone(fr[frameHeader:])
		f.Add(own)
		reordered := bytes.Replace(own, []byte(`{"version":"0",`), []byte(`{`), 1)
		f.Add(append(reordered[:len(reordered)-1], `,"version":"0"}`...))
		var indented bytes.Buffer
		_ = json.Indent(&indented, own, "", " ")
		f.Add(indented.Bytes())
		f.Add(bytes.Replace(own, []byte(`],"edges":[`), []byte(`,{"@type":"g:Vertex"}],"edges":[`), 1))
	}
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var ev clickfact.Event
		vertex, edge, err := ev.Parse(payload)
		if err != nil {
			if !errors.Is(err, clickfact.ErrInvalid) {
				t.Fatalf("refusal %v is not ErrInvalid", err)
			}
			return
		}
		fast := ev.ID == "" // the decoder path sets it; the fast path leaves it unset
		for _, el := range [][]byte{vertex, edge} {
			if len(el) < 2 || el[0] != '{' || el[len(el)-1] != '}' || (fast && bytes.ContainsAny(el, "\r\n")) {
				t.Fatalf("accepted element %q is not one object (on one line, on the fast path)", el)
			}
		}
		if !json.Valid(payload) {
			if !fast {
				t.Fatalf("the decoder accepted a record that is not JSON: %q", payload)
			}
			return // Persist refuses the document; the consumer sets the event aside
		}
		for _, el := range [][]byte{vertex, edge} {
			var list []json.RawMessage
			if err := json.Unmarshal(append(append([]byte("["), el...), ']'), &list); err != nil || len(list) != 1 {
				t.Fatalf("accepted element %q splices as %d elements (%v)", el, len(list), err)
			}
		}
		if fast {
			v, e, err := new(clickfact.Event).Parse(append([]byte(" "), payload...)) // not the own layout
			if err != nil || !bytes.Equal(v, vertex) || !bytes.Equal(e, edge) {
				t.Fatalf("the decoder reads the record otherwise (%v):\n%s\n%s", err, v, e)
			}
		}
		line := appendLine(nil, payload)
		if bytes.IndexAny(line, "\r\n") != len(line)-1 || !json.Valid(line) {
			t.Fatalf("facts log line %q is not one JSON line", line)
		}
		var rec struct {
			Detail json.RawMessage `json:"detail"`
		}
		var fact struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		if err := json.Unmarshal(payload, &rec); err != nil || json.Unmarshal(rec.Detail, &fact) != nil || fact.IdempotencyKey == "" {
			t.Fatalf("keepRefused cannot read the idempotency key of an accepted record (%v): %s", err, payload)
		}
	})
}
