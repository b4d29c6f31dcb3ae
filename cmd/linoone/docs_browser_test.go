package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/linoone/linoone"
	"github.com/linoone/linoone/internal/testutil/testlayer"
)

// chromiumPath is Debian's Chromium, the only browser the machines can install
// (playwright's own browser downloads are refused).
const chromiumPath = "/usr/bin/chromium"

// TestDocsInBrowser opens the management API's /docs of a real `linoone serve` in
// headless Chromium (testdata/docs_browser.mjs, playwright-core): every operation of
// openapi.yaml must be on the page with its operationId and summary, no request may
// leave the local host, the console must stay clean (a CSP violation is an error),
// and a full-page screenshot is saved as a test artifact: docs.png in
// $LINOONE_TEST_ARTIFACTS, or in test-artifacts/ at the repository root.
func TestDocsInBrowser(t *testing.T) {
	node, dir := needBrowser(t)
	ops := specOperations(t)
	opsJSON, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	shot, err := filepath.Abs(filepath.Join(dir, "docs.png"))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(shot) // never mistake an old screenshot for this run's

	in := newInstance(t)
	in.start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "docs_browser.mjs"), "http://"+in.management+"/docs", string(opsJSON), shot)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docs in the browser: %v\nreport: %s\nstderr: %s", err, out, stderr.String())
	}
	var report struct {
		Requests []string `json:"requests"`
		Title    string   `json:"title"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
	t.Logf("%q shows all %d operations; requests: %v", report.Title, len(ops), report.Requests)
	t.Logf("screenshot of /docs: %s", shot)
}

// needBrowser skips a browser test outside its layer and fails it when Chromium,
// Node.js or playwright-core is missing. It returns node's path and the directory
// for screenshots: $LINOONE_TEST_ARTIFACTS, or test-artifacts/ at the repository root.
func needBrowser(t *testing.T) (node, artifacts string) {
	t.Helper()
	testlayer.Skip(t, testlayer.Browser)
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser tests need headless Chromium at %s (Debian package chromium): "+
			"install it with `apt-get update && apt-get install -y chromium` (.ci/run does when it is missing): %v", chromiumPath, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the browser tests need Node.js 20 or later (README prerequisites): %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("the browser tests need the pinned playwright-core: run scripts/install-npm-tools.sh (make tools does): %v", err)
	}
	artifacts = os.Getenv("LINOONE_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(root, "test-artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	return node, artifacts
}

type specOperation struct {
	OperationID string `json:"operationId"`
	Summary     string `json:"summary"`
}

// specOperations are the operations of the embedded openapi.yaml, the one /docs renders.
func specOperations(t *testing.T) []specOperation {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	var ops []specOperation
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID == "" || op.Summary == "" {
				t.Fatalf("every operation needs an operationId and a summary: %+v", op)
			}
			ops = append(ops, specOperation{OperationID: op.OperationID, Summary: op.Summary})
		}
	}
	slices.SortFunc(ops, func(a, b specOperation) int { return strings.Compare(a.OperationID, b.OperationID) })
	if len(ops) < 6 {
		t.Fatalf("openapi.yaml has %d operations, fewer than it did when this test was written", len(ops))
	}
	return ops
}
