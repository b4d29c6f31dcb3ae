package eventid

import (
	"regexp"
	"sync"
	"testing"
)

func TestNextIsUniqueAndOrdered(t *testing.T) {
	s := New()
	pattern := regexp.MustCompile(`^ev_[0-9A-HJKMNP-TV-Z]{26}$`)
	const goroutines, each = 8, 500
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			prev := ""
			for range each {
				id, err := s.Next()
				if err != nil {
					t.Error(err)
					return
				}
				if !pattern.MatchString(id) {
					t.Errorf("%q does not match %s", id, pattern)
				}
				if id <= prev {
					t.Errorf("not monotonic: %s after %s", id, prev)
				}
				prev = id
				mu.Lock()
				if seen[id] {
					t.Errorf("duplicate %s", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != goroutines*each {
		t.Fatalf("%d ids, want %d", len(seen), goroutines*each)
	}
}
