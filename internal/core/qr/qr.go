// Package qr draws the QR code of a short URL: the modules come from
// github.com/yeqown/go-qrcode/v2 (a maintained encoder whose package initialises in
// well under a millisecond, which the Issue function's init budget needs), and this
// package lays them out as SVG, PNG or Unicode half blocks for a terminal, with a
// quiet zone. The same text and parameters always give the same bytes. It imports the
// standard library and the encoder only.
package qr

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// ECC is an error correction level: 'L', 'M', 'Q' or 'H'.
type ECC byte

// The error correction levels.
const (
	Low      ECC = 'L' // 7% of the codewords can be restored
	Medium   ECC = 'M' // 15%
	Quartile ECC = 'Q' // 25%
	High     ECC = 'H' // 30%
)

// ParseECC reads "L", "M", "Q" or "H"; "" is Medium.
func ParseECC(s string) (ECC, error) {
	switch s {
	case "":
		return Medium, nil
	case "L", "M", "Q", "H":
		return ECC(s[0]), nil
	}
	return 0, fmt.Errorf("error correction level %q is not L, M, Q or H", s)
}

// ErrTooSmall is returned when an image of the asked size cannot give every module
// of the code and its quiet zone one pixel.
var ErrTooSmall = errors.New("image too small for the code")

// Code is a QR code's modules, without the quiet zone.
type Code struct {
	n    int
	dark []bool // row-major, n×n
}

// Encode makes the QR code of text.
func Encode(text string, ecc ECC) (*Code, error) {
	lvl := map[ECC]int{Low: 0, Medium: 1, Quartile: 2, High: 3}
	l, ok := lvl[ecc]
	if !ok {
		return nil, fmt.Errorf("error correction level %q is not L, M, Q or H", string(rune(ecc)))
	}
	levels := [...]qrcode.EncodeOption{
		qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionLow),
		qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionMedium),
		qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionQuart),
		qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionHighest),
	}
	q, err := qrcode.NewWith(text, qrcode.WithEncodingMode(qrcode.EncModeByte), levels[l])
	if err != nil {
		return nil, fmt.Errorf("encode qr code: %w", err)
	}
	var m matrix
	if err := q.Save(&m); err != nil {
		return nil, fmt.Errorf("encode qr code: %w", err)
	}
	return m.code, nil
}

// matrix is the encoder's Writer that keeps the modules.
type matrix struct{ code *Code }

func (m *matrix) Write(mat qrcode.Matrix) error {
	if mat.Width() != mat.Height() || mat.Width() == 0 {
		return fmt.Errorf("encoder gave a %d×%d matrix", mat.Width(), mat.Height())
	}
	c := &Code{n: mat.Width(), dark: make([]bool, mat.Width()*mat.Height())}
	mat.Iterate(qrcode.IterDirection_ROW, func(x, y int, v qrcode.QRValue) { c.dark[y*c.n+x] = v.IsSet() })
	m.code = c
	return nil
}

func (m *matrix) Close() error { return nil }

// Size is the number of modules on a side, quiet zone excluded.
func (c *Code) Size() int { return c.n }

// Dark reports whether the module at column x, row y is dark; outside the code (the
// quiet zone) it is light.
func (c *Code) Dark(x, y int) bool {
	return x >= 0 && y >= 0 && x < c.n && y < c.n && c.dark[y*c.n+x]
}

// layout places the code with a quiet zone of margin modules in a size×size pixel
// square: scale pixels a module, and the pixels left over added to the quiet zone,
// offset before the first module.
func (c *Code) layout(size, margin int) (scale, offset int, err error) {
	total := c.n + 2*margin
	scale = size / total
	if scale < 1 {
		return 0, 0, fmt.Errorf("%w: %d modules with the quiet zone need at least %d pixels, asked %d", ErrTooSmall, total, total, size)
	}
	return scale, (size-scale*c.n)/2, nil
}

// PNG draws the code as a size×size one-bit PNG.
func (c *Code) PNG(size, margin int) ([]byte, error) {
	scale, off, err := c.layout(size, margin)
	if err != nil {
		return nil, err
	}
	img := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{color.White, color.Black})
	for y := range c.n {
		for x := range c.n {
			if !c.Dark(x, y) {
				continue
			}
			for py := off + y*scale; py < off+(y+1)*scale; py++ {
				row := img.Pix[py*img.Stride:]
				for px := off + x*scale; px < off+(x+1)*scale; px++ {
					row[px] = 1
				}
			}
		}
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b.Bytes(), nil
}

// SVG draws the code as a size×size SVG in pixel units, the same pixels as PNG: one
// path of the dark runs of each row on a white square.
func (c *Code) SVG(size, margin int) ([]byte, error) {
	scale, off, err := c.layout(size, margin)
	if err != nil {
		return nil, err
	}
	s := strconv.Itoa(size)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="` + s + `" height="` + s + `" viewBox="0 0 ` + s + " " + s + `" shape-rendering="crispEdges">`)
	b.WriteString(`<rect width="` + s + `" height="` + s + `" fill="#ffffff"/><path fill="#000000" d="`)
	for y := range c.n {
		for x := 0; x < c.n; {
			if !c.Dark(x, y) {
				x++
				continue
			}
			run := 1
			for c.Dark(x+run, y) {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv%dh-%dz", off+x*scale, off+y*scale, run*scale, scale, run*scale)
			x += run
		}
	}
	b.WriteString(`"/></svg>` + "\n")
	return []byte(b.String()), nil
}

// Terminal draws the code with Unicode half blocks, two module rows a line, dark
// modules as ink: "█" both dark, "▀" the upper, "▄" the lower, " " neither, with a
// quiet zone of margin modules. Printed on a light background (or between ANSI
// colours that make one, as the CLI does), it scans.
func (c *Code) Terminal(margin int) string {
	var b strings.Builder
	lo, hi := -margin, c.n+margin
	for y := lo; y < hi; y += 2 {
		for x := lo; x < hi; x++ {
			top, bottom := c.Dark(x, y), y+1 < hi && c.Dark(x, y+1)
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
