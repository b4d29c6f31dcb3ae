package producer

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

// TestParseRecords: what shorten --file reads from a file, line by line.
func TestParseRecords(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2<<20) // past any scanner's cap
	for _, tc := range []struct {
		name, in string
		want     []record
		err      string
	}{
		{"plain, CRLF, blank lines, no final newline", "https://a.example/\r\n\r\n  https://b.example/ \r\nhttps://c.example/",
			[]record{{1, "https://a.example/"}, {3, "https://b.example/"}, {4, "https://c.example/"}}, ""},
		{"a byte order mark", "\ufeffhttps://a.example/\nhttps://b.example/\n",
			[]record{{1, "https://a.example/"}, {2, "https://b.example/"}}, ""},
		{"a line of megabytes ends nothing", "https://a.example/\n" + long + "\nhttps://c.example/\n",
			[]record{{1, "https://a.example/"}, {2, long}, {3, "https://c.example/"}}, ""},
		{"csv, a quoted comma", "name,target_url\nmap,\"https://maps.example/@52.52,13.40,15z\"\n",
			[]record{{2, "https://maps.example/@52.52,13.40,15z"}}, ""},
		{"csv, a missing field", "target_url,name\n\n,x\n", []record{{3, ""}}, ""},
		{"csv, an unquoted comma", "target_url\nhttps://maps.example/@52.52,13.40,15z\n", nil,
			"line 2 has 3 fields where the header has 1: quote a target_url that holds a comma"},
	} {
		got, err := parseRecords([]byte(tc.in))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			lines := func(rs []record) (ns []int) {
				for _, r := range rs {
					ns = append(ns, r.line)
				}
				return ns
			}
			t.Errorf("%s: records of lines %v, %v; want lines %v (or the targets differ)", tc.name, lines(got), err, lines(tc.want))
		}
	}
}

// TestSplitBatches: a file splits into batches of 1,000 records, or fewer where their
// targets would take a body past the API's 4 MiB; a file that fits splits as it
// always did, so its idempotency keys stay the same.
func TestSplitBatches(t *testing.T) {
	recs := func(n int, target string) []record {
		rs := make([]record, n)
		for i := range rs {
			rs[i] = record{line: i + 1, target: target}
		}
		return rs
	}
	sizes := func(bs [][]record) (ns []int) {
		for _, b := range bs {
			ns = append(ns, len(b))
		}
		return ns
	}
	ascii := "https://example.com/" + strings.Repeat("a", shorturl.MaxTargetLength-20)
	if got := sizes(splitBatches(recs(2500, ascii))); !slices.Equal(got, []int{1000, 1000, 500}) {
		t.Errorf("2,500 of the longest ASCII targets: batches of %v, want 1000 1000 500", got)
	}
	cjk := "https://example.com/" + strings.Repeat("漢", shorturl.MaxTargetLength-20) // 3 bytes each
	parts := splitBatches(recs(1000, cjk))
	if len(parts) < 2 {
		t.Fatalf("1,000 long CJK targets in %d batch", len(parts))
	}
	n := 0
	for _, p := range parts {
		body, err := json.Marshal(management.ShortenBatchJSONRequestBody{Items: items(p)})
		if err != nil {
			t.Fatal(err)
		}
		if len(body) > mgmtapi.MaxBatchBodyBytes {
			t.Errorf("a batch of %d items is a %d-byte body, over the API's %d", len(p), len(body), mgmtapi.MaxBatchBodyBytes)
		}
		n += len(p)
	}
	if n != 1000 {
		t.Errorf("%d records in the batches, want 1000", n)
	}
}

func items(rs []record) []management.BatchItem {
	out := make([]management.BatchItem, len(rs))
	for i, r := range rs {
		t := r.target
		out[i] = management.BatchItem{TargetURL: &t}
	}
	return out
}

// TestFailedLinesAdvice: running the same file again retries what failed on the
// server's side; what the API refused needs a new file, since an edited file is
// issued anew.
func TestFailedLinesAdvice(t *testing.T) {
	if err := failedLines(0, 0, 10); err != nil {
		t.Errorf("nothing failed: %v", err)
	}
	for _, tc := range []struct {
		failed, refused int
		again, newFile  bool
	}{{3, 0, true, false}, {3, 3, false, true}, {3, 1, true, true}} {
		msg := failedLines(tc.failed, tc.refused, 10).Error()
		if strings.Contains(msg, "run the same file again") != tc.again || strings.Contains(msg, "in a new file") != tc.newFile {
			t.Errorf("%d failed, %d refused: %q", tc.failed, tc.refused, msg)
		}
	}
}

// TestShapesAreTheSpecs: what the CLI requires of an answer is what openapi.yaml
// requires of it.
func TestShapesAreTheSpecs(t *testing.T) {
	spec, err := management.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range shapes {
		ref, ok := spec.Components.Schemas[name]
		if !ok {
			t.Errorf("%s is not a schema of openapi.yaml", name)
			continue
		}
		if diff := cmp.Diff(ref.Value.Required, s.members); diff != "" {
			t.Errorf("%s: required members (-openapi.yaml +shapes):\n%s", name, diff)
		}
		for m, items := range s.items {
			p, ok := ref.Value.Properties[m]
			if !ok || p.Value.Items == nil || !strings.HasSuffix(p.Value.Items.Ref, "/"+items) {
				t.Errorf("%s.%s: not an array of %s in openapi.yaml", name, m, items)
			}
		}
	}
}
