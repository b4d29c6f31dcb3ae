package shorturl

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"testing"
)

func TestParseToken(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"7BTadEDkJ8", true},
		{"0000000000", true},
		{"zzzzzzzzzz", true},
		{"7BTadEDkJ", false},
		{"7BTadEDkJ8a", false},
		{"", false},
		{"7BTadEDk-8", false},
		{"7BTadEDk_8", false},
		{"7BTadEDk 8", false},
		{"7BTadEDk%8", false},
		{"7BTadEDkJé", false},
		{"healthz000", true},
		{"../../etc/", false},
		{"7BTadEDkJ\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tok, err := ParseToken(tt.in)
			if tt.ok != (err == nil) || IsToken(tt.in) != tt.ok {
				t.Fatalf("ParseToken(%q) = %q, %v; want ok=%v", tt.in, tok, err, tt.ok)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrInvalidToken", err)
			}
		})
	}
}

func TestNewTokenIsUniform(t *testing.T) {
	const draws = 20000
	counts := map[byte]int{}
	for range draws {
		tok, err := NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !IsToken(string(tok)) {
			t.Fatalf("NewToken gave %q", tok)
		}
		for i := 0; i < len(tok); i++ {
			counts[tok[i]]++
		}
	}
	if len(counts) != 62 {
		t.Fatalf("%d distinct characters, want 62", len(counts))
	}
	// Each character is expected draws*10/62 ≈ 3226 times (σ ≈ 56). A modulo bias
	// would give the first eight characters 5/4 of that; ±8σ keeps the test stable.
	want := float64(draws*TokenLength) / 62
	for c, n := range counts {
		if d := float64(n) - want; d > 450 || d < -450 {
			t.Errorf("character %q drawn %d times, want about %.0f", c, n, want)
		}
	}
}

func TestNewTokenRejectsOutOfRangeBytes(t *testing.T) {
	// 0x3e and 0x3f (62, 63) and every byte whose low six bits are ≥ 62 are skipped.
	in := append(bytes.Repeat([]byte{0xff, 0x3e, 0x7f}, 10), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}...)
	in = append(in, make([]byte, 40)...)
	tok, err := NewToken(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if tok != "0123456789" {
		t.Fatalf("tok = %q, want 0123456789", tok)
	}
}

func TestNewTokenReadError(t *testing.T) {
	if _, err := NewToken(io.LimitReader(rand.Reader, 5)); err == nil {
		t.Fatal("short random source: no error")
	}
}

func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"7BTadEDkJ8", "", "abc", "7BTadEDk-8", "\xff\xfe0123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := ParseToken(s)
		if err != nil {
			return
		}
		if len(tok) != TokenLength {
			t.Fatalf("accepted %q of length %d", s, len(tok))
		}
		for i := 0; i < len(tok); i++ {
			if !bytes.ContainsRune([]byte(alphabet), rune(tok[i])) {
				t.Fatalf("accepted %q with non-base62 byte %q", s, tok[i])
			}
		}
	})
}
