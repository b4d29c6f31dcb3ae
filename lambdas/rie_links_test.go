//go:build linux

package lambdas_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
)

// TestListAndQRUnderRIE: issue 41's GET /links and GET /links/{token}/qr answered by
// the issue function under the emulator, the deny list read from SSM: the page with
// each link's verdict and a cursor, a PNG that API Gateway gets base64-encoded and
// that decodes to short_url, the SVG, the ETag's 304, a blocked link's 410 and an
// unknown token's 404.
func TestListAndQRUnderRIE(t *testing.T) {
	rie := riePath(t)
	store := openPersist(t)
	persistURL := serve(t, store.Handler())
	pc, err := persist.New(persist.Config{BaseURL: persistURL})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: pc, ResolverBaseURL: resolverBaseURL, Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	// targetURL's host is blocked by the deny list below; the other is not.
	var links []shorturl.ShortURL
	for _, target := range []string{targetURL, "https://fine.example.org/page"} {
		u, err := iss.Shorten(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, u)
	}
	blocked, fine := links[0], links[1]
	ssm := &fakeSSM{params: map[string]string{denyListParam: "EXAMPLE.com.\n"}}
	home := t.TempDir()
	fn := startRIE(t, rie, "issue (links and qr)", buildBootstraps(t, "issue")["issue"], []string{
		"PATH=/usr/bin:/bin", "HOME=" + home, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=" + accessKeyID, "AWS_SECRET_ACCESS_KEY=" + secretAccessKey, "AWS_SESSION_TOKEN=" + sessionToken,
		"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_LAMBDA_FUNCTION_NAME=linoone-issue", "AWS_LAMBDA_FUNCTION_TIMEOUT=15",
		"LINOONE_ENVIRONMENT=rie-test", "LINOONE_PERSIST_URL=" + persistURL, "LINOONE_RESOLVER_BASE_URL=" + resolverBaseURL,
		"LINOONE_DENYLIST_PARAM=" + denyListParam, "AWS_ENDPOINT_URL_SSM=" + serve(t, ssm),
	})
	// get is the recorded GET /links/{token} event made into route at path?query.
	get := func(route, path, query string, headers ...string) []byte {
		return event(t, "issue", "link.json",
			`"GET /links/{token}"`, `"`+route+`"`,
			`"/links/`+recordedToken+`"`, `"`+path+`"`,
			`"rawQueryString": ""`, `"rawQueryString": "`+query+`"`,
			`"accept": "application/json",`, `"accept": "application/json",`+strings.Join(headers, ""))
	}

	// GET /links: one per page, newest first, the cursor leading to the older one.
	resp := fn.api(t, get("GET /links", "/links", "limit=1"))
	var page struct {
		Items []struct {
			Token, ShortURL, TargetURL string
			Blocked                    bool
			BlockRule                  *struct{ Kind, Rule string } `json:"block_rule"`
		}
		NextCursor *string `json:"next_cursor"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /links: %d %s", resp.StatusCode, resp.Body)
	}
	if err := json.Unmarshal([]byte(resp.Body), &page); err != nil {
		t.Fatalf("GET /links: %v %s", err, resp.Body)
	}
	if len(page.Items) != 1 || page.Items[0].Token != string(fine.Token) || page.Items[0].Blocked || page.NextCursor == nil {
		t.Fatalf("GET /links?limit=1: %s, want %s unblocked and a cursor", resp.Body, fine.Token)
	}
	resp = fn.api(t, get("GET /links", "/links", "limit=1&cursor="+*page.NextCursor))
	page.Items, page.NextCursor = nil, nil
	if err := json.Unmarshal([]byte(resp.Body), &page); err != nil {
		t.Fatalf("GET /links: %v %s", err, resp.Body)
	}
	if resp.StatusCode != http.StatusOK || len(page.Items) != 1 || page.Items[0].Token != string(blocked.Token) || !page.Items[0].Blocked ||
		page.Items[0].BlockRule == nil || page.Items[0].BlockRule.Kind != "host" || page.NextCursor != nil {
		t.Errorf("GET /links, page 2: %d %s, want %s blocked by a host rule and no cursor", resp.StatusCode, resp.Body, blocked.Token)
	}
	checkProblem(t, "GET /links?limit=0", fn.api(t, get("GET /links", "/links", "limit=0")), http.StatusBadRequest, "urn:linoone:problem:invalid-request")

	// GET /links/{token}/qr: the PNG travels base64-encoded and decodes to short_url.
	qr := func(tok shorturl.Token, query string, headers ...string) []byte {
		return get("GET /links/{token}/qr", "/links/"+string(tok)+"/qr", query, headers...)
	}
	resp = fn.binaryAPI(t, qr(fine.Token, "format=png&size=300"))
	if resp.StatusCode != http.StatusOK || !resp.IsBase64Encoded || header(resp, "Content-Type") != "image/png" {
		t.Fatalf("GET qr png: %d base64 %v %q", resp.StatusCode, resp.IsBase64Encoded, header(resp, "Content-Type"))
	}
	img, err := base64.StdEncoding.DecodeString(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := qrdecode.PNG(img); err != nil || got != fine.Path {
		t.Errorf("PNG decodes to %q (%v), want %q", got, err, fine.Path)
	}
	etag := header(resp, "ETag")
	resp = fn.api(t, qr(fine.Token, "format=png&size=300", `"if-none-match": "`+strings.ReplaceAll(etag, `"`, `\"`)+`",`))
	if etag == "" || resp.StatusCode != http.StatusNotModified || resp.Body != "" {
		t.Errorf("If-None-Match %s: %d %q", etag, resp.StatusCode, resp.Body)
	}
	resp = fn.api(t, qr(fine.Token, ""))
	if got, err := qrdecode.SVG([]byte(resp.Body)); resp.StatusCode != http.StatusOK || resp.IsBase64Encoded || err != nil || got != fine.Path {
		t.Errorf("GET qr svg: %d base64 %v, decodes to %q (%v)", resp.StatusCode, resp.IsBase64Encoded, got, err)
	}
	checkProblem(t, "qr of a blocked link", fn.api(t, qr(blocked.Token, "")), http.StatusGone, "urn:linoone:problem:link-blocked")
	checkProblem(t, "qr of an unknown token", fn.api(t, qr("AAAAAAAAAA", "")), http.StatusNotFound, "urn:linoone:problem:not-found")
}

// binaryAPI is api for a route whose body may be binary, which API Gateway expects
// base64-encoded.
func (e *emulator) binaryAPI(t *testing.T, event []byte) events.APIGatewayV2HTTPResponse {
	t.Helper()
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(e.invoke(t, event), &resp); err != nil {
		t.Fatalf("%s: decode API Gateway response: %v", e.name, err)
	}
	return resp
}
