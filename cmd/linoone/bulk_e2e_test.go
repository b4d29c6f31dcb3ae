package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// TestIdempotentAndBatchEndToEnd: issue 10 items 2 and 3 against `linoone serve`,
// through the generated client, curl --aws-sigv4 and the CLI.
func TestIdempotentAndBatchEndToEnd(t *testing.T) {
	in := newInstance(t)
	in.start()
	c := in.client()
	ctx := context.Background()
	key := "order-4711"

	// Generated client: Idempotency-Key on POST /shorten.
	first, err := c.ShortenWithResponse(ctx, &management.ShortenParams{IdempotencyKey: &key}, management.ShortenJSONRequestBody{TargetURL: "https://example.com/idem"})
	if err != nil || first.JSON201 == nil {
		t.Fatalf("first: %v %d %s", err, first.StatusCode(), first.Body)
	}
	if want := shorturl.DeriveToken(dataDirSecret(t, in), in.credentials().AccessKeyID, key); first.JSON201.Token != string(want) {
		t.Errorf("token %s, want %s derived from the data dir's secret and the access key id", first.JSON201.Token, want)
	}
	again, err := c.ShortenWithResponse(ctx, &management.ShortenParams{IdempotencyKey: &key}, management.ShortenJSONRequestBody{TargetURL: "https://example.com/idem"})
	if err != nil || again.JSON200 == nil || *again.JSON200 != *first.JSON201 || again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %v %d %s", err, again.StatusCode(), again.Body)
	}
	// The secret survives a restart: a retry after it still finds its short URL.
	in.stop()
	in.start()
	c = in.client()
	again, err = c.ShortenWithResponse(ctx, &management.ShortenParams{IdempotencyKey: &key}, management.ShortenJSONRequestBody{TargetURL: "https://example.com/idem"})
	if err != nil || again.JSON200 == nil || *again.JSON200 != *first.JSON201 {
		t.Fatalf("retry after a restart: %v %d %s", err, again.StatusCode(), again.Body)
	}
	reused, err := c.ShortenWithResponse(ctx, &management.ShortenParams{IdempotencyKey: &key}, management.ShortenJSONRequestBody{TargetURL: "https://example.com/other"})
	if err != nil || reused.ApplicationProblemJSON422 == nil || reused.ApplicationProblemJSON422.Type != "urn:linoone:problem:idempotency-key-reused" {
		t.Fatalf("reused key: %v %d %s", err, reused.StatusCode(), reused.Body)
	}

	// Generated client: POST /shorten/batch.
	u0, bad := "https://example.com/batch/0", "javascript:alert(1)"
	batch, err := c.ShortenBatchWithResponse(ctx, nil, management.ShortenBatchJSONRequestBody{Items: []management.BatchItem{{TargetURL: &u0}, {TargetURL: &bad}}})
	if err != nil || batch.JSON200 == nil || len(batch.JSON200.Results) != 2 {
		t.Fatalf("batch: %v %d %s", err, batch.StatusCode(), batch.Body)
	}
	if r := batch.JSON200.Results; r[0].Token == nil || r[1].Problem == nil || r[1].Problem.Type != "urn:linoone:problem:target-url-scheme" {
		t.Fatalf("batch results %s", batch.Body)
	}
	if r := in.resolve(*batch.JSON200.Results[0].Token); r.StatusCode != http.StatusFound || r.Header.Get("Location") != u0 {
		t.Fatalf("batch item does not resolve: %d %q", r.StatusCode, r.Header.Get("Location"))
	}

	// curl --aws-sigv4: the batch with an Idempotency-Key, twice; the header is signed too.
	creds := in.credentials()
	curl := func(secret string, args ...string) (string, string) {
		out, err := exec.Command("curl", append([]string{"-sS", "-w", "\n%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:execute-api",
			"--user", creds.AccessKeyID + ":" + secret, "-H", "Content-Type: application/json"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v %s", err, out)
		}
		s := string(out)
		i := strings.LastIndexByte(s, '\n')
		return s[:i], s[i+1:]
	}
	body := `{"items":[{"target_url":"https://example.org/curl/0"},{"target_url":"https://example.org/curl/1","extra":1}]}`
	var viaCurl [2]management.BatchResponse
	for i := range viaCurl {
		out, code := curl(creds.SecretAccessKey, "-H", "Idempotency-Key: curl-batch", "-d", body, "http://"+in.management+"/shorten/batch")
		if code != "200" || json.Unmarshal([]byte(out), &viaCurl[i]) != nil {
			t.Fatalf("curl batch %d: %s %s", i, code, out)
		}
	}
	r0, r1 := viaCurl[0].Results, viaCurl[1].Results
	if r0[0].Token == nil || r1[0].Token == nil || *r0[0].Token != *r1[0].Token || r1[0].Replayed == nil || !*r1[0].Replayed ||
		r0[1].Problem == nil || r0[1].Problem.Type != "urn:linoone:problem:unknown-field" {
		t.Fatalf("curl batches: %+v / %+v", r0, r1)
	}
	// Unsigned and mis-signed: 403, nothing written.
	if out, code := curl("wrong-secret", "-H", "Idempotency-Key: evil", "-d", `{"items":[{"target_url":"https://evil.example/"}]}`,
		"http://"+in.management+"/shorten/batch"); code != "403" {
		t.Fatalf("mis-signed batch: %s %s", code, out)
	}
	out, err := exec.Command("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json",
		"-d", `{"items":[{"target_url":"https://evil.example/"}]}`, "http://"+in.management+"/shorten/batch").CombinedOutput()
	if string(out) != "403" {
		t.Fatalf("unsigned batch: %s %v", out, err)
	}
	evil := shorturl.DeriveToken(dataDirSecret(t, in), creds.AccessKeyID, "evil#0")
	if r := in.resolve(string(evil)); r.StatusCode != http.StatusNotFound {
		t.Errorf("a refused batch wrote its item: %d", r.StatusCode)
	}

	// The CLI with --idempotency-key.
	one, stderr, err := in.cli("shorten", "--idempotency-key", key, "https://example.com/idem")
	if err != nil || strings.TrimSpace(one) != first.JSON201.ShortURL {
		t.Fatalf("linoone shorten --idempotency-key: %v %q %q", err, one, stderr)
	}
}

// TestBulkImport: issue 10 item 4. A CSV with a target_url column and a bad line:
// CSV out in input order, the failure on stderr with its problem, exit 1; running it
// again mints nothing twice, whether the first run finished or was cut short.
func TestBulkImport(t *testing.T) {
	in := newInstance(t)
	in.start()
	dir := t.TempDir()
	var csvIn strings.Builder
	csvIn.WriteString("name,target_url,note\n")
	const n = 2500 // three batches
	for i := range n {
		target := fmt.Sprintf("https://example.com/bulk/%d?q=a,b", i)
		if i == 1234 {
			target = "ftp://example.com/bad"
		}
		fmt.Fprintf(&csvIn, "n%d,%q,x\n", i, target)
	}
	file := filepath.Join(dir, "links.csv")
	if err := os.WriteFile(file, []byte(csvIn.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := in.cli("shorten", "--file", file)
	if err == nil || !strings.Contains(stderr, "line 1236: ftp://example.com/bad:") || !strings.Contains(stderr, "urn:linoone:problem:target-url-scheme") ||
		!strings.Contains(stderr, "1 of 2500 lines failed") || !strings.Contains(stderr, "in a new file") || strings.Contains(stderr, "run the same file again") {
		t.Fatalf("first import: err %v, stderr %q", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != n || lines[0] != "target_url,short_url" || !strings.HasPrefix(lines[1], `"https://example.com/bulk/0?q=a,b",http://`+in.resolver+"/") ||
		!strings.HasPrefix(lines[n-1], `"https://example.com/bulk/2499?q=a,b",`) {
		t.Fatalf("first import: %d lines: %q … %q", len(lines), lines[:2], lines[len(lines)-1])
	}

	// Again, as JSON lines: every line replayed, the same short URLs.
	stdout, _, _ = in.cli("shorten", "--file", file, "--json", "--concurrency", "2")
	sc := bufio.NewScanner(strings.NewReader(stdout))
	i := 1
	for ; sc.Scan(); i++ {
		var rec struct {
			Line      int    `json:"line"`
			TargetURL string `json:"target_url"`
			ShortURL  string `json:"short_url"`
			Replayed  bool   `json:"replayed"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || !rec.Replayed || !strings.HasSuffix(lines[i], ","+rec.ShortURL) {
			t.Fatalf("second import, record %d: %s (first run: %s)", i, sc.Bytes(), lines[i])
		}
	}
	if i != n {
		t.Errorf("second import: %d records, want %d", i-1, n-1)
	}

	// An interrupted import: a run sent the first batch of a file (as the CLI keys
	// it: the content's hash and the batch's first line) and died. Running the file
	// then replays those 1,000 lines and issues the other 500.
	var urls strings.Builder
	items := make([]management.BatchItem, 1000)
	for i := range 1500 {
		u := fmt.Sprintf("https://example.org/p/%d", i)
		fmt.Fprintln(&urls, u)
		if i < 1000 {
			items[i].TargetURL = &u
		}
	}
	sum := sha256.Sum256([]byte(urls.String()))
	batchKey := "linoone-file:" + hex.EncodeToString(sum[:16]) + ":1"
	res, err := in.client().ShortenBatchWithResponse(context.Background(), &management.ShortenBatchParams{IdempotencyKey: &batchKey},
		management.ShortenBatchJSONRequestBody{Items: items})
	if err != nil || res.JSON200 == nil {
		t.Fatalf("the interrupted run's batch: %v %s", err, res.Body)
	}
	cmd := exec.Command(binary, "shorten", "--file", "-", "--json")
	cmd.Env = in.env
	cmd.Stdin = strings.NewReader(urls.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stdin import: %v", err)
	}
	if got := strings.Count(string(out), `"replayed":true`); got != 1000 {
		t.Errorf("re-run after an interruption replayed %d lines, want the 1,000 sent before", got)
	}
	first := strings.SplitN(string(out), "\n", 2)[0]
	if !strings.Contains(first, *res.JSON200.Results[0].Token) {
		t.Errorf("line 1 got %s, the interrupted run %s", first, *res.JSON200.Results[0].Token)
	}
}

// dataDirSecret reads the idempotency secret serve keeps in the data directory.
func dataDirSecret(t *testing.T, in *instance) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(in.dataDir, datadir.IdempotencySecretFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(in.dataDir, datadir.IdempotencySecretFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("idempotency secret file mode: %v %v", fi.Mode(), err)
	}
	return []byte(strings.TrimSpace(string(b)))
}
