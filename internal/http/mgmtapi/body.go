package mgmtapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
)

// Why a body fails strictJSON; the validator and encoding/json would let both through
// (trailing data is ignored by a streaming decoder, bad text becomes U+FFFD).
var (
	errNotOneValue = errors.New("request body must be exactly one JSON value, with nothing after it but whitespace")
	errBadUTF8     = errors.New("request body is not valid UTF-8; target_url must be Unicode text")
	errLoneEscape  = errors.New(`request body has a \u escape of an unpaired UTF-16 surrogate (\uD800-\uDFFF); target_url must be Unicode text`)
	errTooMany     = fmt.Errorf("request body holds more than %d JSON values; a batch takes at most 1,000 items", maxBodyValues)
)

// maxBodyValues bounds the JSON values in a body before the validator decodes them
// into Go values, ~100 bytes of memory each: a 4 MiB batch body of "{}," ×
// 1.4 million cost ~150 MB and over a second before its 1,001st item was refused. A
// full batch of 1,000 one-member items holds ~3,000.
const maxBodyValues = 20_000

// countValues counts the objects, arrays and members or elements after the first
// ('{', '[' and ',' outside strings) of valid JSON, stopping past limit.
func countValues(b []byte, limit int) int {
	n, inString := 0, false
	for i := 0; i < len(b) && n <= limit; i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == '{' || c == '[' || c == ','):
			n++
		}
	}
	return n
}

// checkJSONBody is the strict scan of a request body: exactly one JSON value with only
// whitespace around it, valid UTF-8 in the raw bytes, and every \uD800–\uDFFF escape
// part of a high-low surrogate pair.
func checkJSONBody(b []byte) error {
	if !json.Valid(b) {
		return notJSON(b)
	}
	if !utf8.Valid(b) {
		return errBadUTF8
	}
	// In valid JSON a backslash appears only inside strings, starting an escape.
	for i := bytes.IndexByte(b, '\\'); i >= 0; {
		if b[i+1] != 'u' {
			i = nextBackslash(b, i+2)
			continue
		}
		r := hex4(b[i+2 : i+6])
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			if len(b) < i+12 || b[i+6] != '\\' || b[i+7] != 'u' || utf16.DecodeRune(r, hex4(b[i+8:i+12])) == utf8.RuneError {
				return errLoneEscape
			}
			i = nextBackslash(b, i+12)
		case utf16.IsSurrogate(r):
			return errLoneEscape
		default:
			i = nextBackslash(b, i+6)
		}
	}
	return nil
}

// badJSON is a body that is not one JSON value, told by what it is instead: telling
// a gzip, UTF-16 or deeply nested body that nothing may follow its value misleads.
type badJSON string

func (e badJSON) Error() string { return string(e) }

// Is makes a badJSON an errNotOneValue: the same problem type, invalid-request.
func (e badJSON) Is(target error) bool { return target == errNotOneValue }

// notJSON says why b, which json.Valid refused, is not one JSON value.
func notJSON(b []byte) error {
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return errNotOneValue
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return badJSON("request body is gzip-compressed; send the JSON uncompressed (no Content-Encoding is accepted)")
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}), bytes.HasPrefix(b, []byte{0xff, 0xfe}),
		len(b) >= 2 && (b[0] == 0 || b[1] == 0):
		return badJSON("request body looks like UTF-16 text (a UTF-16 byte order mark or NUL bytes between the characters); send the JSON as UTF-8")
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		return badJSON("request body starts with a UTF-8 byte order mark; send the JSON without it")
	}
	var se *json.SyntaxError
	if err := json.Unmarshal(b, new(json.RawMessage)); errors.As(err, &se) {
		switch {
		case strings.Contains(se.Error(), "exceeded max depth"):
			return badJSON("request body nests arrays or objects too deeply (10,000 levels or more); the body is an object of a few members")
		case strings.Contains(se.Error(), "after top-level value"):
			return errNotOneValue
		}
		return badJSON(fmt.Sprintf("request body is not valid JSON: %s (at byte %d)", se.Error(), se.Offset))
	}
	return errNotOneValue // truncated: unexpected end of JSON input
}

// nextBackslash returns the index of the next backslash at or after from, or -1.
func nextBackslash(b []byte, from int) int {
	i := bytes.IndexByte(b[from:], '\\')
	if i < 0 {
		return -1
	}
	return from + i
}

// hex4 decodes four hex digits json.Valid has already checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= 'a':
			c = c - 'a' + 10
		case c >= 'A':
			c = c - 'A' + 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}

// strictJSON refuses a POST body that is not exactly one JSON value as
// invalid-request, and one with invalid UTF-8 or a lone surrogate escape as
// target-url-characters, before the validator decodes it leniently. It runs after
// limitBody, which has already bounded the body.
func strictJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, int64(bodyLimit(r))+1))
		if err != nil {
			httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, "request body could not be read"))
			return
		}
		if len(b) > 0 { // an empty body is the validator's to refuse
			err := checkJSONBody(b)
			if err == nil && countValues(b, maxBodyValues) > maxBodyValues {
				err = errTooMany
			}
			switch {
			case errors.Is(err, errNotOneValue), errors.Is(err, errTooMany):
				httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, err.Error()))
				return
			case err != nil:
				httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, string(shorturl.RuleCharacters), err.Error()))
				return
			}
		}
		if r.URL.Path == "/shorten/batch" && len(b) > 0 {
			var faults map[int]error
			if b, faults = badItems(b); faults != nil {
				r = r.WithContext(context.WithValue(r.Context(), itemFaultsKey{}, faults))
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		// The validator reads the body again through GetBody when it is set.
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		next.ServeHTTP(w, r)
	})
}
