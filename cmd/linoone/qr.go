package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/producer"
	"github.com/linoone/linoone/internal/core/qr"
	"github.com/linoone/linoone/internal/foundation/atomicfile"
	"github.com/linoone/linoone/internal/foundation/tty"
)

const qrUsage = `usage: linoone qr [--svg FILE] [--png FILE] [--size PX] [--margin N] [--ecc L|M|Q|H] [--management-url URL] TOKEN|SHORT_URL

Prints the QR code of a short URL in the terminal (Unicode half blocks with the quiet
zone, dark on light), which a phone scans from the screen. --svg and --png write the
management API's image instead (GET /links/{token}/qr), --size pixels wide (64 to
2048). A blocked or unknown short URL gets no code.

example:
  linoone qr 7BTadEDkJ8
  linoone qr 7BTadEDkJ8 --png code.png --size 512
`

// qrCmd prints a short URL's QR code, or writes the API's image to files.
func qrCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("qr")
	managementURLFlag(fs)
	svgFile := fs.String("svg", "", "write the SVG image to `FILE`")
	pngFile := fs.String("png", "", "write the PNG image to `FILE`")
	size := fs.Int("size", 256, "image width and height in pixels, 64 to 2048")
	margin := fs.Int("margin", 4, "quiet zone in modules, 0 to 16")
	eccFlag := fs.String("ecc", "M", "error correction level: L, M, Q or H")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	tok, err := tokenArg(fs, pos[0])
	if err != nil {
		return err
	}
	// The API takes the level in capitals; the flag takes either case.
	eccName := strings.ToUpper(*eccFlag)
	ecc, err := qr.ParseECC(eccName)
	switch {
	case err != nil:
		return &usageError{fs: fs, err: fmt.Errorf("--ecc: %w", err)}
	case *size < 64 || *size > 2048:
		return &usageError{fs: fs, err: fmt.Errorf("--size %d is not between 64 and 2048", *size)}
	case *margin < 0 || *margin > 16:
		return &usageError{fs: fs, err: fmt.Errorf("--margin %d is not between 0 and 16", *margin)}
	}
	api, err := managementClient(ctx, getenv, fs, 30*time.Second)
	if err != nil {
		return err
	}
	files := map[management.GetLinkQRParamsFormat]string{management.Svg: *svgFile, management.Png: *pngFile}
	wrote := false
	for format, file := range files {
		if file == "" {
			continue
		}
		if err := writeQRFile(ctx, api, tok, file, &management.GetLinkQRParams{Format: &format, Size: size, Margin: margin, Ecc: (*management.GetLinkQRParamsEcc)(&eccName)}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", file)
		wrote = true
	}
	if wrote {
		return nil
	}
	call := fmt.Sprintf("GET %s/links/%s", api.Base, tok)
	res, err := api.Client.GetLinkWithResponse(ctx, tok)
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return producer.Print(stdout, false, producer.Answer{Call: call, Status: res.StatusCode(), Body: res.Body}, "Link", res.JSON200, func(l *management.Link) error {
		if l.Blocked {
			return fmt.Errorf("%s is blocked (%s): it has no QR code", tok, blockedText(l))
		}
		c, err := qr.Encode(l.ShortURL, ecc)
		if err != nil {
			return err
		}
		art := c.Terminal(*margin)
		if tty.IsTerminal(stdout) { // dark ink on light paper whatever the terminal's colours
			art = strings.ReplaceAll("\x1b[30;107m"+art, "\n", "\x1b[0m\n\x1b[30;107m")
			art = strings.TrimSuffix(art, "\x1b[30;107m")
		}
		_, err = fmt.Fprintf(stdout, "%s%s\n", art, tty.Printable(l.ShortURL))
		return err
	})
}

// writeQRFile writes the API's image of the token's code to file.
func writeQRFile(ctx context.Context, api producer.API, tok, file string, p *management.GetLinkQRParams) error {
	call := fmt.Sprintf("GET %s/links/%s/qr?format=%s", api.Base, tok, *p.Format)
	res, err := api.Client.GetLinkQRWithResponse(ctx, tok, p)
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	if res.StatusCode() != http.StatusOK {
		return producer.Refused(producer.Answer{Call: call, Status: res.StatusCode(), Body: res.Body})
	}
	if len(res.Body) == 0 {
		return errors.New(call + ": empty image")
	}
	if err := atomicfile.Replace(file, res.Body, atomicfile.Options{}); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
