package apidocs_test

import (
	"crypto/sha256"
	"encoding/base64"
	stdhtml "html"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/linoone/linoone"
	"github.com/linoone/linoone/internal/http/apidocs"
)

// TestEveryOperationRendered: the reference of openapi.yaml has one section per
// operation, with its summary, and every schema.
func TestEveryOperationRendered(t *testing.T) {
	page, err := apidocs.Render([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page.HTML)
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			n++
			section := `id="operation/` + op.OperationID + `"`
			if strings.Count(html, section) != 1 {
				t.Errorf("%s %s: want one section %s", method, path, section)
			}
			if !strings.Contains(html, stdhtml.EscapeString(op.Summary)) {
				t.Errorf("%s %s: summary %q missing", method, path, op.Summary)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d operations in openapi.yaml", n)
	}
	for name := range doc.Components.Schemas {
		if !strings.Contains(html, `id="schema/`+name+`"`) {
			t.Errorf("schema %s missing", name)
		}
	}
	// Every in-page link has a target.
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(html, -1) {
		if !strings.Contains(html, `id="`+m[1]+`"`) {
			t.Errorf("link #%s has no target", m[1])
		}
	}
}

// TestPageLoadsNothing: no script, no element that loads a resource, and a CSP that
// allows the inline style and nothing else.
func TestPageLoadsNothing(t *testing.T) {
	page, err := apidocs.Render([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page.HTML)
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url(", "<iframe", "<img"} {
		if strings.Contains(html, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(html)
	if style == nil {
		t.Fatal("no style")
	}
	sum := sha256.Sum256([]byte(style[1]))
	want := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.HasPrefix(page.CSP, want) {
		t.Errorf("CSP %q, want prefix %q", page.CSP, want)
	}
}

// TestDescriptionsAreEscaped: a description is text: markup in it is shown, never
// interpreted, and `code` spans become <code>.
func TestDescriptionsAreEscaped(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: T, version: '1', description: "Use <script>alert(1)</script> and ` + "`a<b`" + `"}
paths:
  /x:
    get:
      operationId: getX
      summary: "<b>bold</b>"
      responses:
        '200': {description: ok}
`
	page, err := apidocs.Render([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page.HTML)
	for _, want := range []string{"Use &lt;script&gt;alert(1)&lt;/script&gt; and <code>a&lt;b</code>", "&lt;b&gt;bold&lt;/b&gt;", `id="operation/getX"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "<b>") {
		t.Error("markup from the spec reached the page unescaped")
	}
}

func TestRenderRefusesAnInvalidDocument(t *testing.T) {
	if _, err := apidocs.Render([]byte("openapi: [")); err == nil {
		t.Fatal("want an error")
	}
}
