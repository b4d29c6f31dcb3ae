package qrdecode_test

import (
	"testing"

	"github.com/linoone/linoone/internal/core/qr"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
)

// TestReadsWithoutZbar: codes whose data modules fool gozxing's finder-pattern scan
// (it takes a finder-like cross in the data for the bottom-left finder) still read
// back, as PNG, SVG and terminal text, on a machine without zbarimg.
func TestReadsWithoutZbar(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no zbarimg to fall back on
	const base = "https://links.a-rather-long-custom-domain-for-qr-codes.example.org/go/"
	for _, tc := range []struct {
		token string
		ecc   qr.ECC
	}{
		{"ylXDIZL9rR", qr.Quartile}, // gozxing: Reed-Solomon checksum
		{"pUElrDT8jn", qr.Quartile}, // gozxing: not found, a dimension of 39
		{"RHZZkLEHy4", qr.Medium},   // gozxing: Reed-Solomon checksum
		{"kBrQQnLqFv", qr.High},     // gozxing: format information
	} {
		text := base + tc.token
		c, err := qr.Encode(text, tc.ecc)
		if err != nil {
			t.Fatal(err)
		}
		name := string(rune(tc.ecc)) + " " + text
		p, err := c.PNG(512, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := qrdecode.PNG(p); err != nil || got != text {
			t.Errorf("%s: png decodes to %q (%v)", name, got, err)
		}
		s, err := c.SVG(512, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := qrdecode.SVG(s); err != nil || got != text {
			t.Errorf("%s: svg decodes to %q (%v)", name, got, err)
		}
		if got, err := qrdecode.Terminal(c.Terminal(4), 9); err != nil || got != text {
			t.Errorf("%s: terminal decodes to %q (%v)", name, got, err)
		}
	}
}
