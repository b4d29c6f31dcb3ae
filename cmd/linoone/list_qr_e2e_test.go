package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
)

// longBase is a custom-domain base URL long enough that the QR code needs a larger
// version than the default base's, so a drawing that cut the URL would not decode.
const longBase = "https://links.a-rather-long-custom-domain-for-qr-codes.example.org/go"

// TestLinksListEndToEnd is issue 41's GET /links through a real serve and the CLI:
// newest first, --query, --limit with the printed cursor, --json, and inspect and
// links saying which rule blocks a link once the running serve has read the list.
func TestLinksListEndToEnd(t *testing.T) {
	in := newInstance(t, "LINOONE_RESOLVER_BASE_URL="+longBase)
	in.start()
	targets := []string{"https://alpha.example/One", "https://beta.example/two", "https://login.evil.example/Three"}
	toks := make([]string, len(targets))
	for i, target := range targets {
		toks[i] = in.shorten(target)
		time.Sleep(5 * time.Millisecond) // distinct created_at, so the order is defined
	}

	out, errOut, err := in.cli("links")
	if err != nil {
		t.Fatalf("links: %v %s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TOKEN") {
		t.Fatalf("links:\n%s", out)
	}
	for i, l := range lines[1:] { // newest first
		want := len(targets) - 1 - i
		if f := strings.Fields(l); len(f) != 4 || f[0] != toks[want] || f[2] != "no" || f[3] != targets[want] {
			t.Errorf("links line %d = %q, want %s no %s", i, l, toks[want], targets[want])
		}
	}

	// --query is a case-insensitive substring of the target, or an exact token.
	for q, want := range map[string]string{"ALPHA.example/one": toks[0], toks[1]: toks[1]} {
		out, errOut, err := in.cli("links", "--query", q, "--json")
		var page management.LinkPage
		if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Items) != 1 || page.Items[0].Token != want ||
			page.Items[0].ShortURL != longBase+"/"+want || page.NextCursor != nil {
			t.Errorf("links --query %s --json: %v %s %s", q, err, out, errOut)
		}
	}
	if out, _, err := in.cli("links", "--query", "nowhere.example"); err != nil || strings.TrimSpace(out) != "no short URLs" {
		t.Errorf("links --query with no match: %v %q", err, out)
	}

	// Paging with --limit 2 follows the cursor the CLI prints, and meets every link once.
	var seen []string
	args := []string{"links", "--limit", "2"}
	for page := 0; ; page++ {
		out, errOut, err := in.cli(args...)
		if err != nil || page > 2 {
			t.Fatalf("links %v (page %d): %v\n%s%s", args, page, err, out, errOut)
		}
		next := ""
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			if c, ok := strings.CutPrefix(l, "next page: linoone links --cursor "); ok {
				next = c
				continue
			}
			seen = append(seen, strings.Fields(l)[0])
		}
		if next == "" {
			break
		}
		args = []string{"links", "--limit", "2", "--cursor", next}
	}
	if strings.Join(seen, " ") != strings.Join([]string{toks[2], toks[1], toks[0]}, " ") {
		t.Errorf("pages of 2 gave %v, want %v newest first", seen, toks)
	}
	if _, errOut, err := in.cli("links", "--limit", "101"); err == nil || !strings.Contains(errOut, "--limit 101") {
		t.Errorf("links --limit 101: %v %q", err, errOut)
	}

	// Blocked: the running serve reads the list on its poll; inspect and links say so.
	if out, errOut, err := in.cli("block", "*.evil.example"); err != nil {
		t.Fatalf("block: %v\n%s%s", err, out, errOut)
	}
	waitStatus(t, in, toks[2], http.StatusGone, time.Now())
	const verdict = "yes: domain rule *.evil.example (line 1)"
	if out, errOut, err := in.cli("inspect", toks[2]); err != nil || !strings.Contains(out, "blocked     "+verdict+"\n") {
		t.Errorf("inspect a blocked link: %v\n%s%s", err, out, errOut)
	}
	if out, _, err := in.cli("inspect", toks[0]); err != nil || !strings.Contains(out, "blocked     no\n") {
		t.Errorf("inspect a link not blocked: %v\n%s", err, out)
	}
	if out, _, err := in.cli("links", "--query", "evil"); err != nil || !strings.Contains(out, verdict) {
		t.Errorf("links of a blocked link: %v\n%s", err, out)
	}
	out, _, err = in.cli("links", "--query", toks[2], "--json")
	var page management.LinkPage
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Items) != 1 || !page.Items[0].Blocked || page.Items[0].BlockRule == nil ||
		page.Items[0].BlockRule.Rule != "*.evil.example" {
		t.Errorf("links --json of a blocked link: %v %s", err, out)
	}
}

