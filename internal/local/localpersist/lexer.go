package localpersist

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// scriptError is a Gremlin script that cannot be evaluated: a syntax error, a step
// outside the supported subset, an unbound variable or a value of the wrong type.
// Gremlin Server answers these with SCRIPT_EVALUATION_ERROR (597).
type scriptError struct {
	msg string
}

func (e *scriptError) Error() string { return e.msg }

// errAt builds a scriptError that names the line and column of byte offset pos in src.
func errAt(src string, pos int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if pos < 0 || pos > len(src) {
		return &scriptError{msg: msg}
	}
	line := 1 + strings.Count(src[:pos], "\n")
	col := 1 + utf8.RuneCountInString(src[strings.LastIndexByte(src[:pos], '\n')+1:pos])
	return &scriptError{msg: fmt.Sprintf("%s at line %d, column %d", msg, line, col)}
}

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokIdent
	tokString
	tokInt
	tokDot
	tokComma
	tokLParen
	tokRParen
	tokSemicolon
)

func (k tokenKind) String() string {
	switch k {
	case tokEOF:
		return "end of script"
	case tokIdent:
		return "identifier"
	case tokString:
		return "string literal"
	case tokInt:
		return "integer literal"
	case tokDot:
		return "'.'"
	case tokComma:
		return "','"
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	case tokSemicolon:
		return "';'"
	}
	return "unknown token"
}

// token is one lexical element of a script. For tokIdent text is the name, for
// tokString the decoded value, for tokInt the literal as written; num holds an
// integer's value.
type token struct {
	kind tokenKind
	pos  int
	text string
	num  int64
}

func (t token) describe() string {
	switch t.kind {
	case tokIdent:
		return fmt.Sprintf("identifier %s", t.text)
	case tokString:
		return fmt.Sprintf("string %s", strconv.Quote(t.text))
	case tokInt:
		return fmt.Sprintf("integer %s", t.text)
	}
	return t.kind.String()
}

// lex splits a Gremlin-Groovy script into tokens. It knows the literal forms the
// subset accepts — single- and double-quoted strings with Groovy escapes, decimal
// integers with an optional L suffix — and rejects every other form by name rather
// than misreading it.
func lex(src string) ([]token, error) {
	if !utf8.ValidString(src) {
		return nil, &scriptError{msg: "script is not valid UTF-8"}
	}
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '.':
			toks = append(toks, token{kind: tokDot, pos: i})
			i++
		case c == ',':
			toks = append(toks, token{kind: tokComma, pos: i})
			i++
		case c == '(':
			toks = append(toks, token{kind: tokLParen, pos: i})
			i++
		case c == ')':
			toks = append(toks, token{kind: tokRParen, pos: i})
			i++
		case c == ';':
			toks = append(toks, token{kind: tokSemicolon, pos: i})
			i++
		case c == '\'' || c == '"':
			t, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = n
		case c == '-' || isDigit(c):
			t, n, err := lexInt(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = n
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tokIdent, pos: i, text: src[i:j]})
			i = j
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			return nil, errAt(src, i, "comments are not supported")
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, errAt(src, i, "unexpected character %q", r)
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(src)}), nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// lexInt reads a decimal integer literal, optionally negative and optionally with
// Groovy's long suffix (L or l). Octal, hexadecimal, binary, underscored and
// floating-point forms are rejected.
func lexInt(src string, start int) (token, int, error) {
	i := start
	if src[i] == '-' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return token{}, 0, errAt(src, start, "unexpected character '-'")
		}
	}
	digits := i
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	text := src[start:i]
	if src[digits] == '0' && i-digits > 1 {
		return token{}, 0, errAt(src, start, "octal integer literal %s is not supported", text)
	}
	if i < len(src) && (src[i] == 'L' || src[i] == 'l') {
		i++
	}
	if i < len(src) {
		switch c := src[i]; {
		case c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			return token{}, 0, errAt(src, start, "floating-point literals are not supported")
		case isIdentPart(c):
			return token{}, 0, errAt(src, start, "malformed number literal %s%c: only decimal integers are supported", src[start:i], c)
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return token{}, 0, errAt(src, start, "integer literal %s is out of range", text)
	}
	return token{kind: tokInt, pos: start, text: src[start:i], num: n}, i, nil
}

// lexString reads a single- or double-quoted Groovy string. Escapes: \b \t \n \f \r
// \\ \' \" \$ and \uXXXX (a surrogate pair written as two escapes is one character).
// A double-quoted string is a GString in Groovy, so an unescaped $ would interpolate:
// it is rejected rather than taken literally.
func lexString(src string, start int) (token, int, error) {
	q := src[start]
	if strings.HasPrefix(src[start:], strings.Repeat(string(q), 3)) {
		return token{}, 0, errAt(src, start, "triple-quoted strings are not supported")
	}
	var b strings.Builder
	i := start + 1
	for {
		if i >= len(src) {
			return token{}, 0, errAt(src, start, "unterminated string literal")
		}
		c := src[i]
		switch {
		case c == q:
			return token{kind: tokString, pos: start, text: b.String()}, i + 1, nil
		case c == '\n' || c == '\r':
			return token{}, 0, errAt(src, start, "unterminated string literal")
		case c == '$' && q == '"':
			return token{}, 0, errAt(src, i, "GString interpolation is not supported: escape $ as \\$ or use single quotes")
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(src) {
			return token{}, 0, errAt(src, start, "unterminated string literal")
		}
		esc := src[i+1]
		switch esc {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"', '$':
			b.WriteByte(esc)
		case 'u':
			r, n, err := lexUnicodeEscape(src, i)
			if err != nil {
				return token{}, 0, err
			}
			b.WriteRune(r)
			i = n
			continue
		default:
			r, _ := utf8.DecodeRuneInString(src[i+1:])
			return token{}, 0, errAt(src, i, "invalid escape sequence \\%c", r)
		}
		i += 2
	}
}

// lexUnicodeEscape decodes \uXXXX at src[i:], combining a UTF-16 surrogate pair
// written as two consecutive escapes. It returns the rune and the offset after it.
func lexUnicodeEscape(src string, i int) (rune, int, error) {
	hi, ok := hex4(src, i)
	if !ok {
		return 0, 0, errAt(src, i, "invalid unicode escape: \\u needs four hexadecimal digits")
	}
	r := rune(hi)
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		lo, ok := hex4(src, i+6)
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return 0, 0, errAt(src, i, "invalid unicode escape: unpaired surrogate \\u%04x", hi)
		}
		return utf16.DecodeRune(r, rune(lo)), i + 12, nil
	case utf16.IsSurrogate(r):
		return 0, 0, errAt(src, i, "invalid unicode escape: unpaired surrogate \\u%04x", hi)
	}
	return r, i + 6, nil
}

// hex4 parses the four hex digits of a \uXXXX escape starting at src[i].
func hex4(src string, i int) (uint16, bool) {
	if i+6 > len(src) || src[i] != '\\' || src[i+1] != 'u' {
		return 0, false
	}
	var v uint16
	for _, c := range []byte(src[i+2 : i+6]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}
