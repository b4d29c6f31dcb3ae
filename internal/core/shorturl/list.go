package shorturl

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
)

// Listing pages: newest first, at most MaxListLimit short URLs a page.
const (
	DefaultListLimit = 25
	MaxListLimit     = 100
	MaxQueryLength   = MaxTargetLength
)

// ParamError is a request parameter outside its rule (a listing cursor, a QR code
// size), with a stable rule name for the problem type and a human-readable detail.
type ParamError struct {
	Rule   string
	Detail string
}

func (e *ParamError) Error() string { return e.Detail }

// ListQuery asks for one page of short URLs, newest first: at most Limit of them,
// those after After (nil: from the newest), matching Search ("" matches all).
type ListQuery struct {
	Limit  int
	After  *Cursor
	Search string
}

// LinkPage is one page of a listing, newest first; Next is nil on the last page.
type LinkPage struct {
	Links []Link
	Next  *Cursor
}

// Cursor is where a listing page starts: the position of the last short URL of the
// previous page in listing order, Persist's created_at as Persist wrote it and the
// token that orders short URLs created in the same millisecond.
type Cursor struct {
	CreatedAt string
	Token     Token
}

// createdAtText is the whitelist a cursor's created_at passes: an RFC 3339 UTC time,
// as Persist writes it. It is what makes the value safe to inline into a query.
var createdAtText = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$`)

// IsCreatedAt reports whether s has the shape of Persist's created_at.
func IsCreatedAt(s string) bool { return createdAtText.MatchString(s) }

// Encode writes the cursor as the opaque text clients pass back: base64url of
// "<created_at> <token>".
func (c Cursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.CreatedAt + " " + string(c.Token)))
}

// ParseCursor reads a cursor Encode wrote; anything else is a *ParamError.
func ParseCursor(s string) (Cursor, error) {
	bad := &ParamError{Rule: "links-cursor-invalid", Detail: "cursor is not one this API answered as next_cursor: pass next_cursor back unchanged"}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	at, tok, ok := strings.Cut(string(b), " ")
	if !ok || !IsCreatedAt(at) || !IsToken(tok) {
		return Cursor{}, bad
	}
	return Cursor{CreatedAt: at, Token: Token(tok)}, nil
}

// ParseListQuery checks a listing request's parameters: limit 0 is the default,
// cursor "" the first page.
func ParseListQuery(limit int, cursor, search string) (ListQuery, error) {
	q := ListQuery{Limit: limit, Search: search}
	switch {
	case limit == 0:
		q.Limit = DefaultListLimit
	case limit < 1 || limit > MaxListLimit:
		return ListQuery{}, &ParamError{Rule: "links-limit-range", Detail: fmt.Sprintf("limit %d is not between 1 and %d", limit, MaxListLimit)}
	}
	if len([]rune(search)) > MaxQueryLength {
		return ListQuery{}, &ParamError{Rule: "links-query-too-long", Detail: fmt.Sprintf("q is longer than %d characters", MaxQueryLength)}
	}
	if cursor != "" {
		c, err := ParseCursor(cursor)
		if err != nil {
			return ListQuery{}, err
		}
		q.After = &c
	}
	return q, nil
}
