// Package qrdecode reads QR codes back for tests, with decoders independent of the
// encoder Linoone uses: ZXing's Go port (github.com/makiuchi-d/gozxing), first as a
// camera would (finding the finder patterns), then as a computer-drawn image (its
// pure-barcode mode, which takes the grid from the image's dark bounds), then ZBar's
// zbarimg (Debian's zbar-tools, which .ci/run installs) when it is installed. It reads
// from a PNG, from an SVG of filled rectangles (rasterized here), and from the Unicode
// half blocks the CLI prints.
//
// The first reading alone is not enough: gozxing's finder-pattern scan, like ZXing's,
// stops once it has three confirmed candidates, and where the data modules happen to
// form a finder-like 1:1:3:1:1 cross between the top finders and the bottom-left one, it
// takes that for the bottom-left finder, samples a grid of the wrong size, and then fails
// in Reed-Solomon ("Error locator degree does not match number of roots"), format or
// version reading. The codes themselves are exact: internal/core/qr's TestCodewordsExact
// checks their codewords without an image.
package qrdecode

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"unicode"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
)

// Image decodes the QR code in img: with gozxing's detector, then its pure-barcode
// mode, then zbarimg when it is installed.
func Image(img image.Image) (string, error) {
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", err
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	if err == nil {
		return res.GetText(), nil
	}
	res, perr := zxqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if perr == nil {
		return res.GetText(), nil
	}
	text, zerr := zbar(img)
	if zerr != nil {
		return "", fmt.Errorf("gozxing: %w; gozxing, pure barcode: %w; zbarimg: %w", err, perr, zerr)
	}
	return text, nil
}

// zbar decodes img with ZBar's zbarimg, one code, its text as it is.
func zbar(img image.Image) (string, error) {
	bin, err := exec.LookPath("zbarimg")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "qrdecode-*.png")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if err := errors.Join(png.Encode(f, img), f.Close()); err != nil {
		return "", err
	}
	// --raw: the text alone, then a newline; stderr holds only its D-Bus complaints.
	out, err := exec.Command(bin, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", f.Name()).Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", bin, err)
	}
	text, ok := strings.CutSuffix(string(out), "\n")
	if !ok || strings.Contains(text, "\n") {
		return "", fmt.Errorf("zbarimg read %q, want one code", out)
	}
	return text, nil
}

// PNG decodes the QR code of a PNG file.
func PNG(b []byte) (string, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	return Image(img)
}

// SVG rasterizes an SVG whose drawing is <rect> elements and <path> elements of
// absolute moves and relative h/v lines closed by z (each subpath an axis-aligned
// rectangle), at one pixel per user unit, then decodes it.
func SVG(b []byte) (string, error) {
	img, err := RasterizeSVG(b)
	if err != nil {
		return "", err
	}
	return Image(img)
}

// RasterizeSVG draws the SVG as SVG describes, one pixel per user unit.
func RasterizeSVG(b []byte) (*image.Gray, error) {
	var doc struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
		Rects  []struct {
			X      string `xml:"x,attr"`
			Y      string `xml:"y,attr"`
			Width  string `xml:"width,attr"`
			Height string `xml:"height,attr"`
			Fill   string `xml:"fill,attr"`
		} `xml:"rect"`
		Paths []struct {
			D    string `xml:"d,attr"`
			Fill string `xml:"fill,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("svg: %w", err)
	}
	w, err1 := strconv.Atoi(doc.Width)
	h, err2 := strconv.Atoi(doc.Height)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 || w > 4096 || h > 4096 {
		return nil, fmt.Errorf("svg size %q×%q", doc.Width, doc.Height)
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.Gray{255}}, image.Point{}, draw.Src) // paper where nothing is drawn
	fill := func(r image.Rectangle, c string) error {
		g, err := gray(c)
		if err != nil {
			return err
		}
		draw.Draw(img, r, &image.Uniform{g}, image.Point{}, draw.Src)
		return nil
	}
	for _, r := range doc.Rects {
		n := func(s string) int { v, _ := strconv.Atoi(s); return v }
		if err := fill(image.Rect(n(r.X), n(r.Y), n(r.X)+n(r.Width), n(r.Y)+n(r.Height)), r.Fill); err != nil {
			return nil, err
		}
	}
	for _, p := range doc.Paths {
		rects, err := pathRects(p.D)
		if err != nil {
			return nil, err
		}
		for _, r := range rects {
			if err := fill(r, p.Fill); err != nil {
				return nil, err
			}
		}
	}
	return img, nil
}

func gray(c string) (color.Gray, error) {
	switch strings.ToLower(c) {
	case "#000000", "#000", "black":
		return color.Gray{0}, nil
	case "#ffffff", "#fff", "white":
		return color.Gray{255}, nil
	}
	return color.Gray{}, fmt.Errorf("svg fill %q is not black or white", c)
}

// pathRects reads "Mx yhWvHh-Wz…" subpaths as rectangles.
func pathRects(d string) ([]image.Rectangle, error) {
	var out []image.Rectangle
	fields := strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'z' })
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var x, y, w, hh, w2 int
		// "x yhWvHh-W": parse by splitting on letters.
		parts := strings.FieldsFunc(f, func(r rune) bool { return unicode.IsLetter(r) })
		if len(parts) != 4 {
			return nil, fmt.Errorf("svg path segment %q", f)
		}
		if _, err := fmt.Sscanf(parts[0], "%d %d", &x, &y); err != nil {
			return nil, fmt.Errorf("svg path move %q: %w", parts[0], err)
		}
		var err error
		if w, err = strconv.Atoi(parts[1]); err == nil {
			if hh, err = strconv.Atoi(parts[2]); err == nil {
				w2, err = strconv.Atoi(parts[3])
			}
		}
		if err != nil || w2 != -w {
			return nil, fmt.Errorf("svg path segment %q is not a rectangle", f)
		}
		out = append(out, image.Rect(x, y, x+w, y+hh))
	}
	return out, nil
}

// Terminal turns half-block text back into a bitmap, scale pixels a module ("█",
// "▀", "▄" ink, anything else paper), and decodes it. ANSI escape sequences are
// dropped first.
func Terminal(text string, scale int) (string, error) {
	text = stripANSI(text)
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	width := 0
	for _, l := range lines {
		width = max(width, len([]rune(l)))
	}
	img := image.NewGray(image.Rect(0, 0, width*scale, 2*len(lines)*scale))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.Gray{255}}, image.Point{}, draw.Src)
	ink := &image.Uniform{color.Gray{0}}
	for row, l := range lines {
		for col, r := range []rune(l) {
			top, bottom := r == '█' || r == '▀', r == '█' || r == '▄'
			x0, y0 := col*scale, 2*row*scale
			if top {
				draw.Draw(img, image.Rect(x0, y0, x0+scale, y0+scale), ink, image.Point{}, draw.Src)
			}
			if bottom {
				draw.Draw(img, image.Rect(x0, y0+scale, x0+scale, y0+2*scale), ink, image.Point{}, draw.Src)
			}
		}
	}
	return Image(img)
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
