// Package eventid issues click event identifiers: "ev_" followed by a ULID whose
// entropy comes from crypto/rand, monotonic within a millisecond.
package eventid

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Source issues event identifiers. It is safe for concurrent use.
type Source struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
	now     func() time.Time
}

// New returns a Source reading crypto/rand.
func New() *Source {
	return &Source{entropy: ulid.Monotonic(rand.Reader, 0), now: time.Now}
}

// Next returns a new identifier such as ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G.
func (s *Source) Next() (string, error) {
	var buf [3 + ulid.EncodedSize]byte
	copy(buf[:], "ev_")
	s.mu.Lock()
	id, err := ulid.New(ulid.Timestamp(s.now()), s.entropy)
	s.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("new ulid: %w", err)
	}
	if err := id.MarshalTextTo(buf[3:]); err != nil {
		return "", fmt.Errorf("encode ulid: %w", err)
	}
	return string(buf[:]), nil
}
