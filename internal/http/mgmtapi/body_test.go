package mgmtapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckJSONBody(t *testing.T) {
	tests := []struct {
		name, body string
		want       error
	}{
		{"object", `{"target_url":"https://example.com/"}`, nil},
		{"whitespace around", " \t\r\n{\"a\":1}\n ", nil},
		{"any single value", `"x"`, nil},
		{"escapes", `{"a":"\"\\\/\b\f\n\r\t\u0041\u00e9\uFFFD"}`, nil},
		{"escaped backslash then u", `{"a":"\\ud800"}`, nil},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, nil},
		{"surrogate pair upper case", `{"a":"\uD83D\uDE00"}`, nil},
		{"two pairs", `{"a":"\ud83d\ude00\ud83d\ude01"}`, nil},
		{"raw multibyte", `{"a":"é😀"}`, nil},
		{"empty", ``, errNotOneValue},
		{"whitespace only", ` `, errNotOneValue},
		{"trailing garbage", `{"a":1}xyz`, errNotOneValue},
		{"two objects", `{"a":1}{"a":1}`, errNotOneValue},
		{"two objects with space", `{"a":1} {"a":1}`, errNotOneValue},
		{"truncated", `{"a":`, errNotOneValue},
		{"invalid utf-8 in a string", "{\"a\":\"\xff\"}", errBadUTF8},
		{"invalid utf-8 lead byte", "{\"a\":\"\xc0\"}", errBadUTF8},
		{"encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", errBadUTF8},
		{"invalid utf-8 in a key", "{\"\xfe\":1}", errBadUTF8},
		{"lone high", `{"a":"\ud800"}`, errLoneEscape},
		{"lone high at the end of a string", `{"a":"x\udbff","b":"\udc00"}`, errLoneEscape},
		{"lone low", `{"a":"\udfff"}`, errLoneEscape},
		{"high then letter", `{"a":"\ud800\u0041"}`, errLoneEscape},
		{"high then high", `{"a":"\ud800\ud800"}`, errLoneEscape},
		{"high then escaped newline", `{"a":"\ud800\n"}`, errLoneEscape},
		{"reversed pair", `{"a":"\udc00\ud800"}`, errLoneEscape},
		{"lone surrogate in a key", `{"\ud800":1}`, errLoneEscape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkJSONBody([]byte(tt.body)); !errors.Is(err, tt.want) {
				t.Fatalf("checkJSONBody(%q) = %v, want %v", tt.body, err, tt.want)
			}
		})
	}
}

func FuzzStrictBody(f *testing.F) {
	for _, s := range []string{`{"target_url":"https://example.com/ok"}`, `{"target_url":"https://example.com/ok"}xyz`, `{"a":1}{"a":1}`,
		"{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\\ud800"}`, `[1,2,{"x":null}]`, `"\uDBFF\uDFFF"`, ` `, `\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := checkJSONBody(b)
		v, decodeErr := decodeOne(b)
		switch {
		case errors.Is(err, errNotOneValue) != (decodeErr != nil):
			t.Fatalf("checkJSONBody(%q) = %v, but encoding/json decoding one value: %v", b, err, decodeErr)
		case decodeErr != nil || !utf8.Valid(b):
			return
		case bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)):
			return // a replacement character the body spells itself
		}
		// One valid UTF-8 JSON value: refused exactly when encoding/json would
		// silently replace an unpaired surrogate escape with U+FFFD.
		replaced := strings.ContainsRune(dump(v), utf8.RuneError)
		if (err != nil) != replaced {
			t.Fatalf("checkJSONBody(%q) = %v, but decoding replaces characters: %v", b, err, replaced)
		}
	})
}

// decodeOne decodes exactly one JSON value (numbers kept as text, so 1e999 is fine)
// followed by nothing but whitespace.
func decodeOne(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more after the value: %v", err)
	}
	return v, nil
}

// dump writes every string in a decoded JSON value, keys included.
func dump(v any) string {
	var sb strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString(v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				sb.WriteString(k)
				walk(e)
			}
		}
	}
	walk(v)
	return sb.String()
}
