package qr_test

import (
	"math/rand/v2"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode/decoder"
	"github.com/makiuchi-d/gozxing/qrcode/encoder"

	"github.com/linoone/linoone/internal/core/qr"
)

// TestCodewordsExact checks the encoder's modules themselves, no image between. Read
// by gozxing's bit-matrix parser (format, version, unmasking, de-interleaving), every
// Reed-Solomon block of every code has all-zero syndromes, computed here; and each
// matrix is, module for module, the one ZXing's encoder (gozxing's port) draws for the
// same text, version, level and mask. The texts include codes gozxing could not read
// from an image (its finder-pattern scan, see qrdecode), so those carry no errors
// either. One flipped module fails both checks.
func TestCodewordsExact(t *testing.T) {
	const e2eBase = "https://links.a-rather-long-custom-domain-for-qr-codes.example.org/go/"
	type code struct {
		text string
		ecc  qr.ECC
	}
	codes := []code{
		{e2eBase + "ylXDIZL9rR", qr.Quartile}, {e2eBase + "pUElrDT8jn", qr.Quartile},
		{e2eBase + "RHZZkLEHy4", qr.Medium}, {e2eBase + "kBrQQnLqFv", qr.High},
	}
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	r := rand.New(rand.NewPCG(41, 2))
	for _, base := range []string{"http://127.0.0.1:8080/", longURL[:len(longURL)-10], e2eBase} {
		for _, ecc := range []qr.ECC{qr.Low, qr.Medium, qr.Quartile, qr.High} {
			for range 25 {
				tok := make([]byte, 10)
				for i := range tok {
					tok[i] = alphabet[r.IntN(len(alphabet))]
				}
				codes = append(codes, code{base + string(tok), ecc})
			}
		}
	}
	for _, c := range codes {
		name := string(rune(c.ecc)) + " " + c.text
		q, err := qr.Encode(c.text, c.ecc)
		if err != nil {
			t.Fatal(err)
		}
		if bad := badBlocks(t, modules(q)); bad != 0 {
			t.Errorf("%s: %d Reed-Solomon blocks with errors", name, bad)
		}
		if diff := zxingDiff(t, c.text, c.ecc, modules(q)); diff != 0 {
			t.Errorf("%s: %d modules differ from ZXing's encoder", name, diff)
		}
	}

	// The checks can fail: flip the bottom-right module, the first bit of the first
	// data codeword in every version.
	q, _ := qr.Encode(codes[0].text, codes[0].ecc)
	flipped := func() *gozxing.BitMatrix { m := modules(q); m.Flip(q.Size()-1, q.Size()-1); return m }
	if bad := badBlocks(t, flipped()); bad != 1 {
		t.Errorf("one flipped module: %d blocks with errors, want 1", bad)
	}
	if diff := zxingDiff(t, codes[0].text, codes[0].ecc, flipped()); diff != 1 {
		t.Errorf("one flipped module: %d modules differ, want 1", diff)
	}
}

// modules is the code's matrix as gozxing's BitMatrix, dark set.
func modules(c *qr.Code) *gozxing.BitMatrix {
	m, _ := gozxing.NewBitMatrix(c.Size(), c.Size())
	for y := range c.Size() {
		for x := range c.Size() {
			if c.Dark(x, y) {
				m.Set(x, y)
			}
		}
	}
	return m
}

// badBlocks counts the Reed-Solomon blocks of m with a nonzero syndrome.
func badBlocks(t *testing.T, m *gozxing.BitMatrix) int {
	t.Helper()
	p, err := decoder.NewBitMatrixParser(m)
	if err != nil {
		t.Fatal(err)
	}
	version, err := p.ReadVersion()
	if err != nil {
		t.Fatal(err)
	}
	format, err := p.ReadFormatInformation()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.ReadCodewords()
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := decoder.DataBlock_GetDataBlocks(raw, version, format.GetErrorCorrectionLevel())
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, b := range blocks {
		if !syndromesZero(b.GetCodewords(), len(b.GetCodewords())-b.GetNumDataCodewords()) {
			bad++
		}
	}
	return bad
}

// syndromesZero reports whether the codeword polynomial (first byte the highest
// power) vanishes at α^0 … α^(ecBytes-1) in GF(256) with x⁸+x⁴+x³+x²+1, the QR
// generator's roots: true exactly for a block without errors (up to ecBytes of them).
func syndromesZero(codewords []byte, ecBytes int) bool {
	mul := func(a, b byte) byte { // shift-and-add, no tables to get wrong
		var p byte
		for ; b != 0; b >>= 1 {
			if b&1 != 0 {
				p ^= a
			}
			carry := a & 0x80
			a <<= 1
			if carry != 0 {
				a ^= 0x1d
			}
		}
		return p
	}
	root := byte(1)
	for range ecBytes {
		var s byte
		for _, c := range codewords {
			s = mul(s, root) ^ c
		}
		if s != 0 {
			return false
		}
		root = mul(root, 2)
	}
	return true
}

// zxingDiff counts the modules where m differs from ZXing's encoding of text at m's
// version and mask; a level other than ecc in m's format information fails the test.
func zxingDiff(t *testing.T, text string, ecc qr.ECC, m *gozxing.BitMatrix) int {
	t.Helper()
	p, err := decoder.NewBitMatrixParser(m)
	if err != nil {
		t.Fatal(err)
	}
	format, err := p.ReadFormatInformation()
	if err != nil {
		t.Fatal(err)
	}
	level := map[qr.ECC]decoder.ErrorCorrectionLevel{qr.Low: decoder.ErrorCorrectionLevel_L, qr.Medium: decoder.ErrorCorrectionLevel_M, qr.Quartile: decoder.ErrorCorrectionLevel_Q, qr.High: decoder.ErrorCorrectionLevel_H}[ecc]
	if got := format.GetErrorCorrectionLevel(); got != level {
		t.Fatalf("%s: level %v in the format information, want %v", text, got, level)
	}
	n := m.GetWidth()
	want, err := encoder.Encoder_encode(text, level, map[gozxing.EncodeHintType]any{
		gozxing.EncodeHintType_QR_VERSION:      (n - 17) / 4,
		gozxing.EncodeHintType_QR_MASK_PATTERN: int(format.GetDataMask()),
	})
	if err != nil {
		t.Fatalf("%s: zxing: %v", text, err)
	}
	diff := 0
	for y := range n {
		for x := range n {
			if (want.GetMatrix().Get(x, y) == 1) != m.Get(x, y) {
				diff++
			}
		}
	}
	return diff
}
