package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// persistCredentials reads local Persist's pair from the file serve wrote.
func (in *instance) persistCredentials() sigv4.Credentials {
	in.t.Helper()
	return in.readCredentials(sigv4.PersistCredentialsFile)
}

// postPersist posts body to local Persist's path, signed with creds unless they are
// empty, and returns the status and body.
func (in *instance) postPersist(path string, body []byte, creds sigv4.Credentials) (int, []byte) {
	in.t.Helper()
	var rt http.RoundTripper = http.DefaultTransport
	if creds != (sigv4.Credentials{}) {
		rt = creds.Transport(nil, "us-east-1", "execute-api")
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+in.persist+path, bytes.NewReader(body))
	if err != nil {
		in.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 10 * time.Second, Transport: rt}).Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestLocalPersistRequiresSignature is issue 9's reproduction through the real serve:
// a rogue short_url vertex (EvilEvil01 → javascript:) ingested without, or with a
// wrong, signature is refused and never redirects; the graph's visitor data cannot be
// read unsigned; serve itself, and `linoone consume`, sign with the pair in
// persist-credentials.json (0600), whose secret is never logged.
func TestLocalPersistRequiresSignature(t *testing.T) {
	in := newInstance(t, "LINOONE_CONSUMER=external")
	in.start()
	pcreds := in.persistCredentials()
	if fi, err := os.Stat(filepath.Join(in.dataDir, sigv4.PersistCredentialsFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, mode %v; want 0600", sigv4.PersistCredentialsFile, err, fi.Mode().Perm())
	}
	if mgmt := in.credentials(); mgmt.AccessKeyID == pcreds.AccessKeyID || mgmt.SecretAccessKey == pcreds.SecretAccessKey {
		t.Fatal("local Persist shares the management API's pair")
	}

	rogue := rogueDocument(t)
	wrong := sigv4.Credentials{AccessKeyID: pcreds.AccessKeyID, SecretAccessKey: "not-the-secret"}
	for name, creds := range map[string]sigv4.Credentials{"unsigned": {}, "wrong secret": wrong, "management pair": in.credentials()} {
		if status, body := in.postPersist("/persist/ingest", rogue, creds); status != http.StatusForbidden || !strings.HasPrefix(string(body), `{"error":`) {
			t.Errorf("%s ingest: %d %s; want 403 {\"error\": …}", name, status, body)
		}
	}
	if r := in.resolve("EvilEvil01"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /EvilEvil01 after refused ingests: %d Location %q; want 404", r.StatusCode, r.Header.Get("Location"))
	}
	gremlin := []byte(`{"gremlin":"g.V().hasLabel('short_url').outE('short_url_visited').count()"}`)
	if status, body := in.postPersist("/persist/gremlin", gremlin, sigv4.Credentials{}); status != http.StatusForbidden {
		t.Errorf("unsigned gremlin: %d %s; want 403", status, body)
	}
	if status, body := in.postPersist("/persist/gremlin", gremlin, pcreds); status != http.StatusOK {
		t.Errorf("signed gremlin: %d %s; want 200", status, body)
	}

	// serve's own client signs: issue, resolve, and — LINOONE_CONSUMER=external —
	// `linoone consume --drain` delivers the click with the same pair.
	res, err := in.client().ShortenWithResponse(context.Background(), nil, management.ShortenJSONRequestBody{TargetURL: "https://example.com/signed"})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("shorten: %v %d %s", err, res.StatusCode(), res.Body)
	}
	if r := in.resolve(res.JSON201.Token); r.StatusCode != http.StatusFound {
		t.Fatalf("resolve: %d", r.StatusCode)
	}
	if out, errOut, err := in.cli("consume", "--drain"); err != nil || !strings.Contains(out, "delivered 1,") {
		t.Fatalf("consume --drain: %v: %s%s", err, out, errOut)
	}
	if n := in.clicks(res.JSON201.Token); n != 1 {
		t.Errorf("clicks %d, want 1", n)
	}
	if strings.Contains(in.logs.String(), pcreds.SecretAccessKey) {
		t.Error("serve logged local Persist's secret")
	}
	if !strings.Contains(in.logs.String(), sigv4.PersistCredentialsFile) {
		t.Error("serve does not log where local Persist's pair is")
	}
}

// TestConsumeNeedsThePair: consume never invents a pair serve's Persist would refuse.
func TestConsumeNeedsThePair(t *testing.T) {
	in := newInstance(t)
	_, errOut, err := in.cli("consume", "--drain")
	if err == nil || !strings.Contains(errOut, sigv4.EnvPersistAccessKeyID) {
		t.Fatalf("consume without a pair: %v: %s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(in.dataDir, sigv4.PersistCredentialsFile)); err == nil {
		t.Error("consume created a pair")
	}
}

// rogueDocument is a short_url vertex nobody issued, with a javascript: target.
func rogueDocument(t *testing.T) []byte {
	t.Helper()
	v, err := graphson.NewVertex("short_url", graphson.Properties{
		"short_url_token": "EvilEvil01",
		"short_url_path":  "http://127.0.0.1:8080/EvilEvil01",
		"target_url":      "javascript:alert(document.cookie)",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(graphson.Document{Vertices: []graphson.Vertex{v}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
