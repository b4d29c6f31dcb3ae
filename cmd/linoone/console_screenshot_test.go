package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/testutil/testlayer"
	"github.com/linoone/linoone/internal/testutil/testport"
)

var screenshot = flag.Bool("screenshot", false, "write the README's console screenshot, docs/images/console-link.png (make screenshot)")

// readmeShot is the README's image of the console's Link page; maxShotBytes keeps the
// repository light.
const (
	readmeShot   = "../../docs/images/console-link.png"
	maxShotBytes = 200 << 10
)

// demoAgents are the browsers of the seeded clicks, and one link preview bot.
var demoAgents = []struct{ name, ua string }{
	{"Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"},
	{"Firefox", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
	{"Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
	{"Edge", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0"},
	{"", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
}

// TestConsoleLinkScreenshot seeds a serve with a few links and a month of clicks
// from several browsers (ingested into local Persist as the consumer would, on days
// of their own), opens the Link page of one in `linoone console` at 1200×800 in
// Chromium, and checks the page shows them. The screenshot goes to the test
// artifacts; with -screenshot (make screenshot) it becomes the README's image.
func TestConsoleLinkScreenshot(t *testing.T) {
	testlayer.Skip(t, testlayer.Browser)
	node, _, artifacts := browserPrereqs(t)
	in := newInstance(t, "LINOONE_RESOLVER_BASE_URL=https://lnn.example")
	in.start()
	for _, target := range []string{"https://example.com/docs/getting-started", "https://example.com/pricing?plan=team", "https://example.com/careers/backend-engineer"} {
		in.shorten(target)
	}
	const target = "https://example.com/launch/spring-sale?utm_source=newsletter&utm_campaign=march"
	token := in.shorten(target)
	visits := seedDemoClicks(t, in, token, target)
	addr := testport.Free(t)
	login, logs := startConsole(t, in, addr)

	shot := filepath.Join(artifacts, "console-link-demo.png")
	cfg, _ := json.Marshal(map[string]any{"login": login, "origin": "http://" + addr, "token": token, "shot": shot})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "console_screenshot.mjs"), string(cfg))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var r struct {
		Error, Clicks, Unique, Browsers string
		Days, ChartBottom               int
	}
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || r.Error != "" {
		t.Fatalf("the browser script: %v %v %s\n%s\nstderr: %s\nconsole log:\n%s", err, jerr, r.Error, out, stderr.String(), logs)
	}
	if r.ChartBottom == 0 {
		t.Error("the Link page has no chart of clicks per day under its heading")
	}
	if r.Clicks != fmt.Sprint(visits.clicks) || !strings.HasPrefix(r.Unique, fmt.Sprint(visits.visitors)+" ") || r.Days < 20 {
		t.Errorf("the Link page shows %s clicks, %q unique, %d days; seeded %d clicks from %d addresses on %d days", r.Clicks, r.Unique, r.Days, visits.clicks, visits.visitors, visits.days)
	}
	for _, a := range demoAgents {
		if a.name != "" && !strings.Contains(r.Browsers, a.name) {
			t.Errorf("the browsers breakdown lacks %s:\n%s", a.name, r.Browsers)
		}
	}
	if *screenshot {
		writeReadmeShot(t, shot)
	}
}

// demoClicks is what seedDemoClicks ingested.
type demoClicks struct{ clicks, visitors, days int }

// seedDemoClicks ingests a month of clicks on token into local Persist, the way the
// bus consumer delivers them: self-loops carrying the fact's four properties. The
// counts come from a fixed seed, so the page looks the same run after run.
func seedDemoClicks(t *testing.T, in *instance, token, target string) demoClicks {
	t.Helper()
	v, err := graphson.NewVertex("short_url", graphson.Properties{
		"short_url_token": token, "short_url_path": "https://lnn.example/" + token, "target_url": target,
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 42))
	doc := graphson.Document{Vertices: []graphson.Vertex{v}}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	var d demoClicks
	ips := map[string]bool{}
	for day := 29; day >= 0; day-- {
		n := 4 + (29-day)/2 + rng.IntN(8) // a campaign that picks up
		if day%7 == 3 {
			n /= 3
		}
		for i := range n {
			a := demoAgents[rng.IntN(len(demoAgents)-1)]
			if i == 0 && day%5 == 0 {
				a = demoAgents[len(demoAgents)-1]
			}
			ip := fmt.Sprintf("198.51.100.%d", 1+rng.IntN(120))
			e, err := graphson.NewEdge("short_url_visited", v, v, graphson.Properties{
				"event_identifier":   "ev_" + ulid.Make().String(),
				"visitor_ip_address": ip,
				"user_agent":         a.ua,
				"effective_at":       today.AddDate(0, 0, -day).Add(time.Duration(9*60+rng.IntN(600)) * time.Minute).Format("2006-01-02T15:04:05.000Z"),
			})
			if err != nil {
				t.Fatal(err)
			}
			doc.Edges = append(doc.Edges, e)
			ips[ip] = true
		}
		d.clicks += n
		d.days++
	}
	d.visitors = len(ips)
	body, err := doc.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if status, b := in.postPersist("/persist/ingest", body, in.persistCredentials()); status != http.StatusOK {
		t.Fatalf("ingest the demo clicks: %d %s", status, b)
	}
	return d
}

// writeReadmeShot writes the screenshot to docs/images, re-encoded with the best
// compression when that is smaller, and refuses one over maxShotBytes.
func writeReadmeShot(t *testing.T, shot string) {
	t.Helper()
	raw, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var best bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&best, img); err != nil {
		t.Fatal(err)
	}
	if best.Len() < len(raw) {
		raw = best.Bytes()
	}
	if len(raw) > maxShotBytes {
		t.Fatalf("the screenshot is %d bytes, over %d: not written", len(raw), maxShotBytes)
	}
	if err := os.MkdirAll(filepath.Dir(readmeShot), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readmeShot, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes, %dx%d)", readmeShot, len(raw), img.Bounds().Dx(), img.Bounds().Dy())
}
