package producer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/linoone/linoone/api/management"
)

// FuzzParseRecords reads a file given to shorten --file and cuts it into batches.
// Records name their physical lines, in order. A file of one URL a line (its first
// line no CSV header with a target_url column) is never refused, and each of its
// lines that is not blank is one record, the line trimmed; the same targets written
// as a CSV file read back the same. The batches hold every record once, in order,
// at most bulkBatchSize each, and each body of more than one record fits the API's
// bound.
func FuzzParseRecords(f *testing.F) {
	for _, in := range []string{
		"https://a.example/\r\n\r\n  https://b.example/ \r\nhttps://c.example/",
		"\ufeffhttps://a.example/\nhttps://b.example/\n",
		"name,target_url\nmap,\"https://maps.example/@52.52,13.40,15z\"\n",
		"target_url,name\n\n,x\n",
		"target_url\nhttps://maps.example/@52.52,13.40,15z\n",
		"\ufefftarget_url\r\n\"https://a.example/\"\"q\"\"\"\r\n\"https://b.example/\nx\"\r\n",
		"https://example.com/" + strings.Repeat("漢", 2028) + "\n",
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		recs, err := parseRecords(content)
		lines := bytes.Count(content, []byte("\n")) + 1
		for i, r := range recs {
			if r.line < 1 || r.line > lines || i > 0 && r.line <= recs[i-1].line {
				t.Fatalf("record %d names line %d (of %d, after %d)", i, r.line, lines, recs[max(i-1, 0)].line)
			}
		}
		if !csvHeader(content) {
			if err != nil {
				t.Fatalf("a file of one URL a line refused: %v", err)
			}
			checkPlain(t, content, recs)
			checkCSVRoundTrip(t, recs)
		}
		checkBatches(t, recs)
	})
}

// csvHeader reports whether content's first line is a CSV header with a target_url
// column, as parseRecords reads it.
func csvHeader(content []byte) bool {
	first, _, _ := bytes.Cut(content, []byte("\n"))
	header, err := csv.NewReader(bytes.NewReader(first)).Read()
	return err == nil && slices.ContainsFunc(header, func(h string) bool {
		return strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) == "target_url"
	})
}

// checkPlain checks that each line of content that is not blank is one record, the
// line trimmed.
func checkPlain(t *testing.T, content []byte, recs []record) {
	t.Helper()
	var want []record
	for i, line := range strings.Split(strings.TrimPrefix(string(content), "\ufeff"), "\n") {
		if s := strings.TrimSpace(line); s != "" {
			want = append(want, record{line: i + 1, target: s})
		}
	}
	if !slices.Equal(recs, want) {
		t.Fatalf("records %+v, want %+v", recs, want)
	}
}

// checkCSVRoundTrip writes the targets of recs as a CSV file with a target_url column
// and reads it back.
func checkCSVRoundTrip(t *testing.T, recs []record) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"name", "target_url"})
	for _, r := range recs {
		_ = w.Write([]string{"x", r.target})
	}
	w.Flush()
	back, err := parseRecords(b.Bytes())
	if err != nil || len(back) != len(recs) {
		t.Fatalf("the targets as CSV read back as %d records, %v:\n%s", len(back), err, b.Bytes())
	}
	for i := range back {
		if back[i].target != recs[i].target {
			t.Fatalf("record %d read back as %q from CSV, was %q", i, back[i].target, recs[i].target)
		}
	}
}

// checkBatches checks that the batches of recs hold every record once, in order,
// each within the API's bounds.
func checkBatches(t *testing.T, recs []record) {
	t.Helper()
	var all []record
	for _, part := range splitBatches(recs) {
		if len(part) == 0 || len(part) > bulkBatchSize {
			t.Fatalf("a batch of %d records", len(part))
		}
		body := management.ShortenBatchJSONRequestBody{Items: make([]management.BatchItem, len(part))}
		for i := range part {
			body.Items[i].TargetURL = &part[i].target
		}
		if b, _ := json.Marshal(body); len(part) > 1 && len(b) > bulkBatchBytes {
			t.Fatalf("a batch of %d records is a %d-byte body, over %d", len(part), len(b), bulkBatchBytes)
		}
		all = append(all, part...)
	}
	if !slices.Equal(all, recs) {
		t.Fatal("the batches do not hold the records in order")
	}
}
