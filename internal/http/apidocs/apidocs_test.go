package apidocs_test

import (
	"crypto/sha256"
	"encoding/base64"
	stdhtml "html"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

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

// exampleLeaves collects the scalar values under every `example` and `examples` key
// of the YAML document node n.
func exampleLeaves(n *yaml.Node, under bool, out *[]string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if under {
			*out = append(*out, n.Value)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			// A named example's summary is prose, not a value.
			exampleLeaves(n.Content[i+1], (under && k != "summary") || k == "example" || k == "examples", out)
		}
	default:
		for _, c := range n.Content {
			exampleLeaves(c, under, out)
		}
	}
}

// TestEveryExampleShown: each example value of openapi.yaml (of parameters, bodies
// and schemas) is on the page, escaped, and operations show body examples.
func TestEveryExampleShown(t *testing.T) {
	page, err := apidocs.Render([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page.HTML)
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(linoone.OpenAPI), &root); err != nil {
		t.Fatal(err)
	}
	var leaves []string
	exampleLeaves(&root, false, &leaves)
	if len(leaves) < 10 {
		t.Fatalf("only %d example values in openapi.yaml", len(leaves))
	}
	for _, v := range leaves {
		if !strings.Contains(html, stdhtml.EscapeString(v)) {
			t.Errorf("example %q not on the page", v)
		}
	}
	// The ErrorPage example is HTML: shown as text, never as markup.
	if strings.Contains(html, "<title>Link not found") {
		t.Error("an example reached the page unescaped")
	}
	// The shorten operation shows its request body's example in a code block.
	section := regexp.MustCompile(`(?s)id="operation/shorten".*?</section>`).FindString(html)
	if !strings.Contains(section, `<pre><code>{`) || !strings.Contains(section, "&#34;target_url&#34;: &#34;https://example.com/landing?message_id=msg_123&#34;") {
		t.Errorf("shorten shows no JSON body example:\n%s", section)
	}
}

// TestNavLinksOperationsAndSchemas: the navigation links every operation and every
// schema to a section of the page.
func TestNavLinksOperationsAndSchemas(t *testing.T) {
	page, err := apidocs.Render([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page.HTML)
	nav := regexp.MustCompile(`(?s)<nav>.*?</nav>`).FindString(html)
	var ids []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ids = append(ids, "operation/"+op.OperationID)
		}
	}
	for name := range doc.Components.Schemas {
		ids = append(ids, "schema/"+name)
	}
	ids = append(ids, "problem-types")
	for _, id := range ids {
		if !strings.Contains(nav, `href="#`+id+`"`) {
			t.Errorf("nav does not link #%s", id)
		}
		if strings.Count(html, `id="`+id+`"`) != 1 {
			t.Errorf("want exactly one element id=%q", id)
		}
	}
}

// TestProblemTypesTable: the problem types the spec names are listed with the
// response that carries them and its meaning.
func TestProblemTypesTable(t *testing.T) {
	page, err := apidocs.Render([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)<section id="problem-types">.*?</section>`).FindString(string(page.HTML))
	for _, want := range []string{
		"<tr><td><code>urn:linoone:problem:link-blocked</code></td><td><code>LinkBlocked</code></td><td><p>Gone.",
		"<tr><td><code>urn:linoone:problem:stats-window-too-long</code></td><td><code>BadWindow</code></td>",
		"<tr><td><code>urn:linoone:problem:idempotency-key-reused</code></td><td><code>IssuanceRefused</code></td>",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("problem types table lacks %q:\n%s", want, table)
		}
	}
}

// TestSigV4Scheme: an apiKey scheme marked x-amazon-apigateway-authtype: awsSigv4
// reads as AWS Signature Version 4, another apiKey scheme as an API key.
func TestSigV4Scheme(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: T, version: '1'}
paths: {}
components:
  securitySchemes:
    sigv4: {type: apiKey, name: Authorization, in: header, x-amazon-apigateway-authtype: awsSigv4}
    key: {type: apiKey, name: X-Key, in: header}
`
	page, err := apidocs.Render([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page.HTML)
	sig := regexp.MustCompile(`(?s)<section id="security/sigv4">.*?</section>`).FindString(html)
	if !strings.Contains(sig, "AWS Signature Version 4 (<code>awsSigv4</code>)") || strings.Contains(sig, "API key") {
		t.Errorf("sigv4 scheme rendered as:\n%s", sig)
	}
	key := regexp.MustCompile(`(?s)<section id="security/key">.*?</section>`).FindString(html)
	if !strings.Contains(key, "API key") || strings.Contains(key, "Signature") {
		t.Errorf("apiKey scheme rendered as:\n%s", key)
	}
	real, err := apidocs.Render([]byte(linoone.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(real.HTML), "AWS Signature Version 4 (<code>awsSigv4</code>)") {
		t.Error("openapi.yaml's sigv4 scheme does not read as AWS Signature Version 4")
	}
}
