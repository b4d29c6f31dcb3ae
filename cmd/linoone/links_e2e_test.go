package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/api/management"
)

// TestInspectAndStatsEndToEnd drives GET /links/{token} and GET /links/{token}/stats
// of a served instance through the generated client, curl --aws-sigv4 and the CLI.
func TestInspectAndStatsEndToEnd(t *testing.T) {
	in := newInstance(t)
	in.start()
	defer in.stop()
	ctx := context.Background()
	c := in.client()
	const target = "https://example.com/inspect?x=1"
	sres, err := c.ShortenWithResponse(ctx, nil, management.ShortenJSONRequestBody{TargetURL: target})
	if err != nil || sres.JSON201 == nil {
		t.Fatalf("shorten: %v %s", err, sres.Body)
	}
	tok := sres.JSON201.Token
	for _, ua := range []string{"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+in.resolver+"/"+tok, nil)
		req.Header.Set("User-Agent", ua)
		res, err := noRedirect.Do(req)
		if err != nil || res.StatusCode != http.StatusFound {
			t.Fatalf("click: %v", err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	in.waitClicks(tok, 2)
	today := time.Now().UTC().Format("2006-01-02")

	// The generated client.
	lres, err := c.GetLinkWithResponse(ctx, tok)
	if err != nil || lres.JSON200 == nil {
		t.Fatalf("GetLink: %v %d %s", err, lres.StatusCode(), lres.Body)
	}
	if l := lres.JSON200; l.Token != tok || l.TargetURL != target || l.ShortURL != sres.JSON201.ShortURL || l.CreatedAt == nil || time.Since(*l.CreatedAt) > time.Minute {
		t.Fatalf("GetLink = %s", lres.Body)
	}
	if res, err := c.GetLinkWithResponse(ctx, "AAAAAAAAAA"); err != nil || res.StatusCode() != http.StatusNotFound {
		t.Fatalf("GetLink unknown: %v %d", err, res.StatusCode())
	}
	from := time.Now().UTC().AddDate(0, 0, -6).Format("2006-01-02")
	stres, err := c.GetLinkStatsWithResponse(ctx, tok, &management.GetLinkStatsParams{From: &from})
	if err != nil || stres.JSON200 == nil {
		t.Fatalf("GetLinkStats: %v %d %s", err, stres.StatusCode(), stres.Body)
	}
	s := stres.JSON200
	if last := s.ByDay[len(s.ByDay)-1]; s.Clicks != 2 || len(s.ByDay) != 7 || last.Date.Format("2006-01-02") != today || last.Clicks != 2 || last.Previews != 1 ||
		s.UniqueVisitors != 1 || last.UniqueVisitors != 1 || s.Breakdown != nil {
		t.Fatalf("GetLinkStats = %s", stres.Body)
	}
	// Issue 41: one visitor (both clicks came from loopback), whose browser, not the
	// preview's, is in the breakdown; the address itself is nowhere in the answer.
	stres, err = c.GetLinkStatsWithResponse(ctx, tok, &management.GetLinkStatsParams{From: &from, Breakdown: &management.Breakdown{"browser", "os", "device"}})
	if err != nil || stres.JSON200 == nil || stres.JSON200.Breakdown == nil || strings.Contains(string(stres.Body), "127.0.0.1") {
		t.Fatalf("GetLinkStats with a breakdown: %v %s", err, stres.Body)
	}
	bd := stres.JSON200.Breakdown
	if d := cmp.Diff([][]management.ClassCount{{{Name: "Firefox", Clicks: 1}}, {{Name: "Linux", Clicks: 1}}, {{Name: "desktop", Clicks: 1}}}, [][]management.ClassCount{*bd.Browser, *bd.Os, *bd.Device}); d != "" {
		t.Fatalf("breakdown (-want +got):\n%s", d)
	}
	bad := "2020-01-01"
	if res, err := c.GetLinkStatsWithResponse(ctx, tok, &management.GetLinkStatsParams{From: &bad}); err != nil || res.StatusCode() != http.StatusBadRequest ||
		!strings.Contains(string(res.Body), "stats-window-too-long") {
		t.Fatalf("GetLinkStats, too long: %v %s", err, res.Body)
	}

	// curl's own SigV4.
	creds := in.credentials()
	for _, path := range []string{"/links/" + tok, "/links/" + tok + "/stats?from=" + from + "&to=" + today} {
		out, err := exec.Command("curl", "-sS", "--fail-with-body", "--aws-sigv4", "aws:amz:us-east-1:execute-api",
			"--user", creds.AccessKeyID+":"+creds.SecretAccessKey, "http://"+in.management+path).CombinedOutput()
		if err != nil || !json.Valid(out) || !strings.Contains(string(out), `"token":"`+tok+`"`) {
			t.Fatalf("curl %s: %v %s", path, err, out)
		}
		for name, user := range map[string][]string{"mis-signed": {"--aws-sigv4", "aws:amz:us-east-1:execute-api", "--user", creds.AccessKeyID + ":wrong-secret"}, "unsigned": nil} {
			args := append([]string{"-sS", "-o", "/dev/null", "-w", "%{http_code}"}, user...)
			out, _ := exec.Command("curl", append(args, "http://"+in.management+path)...).CombinedOutput()
			if string(out) != "403" {
				t.Fatalf("%s curl %s: %s", name, path, out)
			}
		}
	}

	// The CLI, by token and by short URL.
	stdout, stderr, err := in.cli("inspect", sres.JSON201.ShortURL)
	if err != nil || !strings.Contains(stdout, "target_url  "+target) || !strings.Contains(stdout, "created_at  ") {
		t.Fatalf("linoone inspect: %v %q %q", err, stdout, stderr)
	}
	if _, stderr, err := in.cli("inspect", "AAAAAAAAAA"); err == nil || !strings.Contains(stderr, "not-found") {
		t.Fatalf("linoone inspect unknown: %v %q", err, stderr)
	}
	stdout, stderr, err = in.cli("stats", tok, "--from", from)
	if err != nil || !strings.Contains(stdout, today+"       2         1         1  "+strings.Repeat("█", 30)+"\n") || !strings.Contains(stdout, "all time       2") ||
		!strings.Contains(stdout, "  Firefox  1  "+strings.Repeat("█", 30)+"\n") || !strings.Contains(stdout, "  desktop  1") {
		t.Fatalf("linoone stats:\n%s\n%v %q", stdout, err, stderr)
	}
	if _, stderr, err := in.cli("stats", tok, "--from", today, "--to", from); err == nil || !strings.Contains(stderr, "stats-window-order") {
		t.Fatalf("linoone stats out of order: %v %q", err, stderr)
	}
	// Inspecting and reading stats are not visits.
	if n := in.clicks(tok); n != 2 {
		t.Fatalf("clicks after inspect and stats: %d", n)
	}
}
