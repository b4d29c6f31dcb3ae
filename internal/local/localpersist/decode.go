package localpersist

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/foundation/yield"
)

// decodeDocument decodes an ingest body. A fast path reads the typed GraphSON v3
// that producers write (members in any order, strings without escapes) straight
// from the bytes; on anything else it gives up and graphson's strict decoder
// (encoding/json with unknown fields refused) decodes the body and has the last
// word, errors included. The fast path therefore only ever accepts what the strict
// decoder accepts, with the same result; it declines duplicate members, nulls,
// escapes and missing members rather than guessing.
func decodeDocument(body []byte, pace *yield.Point) (graphson.Document, error) {
	if doc, ok := fastDocument(body, pace); ok {
		return doc, nil
	}
	var doc graphson.Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return graphson.Document{}, err
	}
	return doc, nil
}

// decodeProperties decodes a stored edge's canonical properties JSON.
func decodeProperties(raw string) (map[string]any, error) {
	props := make(map[string]any, 5)
	p := scanner{s: raw}
	ok := p.object(func(k string) bool {
		v, ok := p.value()
		props[k] = v
		return ok
	})
	if ok && p.end() {
		return props, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("stored properties: %w", err)
	}
	clear(props)
	for k, r := range m {
		v, err := graphson.DecodeValue(r)
		if err != nil {
			return nil, fmt.Errorf("stored property %s: %w", k, err)
		}
		props[k] = v
	}
	return props, nil
}

// scanner reads JSON from s. Every method reports false for input it does not take,
// leaving the decision to the strict decoder.
type scanner struct {
	s string
	i int
}

func (p *scanner) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (p *scanner) end() bool {
	p.ws()
	return p.i == len(p.s)
}

func (p *scanner) token(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes, valid UTF-8, as a substring of s.
func (p *scanner) str() (string, bool) {
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	ascii := true
	for j := p.i + 1; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			out := p.s[p.i+1 : j]
			if !ascii && !utf8.ValidString(out) {
				return "", false
			}
			p.i = j + 1
			return out, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

// object reads an object, calling member for each member after its key and colon.
func (p *scanner) object(member func(key string) bool) bool {
	if !p.token('{') {
		return false
	}
	if p.token('}') {
		return true
	}
	for {
		k, ok := p.str()
		if !ok || !p.token(':') || !member(k) {
			return false
		}
		if !p.token(',') {
			return p.token('}')
		}
	}
}

// array reads an array, calling elem for each element.
func (p *scanner) array(elem func() bool) bool {
	if !p.token('[') {
		return false
	}
	if p.token(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !p.token(',') {
			return p.token(']')
		}
	}
}

// value reads a property value: a string, a boolean, or a g:Int64 or g:Int32.
func (p *scanner) value() (any, bool) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch p.s[p.i] {
	case '"':
		return p.str()
	case 't':
		if strings.HasPrefix(p.s[p.i:], "true") {
			p.i += 4
			return true, true
		}
	case 'f':
		if strings.HasPrefix(p.s[p.i:], "false") {
			p.i += 5
			return false, true
		}
	case '{':
		return p.typedInt()
	}
	return nil, false
}

func (p *scanner) typedInt() (any, bool) {
	var typ string
	var n int64
	var seen uint8
	ok := p.object(func(k string) bool {
		var ok bool
		switch {
		case k == "@type" && once(&seen, 1):
			typ, ok = p.str()
		case k == "@value" && once(&seen, 2):
			n, ok = p.integer()
		}
		return ok
	})
	if !ok || seen != 3 || (typ != "g:Int64" && typ != "g:Int32") {
		return nil, false
	}
	return n, true
}

// integer reads a JSON number that is an integer: no fraction, no exponent.
func (p *scanner) integer() (int64, bool) {
	p.ws()
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	digits := j
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	switch {
	case j == digits, p.s[digits] == '0' && j-digits > 1:
		return 0, false
	case j < len(p.s) && (p.s[j] == '.' || p.s[j] == 'e' || p.s[j] == 'E'):
		return 0, false
	}
	n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
	if err != nil {
		return 0, false
	}
	p.i = j
	return n, true
}

// once sets bit in seen and reports whether it was clear: members appear once.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}
