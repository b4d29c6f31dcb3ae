package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
)

// TestLinksPagesThroughASearch: three links whose targets share a marker come
// back newest first over two pages of two, a loop that stops early asks for no
// further page, and a bad cursor is a 400 problem.
func TestLinksPagesThroughASearch(t *testing.T) {
	needServe(t)
	ctx := context.Background()
	p := newProxy(t, nil)
	c := newClient(t, p.URL)
	marker := fmt.Sprintf("paged-%d", time.Now().UnixNano())
	var want []string
	for i := range 3 {
		u, err := c.Shorten(ctx, fmt.Sprintf("https://example.com/%s/%d", marker, i))
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{u.Token}, want...) // newest first
	}
	before := len(p.exchanges())
	var got []string
	for l, err := range c.Links(ctx, client.LinksQuery{Search: marker, PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if l.Blocked || l.CreatedAt.IsZero() {
			t.Errorf("link %+v: want not blocked, with its creation time", l)
		}
		got = append(got, l.Token)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Links(%q) = %v, want %v", marker, got, want)
	}
	if n := len(p.exchanges()) - before; n != 2 {
		t.Errorf("Links sent %d requests for 3 links in pages of 2, want 2", n)
	}
	before = len(p.exchanges())
	for range c.Links(ctx, client.LinksQuery{Search: marker, PageSize: 2}) {
		break
	}
	if n := len(p.exchanges()) - before; n != 1 {
		t.Errorf("a loop that stopped at the first link sent %d requests, want 1", n)
	}
	_, err := c.LinksPage(ctx, client.LinksQuery{Cursor: "not-a-cursor"})
	var prob *client.Problem
	if !errors.As(err, &prob) || prob.Status != http.StatusBadRequest {
		t.Errorf("LinksPage with a made-up cursor: %v, want a 400 problem", err)
	}
}

// TestQRDecodesToTheShortURL: the PNG and the SVG both decode to the short URL;
// an unknown token is ErrNotFound.
func TestQRDecodesToTheShortURL(t *testing.T) {
	needServe(t)
	ctx := context.Background()
	c := newClient(t, endpoint)
	u, err := c.Shorten(ctx, "https://example.com/qr")
	if err != nil {
		t.Fatal(err)
	}
	for format, decode := range map[string]func([]byte) (string, error){"png": qrdecode.PNG, "svg": qrdecode.SVG} {
		img, ct, err := c.QR(ctx, u.Token, client.QROptions{Format: format, Size: 256, ECC: "H"})
		if err != nil {
			t.Fatalf("QR %s: %v", format, err)
		}
		if want := map[string]string{"png": "image/png", "svg": "image/svg+xml"}[format]; ct != want {
			t.Errorf("QR %s: content type %q, want %q", format, ct, want)
		}
		if text, err := decode(img); err != nil || text != u.ShortURL {
			t.Errorf("QR %s decodes to %q, %v; want %s", format, text, err, u.ShortURL)
		}
	}
	if _, _, err := c.QR(ctx, "AAAAAAAAAA", client.QROptions{}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("QR of an unknown token: %v, want ErrNotFound", err)
	}
}

// TestStatsBreakdown: a click by a desktop Firefox is counted by browser, OS
// and device once it reached Persist; without WithBreakdown there is none.
func TestStatsBreakdown(t *testing.T) {
	needServe(t)
	ctx := context.Background()
	c := newClient(t, endpoint)
	u, err := c.Shorten(ctx, "https://example.com/broken-down")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, u.ShortURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	// Stats counts visitors before clicks: a read while the click lands may see
	// the click and no visitor yet.
	var s client.Stats
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s, err = c.Stats(ctx, u.Token, client.WithBreakdown(client.Browser, client.OS, client.Device)); err != nil || s.UniqueVisitors == 1 {
			break
		}
	}
	if err != nil || s.Clicks != 1 || s.UniqueVisitors != 1 {
		t.Fatalf("Stats: %+v, %v; want 1 click by 1 visitor", s, err)
	}
	one := func(name string) []client.ClassClicks { return []client.ClassClicks{{Name: name, Clicks: 1}} }
	if !slices.Equal(s.Browsers, one("Firefox")) || !slices.Equal(s.OSes, one("Linux")) || !slices.Equal(s.Devices, one("desktop")) {
		t.Errorf("breakdown browsers %v, OSes %v, devices %v; want Firefox, Linux, desktop once each", s.Browsers, s.OSes, s.Devices)
	}
	plain, err := c.Stats(ctx, u.Token)
	if err != nil || plain.Browsers != nil || plain.OSes != nil || plain.Devices != nil {
		t.Errorf("Stats without WithBreakdown: %+v, %v; want no breakdown", plain, err)
	}
}
