// Package mdanchor computes the anchor GitHub gives a Markdown heading, for the
// documents Linoone generates (docs/configuration.md) and the test that checks every
// link in the repository's documents resolves.
package mdanchor

import (
	"strings"
	"unicode"
)

// Of is GitHub's anchor of a heading: lower case, spaces as dashes, and every
// character but letters, numbers, dashes and underscores dropped (punctuation and
// symbols such as "—" and "×" too). A repeated heading's anchor takes "-1", "-2", … after the first; that is
// the caller's to count.
func Of(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
