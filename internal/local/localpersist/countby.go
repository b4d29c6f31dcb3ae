package localpersist

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// countByFunc(v) is an aggregate: how many rows hold each string v, and how many a
// NULL, in one pass that keeps a count per distinct value, where GROUP BY sorts the
// rows in a temporary B-tree first. A link's stats group each day's clicks by user
// agent: a sort of a few thousand index entries a day took about a quarter of the
// request's CPU (the rows copied into the sorter, compared and merged back).
//
// It answers the counts in the encoding decodeCountBy reads, and NULL past
// maxCountByValues distinct values or maxCountByBytes of them, or on a value that
// is neither a string nor NULL: the caller then groups in SQL. Its only argument changes from row to row, so
// nothing constant is converted per row.
const countByFunc = "linoone_count_by"

// maxCountByValues and maxCountByBytes bound the values countByFunc keeps in Go
// memory, in number and in bytes (a user agent is as long as its client made it);
// past either, the rows are grouped by SQLite, whose sorter bounds its memory and
// spills.
var (
	maxCountByValues = 1 << 16
	maxCountByBytes  = 16 << 20
)

var registerCountBy = sync.OnceValue(func() error {
	return sqlite.RegisterFunction(countByFunc, &sqlite.FunctionImpl{
		NArgs: 1, Deterministic: true, VolatileArgs: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &countBy{}, nil },
	})
})

type countBy struct {
	// index numbers each distinct value, in the order first seen: keys[i] is the
	// value numbered i, counts[i] its count. A value is looked up in index but never
	// stored by assignment again: a map assignment also rewrites an existing string
	// key, and the argument is SQLite's memory (VolatileArgs), reused by the next row.
	index  map[string]int
	keys   []string
	counts []int64
	bytes  int // of the keys
	nulls  int64
	other  bool // past maxCountByValues or maxCountByBytes, or a value of another type
}

func (a *countBy) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if a.other {
		return nil
	}
	switch v := args[0].(type) {
	case nil:
		a.nulls++
	case string:
		if i, ok := a.index[v]; ok {
			a.counts[i]++
			return nil
		}
		if a.index == nil {
			a.index = map[string]int{}
		}
		if a.bytes += len(v); len(a.keys) >= maxCountByValues || a.bytes > maxCountByBytes {
			a.other, a.index, a.keys, a.counts = true, nil, nil, nil
			return nil
		}
		k := strings.Clone(v)
		a.index[k] = len(a.keys)
		a.keys, a.counts = append(a.keys, k), append(a.counts, 1)
	default:
		a.other, a.index, a.keys, a.counts = true, nil, nil, nil
	}
	return nil
}

func (a *countBy) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", countByFunc)
}

// WindowValue encodes the counts as the NULLs' count and a space, then for each
// value its length in bytes, a colon, the value, its count and a space:
// "2 2:ua5 0:1 " is two NULLs, five "ua" and one "". The length prefix carries any
// bytes a value holds.
func (a *countBy) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if a.other {
		return nil, nil
	}
	b := strconv.AppendInt(nil, a.nulls, 10)
	b = append(b, ' ')
	for i, k := range a.keys {
		b = appendPart(b, k)
		b = strconv.AppendInt(b, a.counts[i], 10)
		b = append(b, ' ')
	}
	return string(b), nil
}

func (a *countBy) Final(*sqlite.FunctionContext) {}

var errCountBy = errors.New(countByFunc + ": malformed answer")

// decodeCountBy adds the counts countByFunc answered in text to counts and returns
// the count of NULLs.
func decodeCountBy(text string, counts map[string]any) (nulls int64, err error) {
	num := func(end byte) (int64, error) {
		i := strings.IndexByte(text, end)
		if i < 0 {
			return 0, errCountBy
		}
		n, err := strconv.ParseInt(text[:i], 10, 64)
		if err != nil || n < 0 {
			return 0, errCountBy
		}
		text = text[i+1:]
		return n, nil
	}
	if nulls, err = num(' '); err != nil {
		return 0, err
	}
	for text != "" {
		key, rest, ok := cutPart(text)
		if !ok {
			return 0, errCountBy
		}
		text = rest
		n, err := num(' ')
		if err != nil {
			return 0, err
		}
		prev, _ := counts[key].(int64)
		counts[key] = prev + n
	}
	return nulls, nil
}

// appendPart appends part to b as its length in bytes, a colon and itself: a part
// may hold any bytes.
func appendPart(b []byte, part string) []byte {
	b = strconv.AppendInt(b, int64(len(part)), 10)
	b = append(b, ':')
	return append(b, part...)
}

// cutPart reads the part appendPart wrote at the start of text and returns it and
// the text after it; ok is false when text does not start with one.
func cutPart(text string) (part, rest string, ok bool) {
	i := strings.IndexByte(text, ':')
	if i < 0 {
		return "", "", false
	}
	n, err := strconv.Atoi(text[:i])
	if err != nil || n < 0 || n > len(text)-i-1 {
		return "", "", false
	}
	return text[i+1 : i+1+n], text[i+1+n:], true
}
