package tty_test

import (
	"testing"

	"github.com/linoone/linoone/internal/foundation/tty"
)

func TestCell(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"bus: timeout", 100, "bus: timeout"},
		{"a\tb\r\nc", 100, "a b  c"},
		{"\x1b[2J\x00\u202e", 100, `\x1b[2J\x00\u202e`},
		{"bad \xff byte", 100, `bad \xff byte`},
		{"gesch\u00e4ft", 5, "gesch…"},
		{"gesch\u00e4ft", 6, "gesch\u00e4…"},
		{"abc", 3, "abc"},
	} {
		if got := tty.Cell(c.in, c.n); got != c.want {
			t.Errorf("Cell(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/ä": "https://example.com/ä",
		"line\rover":            `"line\rover"`,
		"\x1b[2Jclear":          `"\x1b[2Jclear"`,
		"bad \xff byte":         `"bad \xff byte"`,
		"right-to-left \u202e.": `"right-to-left \u202e."`,
	} {
		if got := tty.Printable(in); got != want {
			t.Errorf("Printable(%q) = %s, want %s", in, got, want)
		}
	}
}
