package qr_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/qr"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
)

// longURL is a short URL on a long custom domain: a larger code (version 6 or so).
const longURL = "https://links.marketing-campaigns.a-rather-long-custom-domain.example.co.uk/7BTadEDkJ8"

func TestDecodesBack(t *testing.T) {
	for _, text := range []string{"http://127.0.0.1:8080/7BTadEDkJ8", longURL} {
		for _, ecc := range []qr.ECC{qr.Low, qr.Medium, qr.Quartile, qr.High} {
			c, err := qr.Encode(text, ecc)
			if err != nil {
				t.Fatal(err)
			}
			name := string(rune(ecc)) + " " + text
			p, err := c.PNG(512, 4)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := qrdecode.PNG(p); err != nil || got != text {
				t.Errorf("%s: png decodes to %q (%v)", name, got, err)
			}
			s, err := c.SVG(300, 4)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := qrdecode.SVG(s); err != nil || got != text {
				t.Errorf("%s: svg decodes to %q (%v)", name, got, err)
			}
			if got, err := qrdecode.Terminal(c.Terminal(4), 4); err != nil || got != text {
				t.Errorf("%s: terminal decodes to %q (%v)", name, got, err)
			}
		}
	}
}

func TestSameBytesAndLayout(t *testing.T) {
	a, _ := qr.Encode(longURL, qr.Medium)
	b, _ := qr.Encode(longURL, qr.Medium)
	pa, _ := a.PNG(256, 4)
	pb, _ := b.PNG(256, 4)
	sa, _ := a.SVG(256, 4)
	sb, _ := b.SVG(256, 4)
	if !bytes.Equal(pa, pb) || !bytes.Equal(sa, sb) {
		t.Error("the same code drew different bytes")
	}
	h, _ := qr.Encode(longURL, qr.High)
	if h.Size() <= a.Size() {
		t.Errorf("H is %d modules, M %d: more correction should need a larger code", h.Size(), a.Size())
	}
	// The SVG has exactly the PNG's pixels.
	img, err := qrdecode.RasterizeSVG(sa)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sa), `width="256" height="256"`) || img.Bounds().Dx() != 256 {
		t.Errorf("svg size: %v", img.Bounds())
	}
	// Too small for one pixel a module: refused, not drawn blurred.
	if _, err := a.PNG(a.Size()+7, 4); !errors.Is(err, qr.ErrTooSmall) {
		t.Errorf("png smaller than the code: %v", err)
	}
	// The terminal rendering holds the quiet zone: margin blank columns each side.
	lines := strings.Split(a.Terminal(4), "\n")
	if w := len([]rune(lines[0])); w != a.Size()+8 || strings.TrimSpace(lines[0]) != "" || strings.TrimSpace(lines[1]) != "" {
		t.Errorf("terminal: first lines %q %q, width %d want %d", lines[0], lines[1], w, a.Size()+8)
	}
	if _, err := qr.ParseECC("X"); err == nil {
		t.Error("ecc X accepted")
	}
}
