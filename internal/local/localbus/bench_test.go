package localbus

import (
	"context"
	"fmt"
	"testing"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/eventid"
)

// benchRecords journals n click facts as Publish frames them and returns the records
// the consumer reads back: all of one short URL, or each of its own.
func benchRecords(b *testing.B, n int, distinct bool) []record {
	b.Helper()
	ids := eventid.New()
	tab := crcTable()
	e := &encoder{}
	recs := make([]record, n)
	for i := range recs {
		tok := "Tok0000000"
		if distinct {
			tok = fmt.Sprintf("Tok%07d", i)
		}
		c := clickfact.Click{Token: tok, Path: "http://127.0.0.1:8080/" + tok, Target: "https://example.com/some/page?ref=" + tok,
			IP: "203.0.113.7", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) bench/1.0", At: fixedNow}
		id, err := ids.Next()
		if err != nil {
			b.Fatal(err)
		}
		f, err := clickfact.Build(c, id)
		if err != nil {
			b.Fatal(err)
		}
		frame, err := e.encode(f, fixedNow, defaultRegion, tab)
		if err != nil {
			b.Fatal(err)
		}
		p, _, st := parseFrame(frame, tab)
		if st != frameOK {
			b.Fatal(st)
		}
		recs[i] = record{pos: int64(i), payload: append([]byte(nil), p...)}
	}
	return recs
}

type nopIngester struct{}

func (nopIngester) IngestRaw(context.Context, []byte) error { return nil }

// BenchmarkConsumerDeliver measures the consumer's work per delivered event, in
// batches of 500 journaled click facts: "cpu" turns them into the ingest body and the
// facts log lines (a no-op Ingester); "commit" is the whole batch commit, which adds
// the facts log append and fsync and the offset file (temp file, fsync, rename).
func BenchmarkConsumerDeliver(b *testing.B) {
	const batch = 500
	for _, bc := range []struct {
		name     string
		distinct bool
	}{{"same_short_url", false}, {"distinct_short_urls", true}} {
		for _, commit := range []bool{false, true} {
			name := bc.name + "/cpu"
			if commit {
				name = bc.name + "/commit"
			}
			b.Run(name, func(b *testing.B) {
				recs := benchRecords(b, batch, bc.distinct)
				c := newConsumer(b, b.TempDir(), nopIngester{}, ConsumerOptions{})
				d := c.newBatch()
				ctx := context.Background()
				delivered := 0
				var lines []byte // reused, as commit reuses Consumer.lines
				b.ReportAllocs()
				b.ResetTimer()
				for done := 0; done < b.N; done += batch {
					n := min(batch, b.N-done)
					d.seg, d.recs = 1, recs[:n]
					c.assemble(d)
					if err := c.ingest(ctx, d); err != nil {
						b.Fatal(err)
					}
					if commit {
						m, err := c.commit(d)
						if err != nil {
							b.Fatal(err)
						}
						delivered += m
						continue
					}
					var m int
					if lines, m = d.factsLines(lines[:0], d.recs); m != n || len(lines) == 0 {
						b.Fatalf("delivered %d of %d events", m, n)
					}
					delivered += n
				}
				b.StopTimer()
				if delivered != b.N {
					b.Fatalf("delivered %d of %d events", delivered, b.N)
				}
			})
		}
	}
}

// BenchmarkEncode measures Publish's CPU on the redirect path: framing one click
// fact's event.
func BenchmarkEncode(b *testing.B) {
	f := facts(b, 1)[0]
	tab := crcTable()
	e := &encoder{buf: make([]byte, 0, 2048)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.encode(f, fixedNow, defaultRegion, tab); err != nil {
			b.Fatal(err)
		}
	}
}
