package shorturl

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
)

// Errors of idempotent issuance; the HTTP edge maps them once with errors.Is.
var (
	// ErrIdempotencyKeyInvalid: the key is not 1–MaxIdempotencyKeyLength printable
	// ASCII characters.
	ErrIdempotencyKeyInvalid = errors.New("idempotency key is invalid")
	// ErrIdempotencyKeyReused: the key already names a short URL with another target
	// (or Persist holds several targets under its token). Nothing was written.
	ErrIdempotencyKeyReused = errors.New("idempotency key already names a short url with another target")
	// ErrIdempotencyUnavailable: the issuer has no idempotency secret, or the request
	// no caller identity: a wiring fault, never the caller's.
	ErrIdempotencyUnavailable = errors.New("idempotent issuance is not configured")
)

const (
	// MaxIdempotencyKeyLength bounds an Idempotency-Key header.
	MaxIdempotencyKeyLength = 255
	// MinIdempotencySecretBytes is the shortest idempotency secret an Issuer takes.
	MinIdempotencySecretBytes = 32
)

// CheckIdempotencyKey accepts 1–255 printable ASCII characters (0x20 space to 0x7E ~)
// but the comma, with no space at either end or beside another. The comma is out
// because API Gateway joins a repeated header's values with commas, so that a key
// holding one would be split on AWS and taken whole by serve; runs of spaces are out
// because SigV4 signs a header with them collapsed, so that "a  b" would replay the
// signature of "a b" as another key.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return fmt.Errorf("%w: it must be 1 to %d characters long, got %d", ErrIdempotencyKeyInvalid, MaxIdempotencyKeyLength, len(key))
	}
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c < 0x20 || c > 0x7e:
			return fmt.Errorf("%w: character %d is not printable ASCII (space to ~)", ErrIdempotencyKeyInvalid, i+1)
		case c == ',':
			return fmt.Errorf("%w: character %d is a comma", ErrIdempotencyKeyInvalid, i+1)
		case c == ' ' && (i == 0 || i == len(key)-1 || key[i+1] == ' '):
			return fmt.Errorf("%w: character %d is a space at an end or beside another", ErrIdempotencyKeyInvalid, i+1)
		}
	}
	return nil
}

// Idempotent is what derives a request's token: who asks, and the key they chose.
// Caller is the SigV4 access key id locally and the IAM principal ARN on AWS; it is
// used in the derivation only, never stored.
type Idempotent struct {
	Caller string
	Key    string
}

// DeriveToken maps (secret, caller, key) to a token, as docs/api.md's "Idempotent
// issuance" specifies so that another implementation can reproduce it:
//
//	m      = caller ‖ 0x00 ‖ key                      (bytes as given)
//	B(0)   = HMAC-SHA256(secret, m)
//	B(i)   = HMAC-SHA256(secret, m ‖ uint32_be(i))    for i = 1, 2, …
//	stream = B(0) ‖ B(1) ‖ …
//
// Each stream byte b gives v = b & 0x3f; v < 62 becomes alphabet[v]
// ("0-9A-Za-z"), v ≥ 62 is skipped (rejection sampling: every character is
// equally likely), until 10 characters are taken. The caller must not contain 0x00
// and the key is printable ASCII, so m is unambiguous and no block's input equals
// another's (a counter's first byte is 0x00, which no key contains).
func DeriveToken(secret []byte, caller, key string) Token {
	s := &macStream{mac: hmac.New(sha256.New, secret), msg: []byte(caller + "\x00" + key)}
	tok, _ := NewToken(s) // a macStream never fails
	return tok
}

// macStream is the HMAC counter-mode stream DeriveToken samples.
type macStream struct {
	mac   hash.Hash
	msg   []byte
	block []byte
	next  uint32 // index of the next block to compute
}

func (s *macStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.block) == 0 {
			s.mac.Reset()
			s.mac.Write(s.msg)
			if s.next > 0 {
				s.mac.Write(binary.BigEndian.AppendUint32(nil, s.next))
			}
			s.block = s.mac.Sum(nil)
			s.next++
		}
		c := copy(p[n:], s.block)
		s.block = s.block[c:]
		n += c
	}
	return n, nil
}

// idempotency holds the secret and the locks that serialise issuances of one
// derived token within this process.
type idempotency struct {
	secret atomic.Pointer[[]byte] // set once (Issuer.SetIdempotencySecret)
	locks  [64]sync.Mutex
}

func (d *idempotency) token(id Idempotent, key string) (Token, error) {
	secret := d.secret.Load()
	if secret == nil {
		return "", fmt.Errorf("%w: no idempotency secret", ErrIdempotencyUnavailable)
	}
	if id.Caller == "" || strings.IndexByte(id.Caller, 0) >= 0 {
		return "", fmt.Errorf("%w: no caller identity", ErrIdempotencyUnavailable)
	}
	return DeriveToken(*secret, id.Caller, key), nil
}

func stripe(tok Token) int {
	h := fnv.New32a()
	h.Write([]byte(tok))
	return int(h.Sum32() % 64)
}

// lock takes the stripes of toks in ascending order (so two batches never wait on
// each other crosswise) and returns the function that releases them.
func (d *idempotency) lock(toks []Token) func() {
	var held [64]bool
	for _, t := range toks {
		held[stripe(t)] = true
	}
	for i := range held {
		if held[i] {
			d.locks[i].Lock()
		}
	}
	return func() {
		for i := range held {
			if held[i] {
				d.locks[i].Unlock()
			}
		}
	}
}

// ShortenIdempotent is ShortenFor with an Idempotency-Key: the token is derived from
// the key and the caller, not drawn. No short URL has it → it is written (replayed
// false); one with the same target → that short URL, nothing written (replayed
// true); another target → ErrIdempotencyKeyReused, nothing written.
//
// Within this process issuances of one token are serialised, so two concurrent
// requests with one key cannot both write. Persist has no conditional write: two
// processes (Lambda instances) racing on one key with different targets can both
// write; the token then holds two targets, which the resolver refuses to follow
// (ErrInvalidStored → 404) and every later request with the key answers 422.
func (s *Issuer) ShortenIdempotent(ctx context.Context, target, requestHost string, id Idempotent) (ShortURL, bool, error) {
	if err := CheckIdempotencyKey(id.Key); err != nil {
		return ShortURL{}, false, err
	}
	if err := s.admit(target, s.hosts.withRequestHost(requestHost)); err != nil {
		return ShortURL{}, false, err
	}
	tok, err := s.idem.token(id, id.Key)
	if err != nil {
		return ShortURL{}, false, err
	}
	defer s.idem.lock([]Token{tok})()
	u, err := s.store.Lookup(ctx, tok)
	switch {
	case errors.Is(err, ErrInvalidStored):
		return ShortURL{}, false, fmt.Errorf("token %s: %w: %w", tok, ErrIdempotencyKeyReused, err)
	case err == nil && u.Target == target:
		return u, true, nil
	case err == nil:
		return ShortURL{}, false, fmt.Errorf("token %s: %w", tok, ErrIdempotencyKeyReused)
	case !errors.Is(err, ErrNotFound):
		return ShortURL{}, false, fmt.Errorf("check token %s: %w", tok, err)
	}
	u = s.shortURL(tok, target)
	if err := s.confirmWrite(ctx, []ShortURL{u}, s.store.Save(ctx, u)); err != nil {
		return ShortURL{}, false, fmt.Errorf("save token %s: %w", tok, err)
	}
	return u, false, nil
}
