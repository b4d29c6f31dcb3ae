package localpersist

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountByAnswersAsGroupBy checks countByFunc against SQLite's GROUP BY over the
// same rows: values that look like the encoding's numbers and separators, the empty
// string, bytes that are not UTF-8, NULLs, no rows, and more values, or bytes of
// them, than the aggregate keeps (it answers NULL, so the caller groups in SQL). Values repeat
// across rows, as user agents do: the aggregate must keep its own copy of each,
// never the row's memory.
func TestCountByAnswersAsGroupBy(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	odd := []string{"ua", "3:ab", "1 2 ", "", "\xff\xfe", "a\nb", "99:"}
	var rows []string
	for i := range 40 {
		rows = append(rows, fmt.Sprintf("(%s)", quoteSQL(odd[i%len(odd)])))
		if i%9 == 0 {
			rows = append(rows, "(NULL)")
		}
	}
	values := "SELECT column1 AS x FROM (VALUES " + strings.Join(rows, ",") + ")"
	many := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT printf('v%d', i % 300) AS x FROM n"
	for _, tc := range []struct {
		name, rows    string
		max, maxBytes int
		wantNULL      bool
	}{
		{"odd values", values, 1 << 16, 16 << 20, false},
		{"no rows", values + " WHERE 0", 1 << 16, 16 << 20, false},
		{"many values", many, 1 << 16, 16 << 20, false},
		{"past the bound", many, 299, 16 << 20, true},
		{"at the byte bound", many, 1 << 16, 1090, false}, // v0…v299: 20 + 270 + 800 bytes
		{"past the byte bound", many, 1 << 16, 1089, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, prevBytes := maxCountByValues, maxCountByBytes
			maxCountByValues, maxCountByBytes = tc.max, tc.maxBytes
			t.Cleanup(func() { maxCountByValues, maxCountByBytes = prev, prevBytes })

			want, wantNulls := map[string]any{}, int64(0)
			sqlRows, err := e.store.rdb.QueryContext(ctx, "SELECT x, count(*) FROM ("+tc.rows+") GROUP BY 1")
			if err != nil {
				t.Fatal(err)
			}
			defer sqlRows.Close()
			for sqlRows.Next() {
				var x *string
				var n int64
				if err := sqlRows.Scan(&x, &n); err != nil {
					t.Fatal(err)
				}
				if x == nil {
					wantNulls = n
				} else {
					want[*x] = n
				}
			}
			if err := sqlRows.Err(); err != nil {
				t.Fatal(err)
			}

			var text *string
			if err := e.store.rdb.QueryRowContext(ctx, "SELECT "+countByFunc+"(x) FROM ("+tc.rows+")").Scan(&text); err != nil {
				t.Fatal(err)
			}
			if (text == nil) != tc.wantNULL {
				t.Fatalf("%s answered NULL: %t, want %t", countByFunc, text == nil, tc.wantNULL)
			}
			if text == nil {
				return
			}
			got := map[string]any{}
			nulls, err := decodeCountBy(*text, got)
			if err != nil {
				t.Fatalf("decode %q: %v", *text, err)
			}
			if diff := cmp.Diff(want, got); diff != "" || nulls != wantNulls {
				t.Errorf("counts differ from GROUP BY's (-want +got):\n%s\nNULLs %d, want %d", diff, nulls, wantNulls)
			}
		})
	}
}

// quoteSQL is s as an SQL text value, written as a blob cast to text, which keeps
// bytes that are not UTF-8.
func quoteSQL(s string) string {
	return fmt.Sprintf("CAST(X'%x' AS TEXT)", s)
}

func TestDecodeCountByRefusesMalformed(t *testing.T) {
	for _, text := range []string{"", "x ", "0 5:ab1 ", "0 2:ab", "0 2:ab1", "0 -1:a1 ", "0 1:a-1 "} {
		if _, err := decodeCountBy(text, map[string]any{}); err == nil {
			t.Errorf("decodeCountBy(%q) = nil error", text)
		}
	}
}
