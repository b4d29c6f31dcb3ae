package shorturl

import (
	"errors"
	"fmt"
	"io"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// TokenLength is the number of base62 characters in a token.
const TokenLength = clickfact.TokenLength

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ErrInvalidToken reports a string that is not 10 base62 characters.
var ErrInvalidToken = errors.New("token must be 10 base62 characters")

// Token is the resolver path of a short URL: exactly TokenLength base62 characters.
type Token string

// ParseToken accepts exactly ^[0-9A-Za-z]{10}$.
func ParseToken(s string) (Token, error) {
	if !IsToken(s) {
		return "", ErrInvalidToken
	}
	return Token(s), nil
}

// IsToken reports whether s is exactly TokenLength base62 characters. It does not
// allocate; the resolver calls it before anything else.
func IsToken(s string) bool { return clickfact.IsToken(s) }

// NewToken draws a token from r, which should be crypto/rand.Reader. Each character
// takes the low six bits of a random byte and rejects values ≥ 62, so every one of
// the 62 characters is equally likely (a plain byte modulo 62 would favour the first
// eight).
func NewToken(r io.Reader) (Token, error) {
	var out [TokenLength]byte
	var buf [2 * TokenLength]byte // 62/64 acceptance: one read nearly always suffices
	n := 0
	for n < TokenLength {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", fmt.Errorf("read random bytes: %w", err)
		}
		for _, b := range buf {
			v := b & 0x3f
			if v >= 62 {
				continue
			}
			out[n] = alphabet[v]
			n++
			if n == TokenLength {
				break
			}
		}
	}
	return Token(out[:]), nil
}
