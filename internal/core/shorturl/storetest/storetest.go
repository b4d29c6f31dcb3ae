// Package storetest is the contract every shorturl.Store implementation must keep.
// Each implementation's tests call Run with a factory for a fresh, empty store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// Run checks the Store contract against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) shorturl.Store) {
	t.Helper()
	ctx := context.Background()
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://example.com/landing?message_id=msg_123"}

	t.Run("save then lookup", func(t *testing.T) {
		s := newStore(t)
		if err := s.Save(ctx, u); err != nil {
			t.Fatal(err)
		}
		got, err := s.Lookup(ctx, u.Token)
		if err != nil || got != u {
			t.Fatalf("Lookup = %+v, %v; want %+v", got, err, u)
		}
	})

	t.Run("unknown token is ErrNotFound", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Lookup(ctx, "AAAAAAAAAA"); !errors.Is(err, shorturl.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})

	t.Run("re-saving is a no-op", func(t *testing.T) {
		s := newStore(t)
		for range 3 {
			if err := s.Save(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.Lookup(ctx, u.Token); err != nil || got != u {
			t.Fatalf("Lookup = %+v, %v", got, err)
		}
	})

	t.Run("targets round-trip byte for byte", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("tokens are case-sensitive", func(t *testing.T) {
		s := newStore(t)
		if err := s.Save(ctx, u); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lookup(ctx, "7btadedkj8"); !errors.Is(err, shorturl.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("concurrent saves", func(t *testing.T) { concurrentSaves(t, newStore(t)) })
}

// roundTrip: targets with quotes, escapes, non-ASCII, the longest allowed and an IPv6
// host come back byte for byte.
func roundTrip(t *testing.T, s shorturl.Store) {
	ctx := context.Background()
	targets := []string{
		`https://example.com/a?b=c&d="e"&f=\g`,
		"https://bücher.example/ünïcödé?q=%F0%9F%98%80#frag",
		"https://example.com/" + strings.Repeat("x", shorturl.MaxTargetLength-len("https://example.com/")),
		"http://[2001:db8::1]:8080/'quoted'",
	}
	for i, target := range targets {
		v := shorturl.ShortURL{Token: shorturl.Token(fmt.Sprintf("RoundTrip%d", i)), Path: "https://s.example.com/x", Target: target}
		if err := s.Save(ctx, v); err != nil {
			t.Fatal(err)
		}
		got, err := s.Lookup(ctx, v.Token)
		if err != nil || got != v {
			t.Fatalf("Lookup = %+v, %v; want %+v", got, err, v)
		}
	}
}

// concurrentSaves: 64 saves at once all land.
func concurrentSaves(t *testing.T, s shorturl.Store) {
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			v := shorturl.ShortURL{Token: shorturl.Token(fmt.Sprintf("Concurr%03d", i)), Path: "https://s.example.com/p", Target: fmt.Sprintf("https://example.com/%d", i)}
			if err := s.Save(ctx, v); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range n {
		got, err := s.Lookup(ctx, shorturl.Token(fmt.Sprintf("Concurr%03d", i)))
		if err != nil || got.Target != fmt.Sprintf("https://example.com/%d", i) {
			t.Fatalf("%d: %+v, %v", i, got, err)
		}
	}
}
