package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
)

// TestResolverPagesInBrowser: issue 41 item 4 through a real `linoone serve`. An
// unknown, a malformed and a taken-down short URL opened in headless Chromium
// (testdata/pages_browser.mjs) show a page with the same status, no script, nothing
// loaded besides the page and a clean console; an API client asking the same URLs
// keeps application/problem+json. Screenshots go where TestDocsInBrowser's does.
func TestResolverPagesInBrowser(t *testing.T) {
	node, dir := needBrowser(t)
	in := newInstance(t)
	in.start()
	defer in.stop()
	ctx := context.Background()
	res, err := in.client().ShortenWithResponse(ctx, nil, management.ShortenJSONRequestBody{TargetURL: "https://login.evil.example/x"})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("shorten: %v %d %s", err, res.StatusCode(), res.Body)
	}
	gone := res.JSON201.Token
	start := time.Now()
	if out, errOut, err := in.cli("block", "*.evil.example"); err != nil {
		t.Fatalf("block: %v\n%s%s", err, out, errOut)
	}
	waitStatus(t, in, gone, http.StatusGone, start)

	base := "http://" + in.resolver + "/"
	type pageCase struct {
		Name   string `json:"name"`
		URL    string `json:"url"`
		Status int    `json:"status"`
		Title  string `json:"title"`
	}
	cases := []pageCase{
		{"unknown", base + "AAAAAAAAAA", http.StatusNotFound, "Link not found"},
		{"malformed", base + "abc", http.StatusNotFound, "Link not found"},
		{"markup", base + "%3Cscript%3Ealert(1)%3C/script%3E", http.StatusNotFound, "Link not found"},
		{"taken-down", base + gone, http.StatusGone, "Link taken down"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, c.URL, nil)
		req.Header.Set("Accept", "application/json")
		r, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != c.Status || r.Header.Get("Content-Type") != "application/problem+json" || !json.Valid(body) {
			t.Fatalf("%s as an API client: %d %q %s", c.Name, r.StatusCode, r.Header.Get("Content-Type"), body)
		}
	}
	casesJSON, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	shots, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	bctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(bctx, node, filepath.Join("testdata", "pages_browser.mjs"), string(casesJSON), shots)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pages in the browser: %v\nreport: %s\nstderr: %s", err, out, stderr.String())
	}
	t.Logf("Chromium showed %d pages with no console error; screenshots page-*.png in %s", len(cases), shots)
}
