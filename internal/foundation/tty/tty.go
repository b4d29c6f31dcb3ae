// Package tty prints what came from outside (a server's answer, a file anyone who
// can write the data dir may have made, an input line) on a terminal without
// letting it act on the terminal: a carriage return that overwrites the line, or
// an escape sequence the terminal runs.
package tty

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable is s as it is when it is valid UTF-8 and every character of it prints,
// else quoted with Go's escapes (strconv.Quote).
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Cell is s for one cell of a table: whitespace that would break the row as a
// space, and anything a terminal would act on rather than print as its Go escape;
// cut after n characters.
func Cell(s string, n int) string {
	var b strings.Builder
	for count := 0; s != ""; count++ {
		if count == n {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		s = s[size:]
	}
	return b.String()
}

// IsTerminal reports whether w is a character device (an interactive terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
