package clickfact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/testutil/schematest"
)

// FuzzBuild builds the fact of a click whose User-Agent and address a visitor chose.
// The fact is the generic GraphSON builder's bytes, valid against the schema, taken
// back by Parse, by the consumer (on its fast path) and through a dead letter; its
// user_agent is the visitor's made valid UTF-8, cut at a character boundary, no byte
// of it beyond MaxUserAgent; and a click built twice is the same bytes.
func FuzzBuild(f *testing.F) {
	f.Add(testClick.UserAgent, testClick.IP)
	f.Add("\"}]}\xff\x00"+strings.Repeat("A", 5000), "2001:db8::1")
	f.Add(strings.Repeat("é", 700), "198.51.100.23")
	f.Add("Mozilla/5.0 & <friends> \u2028 ],\"edges\":[", "")
	f.Add(strings.Repeat("a", clickfact.MaxUserAgent-1)+"😀", "fe80::1%eth0")
	f.Fuzz(func(t *testing.T, ua, ip string) {
		c := testClick
		c.UserAgent, c.IP = ua, ip
		fact, err := clickfact.Build(c, testEventID)
		if !utf8.ValidString(ip) {
			if !errors.Is(err, clickfact.ErrInvalid) {
				t.Fatalf("address %q: err = %v, want ErrInvalid", ip, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceClickFact(t, c, testEventID); !bytes.Equal(fact.Detail, want) {
			t.Fatalf("differs from the generic builder:\n got %s\nwant %s", fact.Detail, want)
		}
		if utf8.RuneCountInString(ip) <= 64 { // every address a server reports; the schema's bound
			schematest.MustValidate(t, schematest.GraphFact, fact.Detail)
		}

		back, err := clickfact.Parse(fact.Detail)
		if err != nil || back.IdempotencyKey != fact.IdempotencyKey || back.Token != c.Token || back.EventID != testEventID {
			t.Fatalf("Parse of an own fact: %+v, %v", back, err)
		}
		var d struct {
			GraphSON graphson.Document `json:"graphson"`
		}
		if err := json.Unmarshal(fact.Detail, &d); err != nil {
			t.Fatal(err)
		}
		props := d.GraphSON.Edges[0].Properties
		if props[clickfact.PropVisitorIP] != ip {
			t.Fatalf("visitor_ip_address %q, want %q", props[clickfact.PropVisitorIP], ip)
		}
		got, _ := props[clickfact.PropUserAgent].(string)
		valid := strings.ToValidUTF8(ua, "\uFFFD")
		switch {
		case len(got) > clickfact.MaxUserAgent || !utf8.ValidString(got) || !strings.HasPrefix(valid, got):
			t.Fatalf("user_agent %q (%d bytes) is not a prefix of %q within %d bytes", got, len(got), valid, clickfact.MaxUserAgent)
		case len(valid) <= clickfact.MaxUserAgent && got != valid:
			t.Fatalf("user_agent %q, want all of %q", got, valid)
		case len(valid) > clickfact.MaxUserAgent && len(got) <= clickfact.MaxUserAgent-utf8.UTFMax:
			t.Fatalf("user_agent cut to %d bytes, more than a character short of %d", len(got), clickfact.MaxUserAgent)
		}

		var uuid [16]byte
		var ev clickfact.Event
		vertex, edge, err := ev.Parse(clickfact.AppendEvent(nil, &uuid, "000000000000", "us-east-1", c.At, fact.Detail))
		if err != nil || ev.ID != "" {
			t.Fatalf("the consumer reads the event of an own fact with %v (fast path %v)", err, ev.ID == "")
		}
		if !bytes.Contains(fact.Detail, append(append([]byte(`"vertices":[`), vertex...), `],"edges":[`...)) ||
			!bytes.HasSuffix(fact.Detail, append(append([]byte(`"edges":[`), edge...), `]}}`...)) {
			t.Fatalf("the consumer's elements are not the fact's:\n%s\n%s", vertex, edge)
		}

		body, err := clickfact.NewDeadLetter(fact, c.At, 1, errors.New("throttled")).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, replayed, err := clickfact.ParseDeadLetter(body); err != nil || !bytes.Equal(replayed.Detail, fact.Detail) {
			t.Fatalf("the fact did not survive its dead letter byte for byte: %v", err)
		}
		if again, _ := clickfact.Build(c, testEventID); !bytes.Equal(again.Detail, fact.Detail) {
			t.Fatal("the same click built twice differs")
		}
	})
}

// FuzzParseDeadLetter reads a click DLQ message body (an SQS message to the replay
// function, a file of the local DLQ) and, as recover --from-log does, a logged
// graph_fact. A refusal is ErrInvalid. A fact accepted is one the replay can publish
// and the consumer then ingest: its token, event identifier and idempotency key agree,
// it is the graph_fact bytes as they came, its dead letter encodes and parses back to
// the same, and the event the bus frames around it (compacted, as Bus.Publish does for
// one with line breaks) passes the consumer's check with the fact's own elements.
func FuzzParseDeadLetter(f *testing.F) {
	fact, err := clickfact.Build(testClick, testEventID)
	if err != nil {
		f.Fatal(err)
	}
	body, err := clickfact.NewDeadLetter(fact, testClick.At, 2, errors.New("PutEvents: FailedEntryCount=1")).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add(fact.Detail)
	var indented bytes.Buffer
	_ = json.Indent(&indented, body, "", "\t")
	f.Add(indented.Bytes())
	f.Add(bytes.Replace(body, []byte(`{"graph_fact":{`), []byte(`{"graph_fact":{"graphson":{"vertices":[],"edges":[]},`), 1))
	f.Add([]byte(`{"graph_fact":{},"failed_at":"2026-01-01T00:00:00Z","attempts":1,"reason":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fact, ferr := clickfact.Parse(b)
		d, dlFact, err := clickfact.ParseDeadLetter(b)
		for _, e := range []error{ferr, err} {
			if e != nil && !errors.Is(e, clickfact.ErrInvalid) {
				t.Fatalf("refusal %v is not ErrInvalid", e)
			}
		}
		if ferr == nil {
			checkReplayable(t, fact, b)
		}
		if err != nil {
			return
		}
		var raw struct {
			GraphFact json.RawMessage `json:"graph_fact"`
		}
		if err := json.Unmarshal(b, &raw); err != nil || !bytes.Equal(dlFact.Detail, raw.GraphFact) || d.Attempts < 1 {
			t.Fatalf("dead letter %+v: fact %s is not its graph_fact %s (%v)", d, dlFact.Detail, raw.GraphFact, err)
		}
		checkReplayable(t, dlFact, dlFact.Detail)
		again, err := d.Encode()
		if err != nil {
			t.Fatalf("encode an accepted dead letter: %v", err)
		}
		// Encode compacts the fact (encoding/json compacts a RawMessage); the facts Linoone
		// builds are compact already, and stay byte for byte (FuzzBuild).
		d2, f2, err := clickfact.ParseDeadLetter(again)
		if err != nil || !bytes.Equal(compacted(t, f2.Detail), compacted(t, dlFact.Detail)) || d2.Attempts != d.Attempts || d2.FailedAt != d.FailedAt || d2.Reason != d.Reason {
			t.Fatalf("the dead letter did not survive encoding: %v\n%s\n%s", err, b, again)
		}
	})
}

// checkReplayable checks a fact Parse accepted from detail.
func checkReplayable(t *testing.T, f clickfact.Fact, detail []byte) {
	t.Helper()
	if !bytes.Equal(f.Detail, detail) || f.IdempotencyKey != clickfact.IdempotencyPrefix+f.EventID || !clickfact.IsToken(f.Token) {
		t.Fatalf("accepted fact %+v of %s", f, detail)
	}
	compact := bytes.TrimSpace(detail)
	if bytes.ContainsAny(compact, "\r\n") {
		compact = compacted(t, compact)
	}
	var uuid [16]byte
	vertex, edge, err := new(clickfact.Event).Parse(clickfact.AppendEvent(nil, &uuid, "000000000000", "us-east-1", time.Unix(0, 0), compact))
	if err != nil {
		t.Fatalf("the consumer refuses the event of a fact replay accepts: %v\n%s", err, detail)
	}
	var d struct {
		GraphSON struct{ Vertices, Edges []json.RawMessage } `json:"graphson"`
	}
	if err := json.Unmarshal(detail, &d); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(vertex, d.GraphSON.Vertices[0]) || !jsonEqual(edge, d.GraphSON.Edges[0]) {
		t.Fatalf("the consumer's elements are not the fact's:\n%s\n%s\nof %s", vertex, edge, detail)
	}
}

// compacted is b, JSON, without insignificant space.
func compacted(t *testing.T, b []byte) []byte {
	t.Helper()
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatalf("an accepted fact does not compact: %v", err)
	}
	return c.Bytes()
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}