// TestQREndToEnd is issue 41's QR codes through a real serve: the CLI's SVG, PNG and
// terminal codes decode, with an independent decoder, to short_url exactly (a long
// custom-domain base URL); the same parameters give the same ETag and a 304; a
// blocked link is 410 and an unknown token 404.
func TestQREndToEnd(t *testing.T) {
	in := newInstance(t, "LINOONE_RESOLVER_BASE_URL="+longBase)
	in.start()
	tok := in.shorten("https://qr.example/some/page?x=1")
	short := longBase + "/" + tok
	dir := t.TempDir()
	svg, png := filepath.Join(dir, "code.svg"), filepath.Join(dir, "code.png")

	out, errOut, err := in.cli("qr", short, "--svg", svg, "--png", png, "--size", "512", "--ecc", "q")
	if err != nil {
		t.Fatalf("qr --svg --png: %v\n%s%s", err, out, errOut)
	}
	for file, decode := range map[string]func([]byte) (string, error){svg: qrdecode.SVG, png: qrdecode.PNG} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := decode(b); err != nil || got != short {
			t.Errorf("%s decodes to %q (%v), want %q", filepath.Base(file), got, err, short)
		}
	}
	out, errOut, err = in.cli("qr", tok)
	if err != nil || !strings.HasSuffix(out, short+"\n") {
		t.Fatalf("qr in the terminal: %v\n%s%s", err, out, errOut)
	}
	art := strings.TrimSuffix(out, short+"\n")
	if got, err := qrdecode.Terminal(art, 4); err != nil || got != short {
		t.Errorf("terminal code decodes to %q (%v), want %q:\n%s", got, err, short, art)
	}

	// Caching: the same parameters, the same strong ETag; If-None-Match gives 304.
	ctx, c := context.Background(), in.client()
	png64 := management.Png
	params := func() *management.GetLinkQRParams {
		size := 300
		return &management.GetLinkQRParams{Format: &png64, Size: &size}
	}
	first, err := c.GetLinkQRWithResponse(ctx, tok, params())
	if err != nil || first.StatusCode() != http.StatusOK {
		t.Fatalf("GET qr: %v %d %s", err, first.StatusCode(), first.Body)
	}
	etag := first.HTTPResponse.Header.Get("ETag")
	second, err := c.GetLinkQRWithResponse(ctx, tok, params())
	if err != nil || etag == "" || strings.HasPrefix(etag, "W/") || second.HTTPResponse.Header.Get("ETag") != etag || string(second.Body) != string(first.Body) ||
		!strings.Contains(first.HTTPResponse.Header.Get("Cache-Control"), "max-age=") {
		t.Fatalf("GET qr twice: ETag %q then %q, Cache-Control %q", etag, second.HTTPResponse.Header.Get("ETag"), first.HTTPResponse.Header.Get("Cache-Control"))
	}
	if svgRes, err := c.GetLinkQRWithResponse(ctx, tok, nil); err != nil || svgRes.HTTPResponse.Header.Get("ETag") == etag ||
		svgRes.HTTPResponse.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("default SVG: %v, ETag %q (PNG's %q)", err, svgRes.HTTPResponse.Header.Get("ETag"), etag)
	}
	p := params()
	p.IfNoneMatch = &etag
	if res, err := c.GetLinkQRWithResponse(ctx, tok, p); err != nil || res.StatusCode() != http.StatusNotModified || len(res.Body) != 0 ||
		res.HTTPResponse.Header.Get("ETag") != etag {
		t.Errorf("If-None-Match: %v %d", err, res.StatusCode())
	}
	stale := `"00000000000000000000000000000000"`
	p.IfNoneMatch = &stale
	if res, err := c.GetLinkQRWithResponse(ctx, tok, p); err != nil || res.StatusCode() != http.StatusOK {
		t.Errorf("If-None-Match with another tag: %v %d", err, res.StatusCode())
	}

	// Unknown: 404, through the API and the CLI.
	if res, err := c.GetLinkQRWithResponse(ctx, "AAAAAAAAAA", nil); err != nil || res.StatusCode() != http.StatusNotFound {
		t.Errorf("qr of an unknown token: %v %d", err, res.StatusCode())
	}
	if _, errOut, err := in.cli("qr", "AAAAAAAAAA", "--png", png); err == nil || !strings.Contains(errOut, "404") {
		t.Errorf("linoone qr unknown: %v %q", err, errOut)
	}
	// Blocked: 410, and the CLI prints no code.
	blocked := in.shorten("https://login.evil.example/qr")
	if out, errOut, err := in.cli("block", "*.evil.example"); err != nil {
		t.Fatalf("block: %v\n%s%s", err, out, errOut)
	}
	waitStatus(t, in, blocked, http.StatusGone, time.Now())
	if res, err := c.GetLinkQRWithResponse(ctx, blocked, nil); err != nil || res.StatusCode() != http.StatusGone {
		t.Errorf("qr of a blocked link: %v %d %s", err, res.StatusCode(), res.Body)
	}
	if out, errOut, err := in.cli("qr", blocked); err == nil || strings.Contains(out, "█") || !strings.Contains(errOut, "blocked") {
		t.Errorf("linoone qr blocked: %v\n%s%s", err, out, errOut)
	}
	if _, errOut, err := in.cli("qr", blocked, "--svg", svg); err == nil || !strings.Contains(errOut, "410") {
		t.Errorf("linoone qr blocked --svg: %v %q", err, errOut)
	}
}
