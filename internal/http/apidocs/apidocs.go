// Package apidocs renders an OpenAPI document as one self-contained HTML page: every
// operation (grouped by tag, in the document's order) with its parameters, request
// body and responses, the security schemes and every schema. The page has no script
// and loads nothing; its one inline style is allowed by the Content-Security-Policy
// that Render returns with it, so it reads the same offline.
//
// It is rendered in Go rather than by a JavaScript renderer: the management API runs
// in the Issue Lambda, whose zip stays under 5 MB, and Redoc's standalone bundle alone
// is 327 KB compressed, more than the zip had left.
package apidocs

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Page is a rendered reference and the Content-Security-Policy to serve it with.
type Page struct {
	HTML []byte
	CSP  string
}

// Render renders the OpenAPI 3.0 document spec (YAML or JSON).
func Render(spec []byte) (Page, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return Page{}, fmt.Errorf("load openapi document: %w", err)
	}
	r := renderer{doc: doc, raw: string(spec)}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	title := "API reference"
	if doc.Info != nil {
		title = doc.Info.Title + " " + doc.Info.Version + " API reference"
	}
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(title), style)
	ops := r.operations()
	r.header(&b, title)
	r.contents(&b, ops)
	b.WriteString("<main>\n")
	for _, o := range ops {
		r.operation(&b, o)
	}
	r.securitySchemes(&b)
	r.problemTypes(&b)
	r.schemas(&b)
	b.WriteString("</main>\n</body>\n</html>\n")
	sum := sha256.Sum256([]byte(style))
	csp := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return Page{HTML: []byte(b.String()), CSP: csp}, nil
}

// style is the page's only style, allowed by its hash in the CSP. System fonts only.
const style = `body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1f24}` +
	`header,nav,main{max-width:60rem;margin:0 auto;padding:0 1.5rem}` +
	`header{padding-top:1rem}code{font:13px ui-monospace,Menlo,Consolas,monospace;background:#f2f4f7;padding:0 .2em}` +
	`section{border-top:1px solid #d5dae1;padding:.5rem 0 1rem}h3{margin:.6rem 0}h4{margin:.8rem 0 .3rem}` +
	`table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;border:1px solid #d5dae1;padding:.3rem .5rem}` +
	`.method{display:inline-block;min-width:3.5rem;font:bold 13px ui-monospace,monospace;color:#fff;background:#4a5568;border-radius:3px;padding:.1rem .4rem;text-align:center}` +
	`.get,.head{background:#2b6cb0}.post{background:#2f855a}.put,.patch{background:#b7791f}.delete{background:#c53030}` +
	`.meta{color:#4a5568;font-size:13px}pre{background:#f2f4f7;padding:.5rem;overflow-x:auto}pre code{padding:0}`

type operation struct {
	method, path string
	op           *openapi3.Operation
}

type renderer struct {
	doc *openapi3.T
	raw string
}

// position is where key first appears as a map key at indent in the document, so
// that paths and schemas keep the document's order (the loader keeps none).
func (r renderer) position(indent, key string) int {
	if i := strings.Index(r.raw, "\n"+indent+key+":"); i >= 0 {
		return i
	}
	return len(r.raw)
}

var methodOrder = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}

// operations lists every operation by its first tag (in the order of the document's
// tags), then by path as the document orders them, then by method.
func (r renderer) operations() []operation {
	var ops []operation
	for path, item := range r.doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, operation{method: method, path: path, op: op})
		}
	}
	slices.SortFunc(ops, func(a, b operation) int {
		return cmp.Or(cmp.Compare(r.tagIndex(a.op), r.tagIndex(b.op)),
			cmp.Compare(r.position("  ", a.path), r.position("  ", b.path)),
			cmp.Compare(slices.Index(methodOrder, a.method), slices.Index(methodOrder, b.method)))
	})
	return ops
}

func (r renderer) tagIndex(op *openapi3.Operation) int {
	if len(op.Tags) == 0 {
		return len(r.doc.Tags)
	}
	if i := slices.IndexFunc(r.doc.Tags, func(t *openapi3.Tag) bool { return t.Name == op.Tags[0] }); i >= 0 {
		return i
	}
	return len(r.doc.Tags)
}

func (r renderer) header(b *strings.Builder, title string) {
	fmt.Fprintf(b, "<header>\n<h1>%s</h1>\n", esc(title))
	if info := r.doc.Info; info != nil {
		b.WriteString(prose(info.Description))
		var meta []string
		if info.License != nil {
			meta = append(meta, "License: "+link(info.License.URL, info.License.Name))
		}
		if info.Contact != nil {
			meta = append(meta, "Contact: "+link(info.Contact.URL, info.Contact.Name))
		}
		meta = append(meta, `The contract as a file: <a href="openapi.yaml">openapi.yaml</a>`)
		fmt.Fprintf(b, "<p class=\"meta\">%s</p>\n", strings.Join(meta, " · "))
	}
	if len(r.doc.Servers) > 0 {
		b.WriteString("<h2>Servers</h2>\n<ul>\n")
		for _, s := range r.doc.Servers {
			fmt.Fprintf(b, "<li><code>%s</code>%s", esc(s.URL), prose(s.Description))
			names := make([]string, 0, len(s.Variables))
			for name := range s.Variables {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				v := s.Variables[name]
				fmt.Fprintf(b, "<p class=\"meta\"><code>{%s}</code> (default <code>%s</code>): %s</p>", esc(name), esc(v.Default), inline(v.Description))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</header>\n")
}

// contents lists the operations under each tag; an operation with several tags is
// listed under each and described once.
func (r renderer) contents(b *strings.Builder, ops []operation) {
	b.WriteString("<nav>\n<h2>Operations</h2>\n")
	for _, tag := range r.doc.Tags {
		fmt.Fprintf(b, "<h3>%s</h3>\n%s<ul>\n", esc(tag.Name), prose(tag.Description))
		for _, o := range ops {
			if slices.Contains(o.op.Tags, tag.Name) {
				fmt.Fprintf(b, "<li><a href=\"#operation/%s\"><code>%s %s</code></a> %s</li>\n",
					esc(o.op.OperationID), o.method, esc(o.path), esc(o.op.Summary))
			}
		}
		b.WriteString("</ul>\n")
	}
	if names := r.schemaNames(); len(names) > 0 {
		b.WriteString("<h2>Schemas</h2>\n<ul>\n")
		for _, name := range names {
			fmt.Fprintf(b, "<li><a href=\"#schema/%s\"><code>%[1]s</code></a></li>\n", esc(name))
		}
		b.WriteString("</ul>\n")
	}
	if len(r.problems()) > 0 {
		b.WriteString("<p><a href=\"#problem-types\">Problem types</a></p>\n")
	}
	b.WriteString("</nav>\n")
}

func (r renderer) operation(b *strings.Builder, o operation) {
	op := o.op
	fmt.Fprintf(b, "<section class=\"operation\" id=\"operation/%s\" data-operation-id=\"%[1]s\">\n", esc(op.OperationID))
	fmt.Fprintf(b, "<h3><span class=\"method %s\">%s</span> <code>%s</code> %s</h3>\n",
		strings.ToLower(o.method), o.method, esc(o.path), esc(op.Summary))
	fmt.Fprintf(b, "<p class=\"meta\">operationId <code>%s</code> · tags: %s · authorization: %s</p>\n",
		esc(op.OperationID), esc(strings.Join(op.Tags, ", ")), r.authorization(op))
	b.WriteString(prose(op.Description))
	if len(op.Parameters) > 0 {
		b.WriteString("<h4>Parameters</h4>\n<table><tr><th>Name</th><th>In</th><th>Required</th><th>Schema</th><th>Description</th></tr>\n")
		for _, p := range op.Parameters {
			v := p.Value
			fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
				esc(v.Name), esc(v.In), yesNo(v.Required), schema(v.Schema), inline(v.Description)+paramExample(v))
		}
		b.WriteString("</table>\n")
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		fmt.Fprintf(b, "<h4>Request body</h4>\n<p>%s%s</p>\n%s", map[bool]string{true: "Required. ", false: "Optional. "}[rb.Value.Required], content(rb.Value.Content), examples(rb.Value.Content))
	}
	b.WriteString("<h4>Responses</h4>\n<table><tr><th>Status</th><th>Description</th><th>Body</th></tr>\n")
	statuses := make([]string, 0, op.Responses.Len())
	for status := range op.Responses.Map() {
		statuses = append(statuses, status)
	}
	slices.Sort(statuses)
	for _, status := range statuses {
		res := op.Responses.Value(status).Value
		desc := ""
		if res.Description != nil {
			desc = prose(*res.Description)
		}
		for _, name := range sortedKeys(res.Headers) {
			h := res.Headers[name].Value
			desc += fmt.Sprintf("<p class=\"meta\">Header <code>%s</code>: %s</p>", esc(name), inline(h.Description))
		}
		fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%s</td><td>%s%s</td></tr>\n", esc(status), desc, content(res.Content), examples(res.Content))
	}
	b.WriteString("</table>\n</section>\n")
}

// authorization names the security schemes an operation needs, or says it needs none.
func (r renderer) authorization(op *openapi3.Operation) string {
	reqs := op.Security
	if reqs == nil {
		reqs = &r.doc.Security
	}
	var names []string
	for _, req := range *reqs {
		for _, name := range sortedKeys(req) {
			names = append(names, `<a href="#security/`+esc(name)+`"><code>`+esc(name)+`</code></a>`)
		}
	}
	if len(names) == 0 {
		return "none (unsigned requests are served)"
	}
	return strings.Join(names, " or ")
}

func (r renderer) securitySchemes(b *strings.Builder) {
	if r.doc.Components == nil || len(r.doc.Components.SecuritySchemes) == 0 {
		return
	}
	b.WriteString("<h2>Security schemes</h2>\n")
	for _, name := range sortedKeys(r.doc.Components.SecuritySchemes) {
		s := r.doc.Components.SecuritySchemes[name].Value
		kind := "type <code>" + esc(s.Type) + "</code>"
		if s.Type == "apiKey" {
			kind = "API key"
		}
		// API Gateway declares SigV4 as an apiKey scheme marked with this extension.
		if t, ok := s.Extensions["x-amazon-apigateway-authtype"].(string); ok && t == "awsSigv4" {
			kind = "AWS Signature Version 4 (<code>awsSigv4</code>)"
		}
		fmt.Fprintf(b, "<section id=\"security/%s\">\n<h3><code>%[1]s</code></h3>\n<p class=\"meta\">%s", esc(name), kind)
		if s.Name != "" {
			fmt.Fprintf(b, " · %s <code>%s</code>", esc(s.In), esc(s.Name))
		}
		fmt.Fprintf(b, "</p>\n%s</section>\n", prose(s.Description))
	}
}

func (r renderer) schemas(b *strings.Builder) {
	if r.doc.Components == nil || len(r.doc.Components.Schemas) == 0 {
		return
	}
	b.WriteString("<h2>Schemas</h2>\n")
	for _, name := range r.schemaNames() {
		s := r.doc.Components.Schemas[name].Value
		fmt.Fprintf(b, "<section id=\"schema/%s\">\n<h3><code>%[1]s</code></h3>\n%s", esc(name), prose(s.Description))
		if len(s.Properties) == 0 {
			fmt.Fprintf(b, "<p>%s</p>\n", schema(&openapi3.SchemaRef{Value: s}))
		} else {
			b.WriteString("<table><tr><th>Member</th><th>Schema</th><th>Required</th><th>Description</th></tr>\n")
			for _, p := range sortedKeys(s.Properties) {
				ps := s.Properties[p]
				fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
					esc(p), schema(ps), yesNo(slices.Contains(s.Required, p)), prose(ps.Value.Description))
			}
			b.WriteString("</table>\n")
			if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
				b.WriteString("<p class=\"meta\">No other member is accepted.</p>\n")
			}
		}
		if ex := schemaExample(s, 0); ex != nil {
			b.WriteString("<p class=\"meta\">Example:</p>\n" + pre(ex, "application/json"))
		}
		b.WriteString("</section>\n")
	}
}

// schemaNames lists the components' schemas in the document's order.
func (r renderer) schemaNames() []string {
	if r.doc.Components == nil {
		return nil
	}
	names := sortedKeys(r.doc.Components.Schemas)
	slices.SortStableFunc(names, func(x, y string) int {
		return cmp.Compare(r.position("    ", x), r.position("    ", y))
	})
	return names
}

// problemURN matches a problem type named in a description.
var problemURN = regexp.MustCompile("`(urn:linoone:problem:[a-z0-9-]+)`")

type problemType struct {
	urn, response, meaning string
}

// problems lists the problem types the components' responses name in their
// descriptions (the spec documents them there), each with the first response naming
// it; the response's description is its meaning.
func (r renderer) problems() []problemType {
	if r.doc.Components == nil {
		return nil
	}
	var out []problemType
	names := sortedKeys(r.doc.Components.Responses)
	slices.SortStableFunc(names, func(x, y string) int {
		return cmp.Compare(r.position("    ", x), r.position("    ", y))
	})
	for _, name := range names {
		res := r.doc.Components.Responses[name].Value
		if res == nil || res.Description == nil {
			continue
		}
		for _, m := range problemURN.FindAllStringSubmatch(*res.Description, -1) {
			if !slices.ContainsFunc(out, func(p problemType) bool { return p.urn == m[1] }) {
				out = append(out, problemType{urn: m[1], response: name, meaning: *res.Description})
			}
		}
	}
	return out
}

func (r renderer) problemTypes(b *strings.Builder) {
	ps := r.problems()
	if len(ps) == 0 {
		return
	}
	b.WriteString("<section id=\"problem-types\">\n<h2>Problem types</h2>\n")
	b.WriteString("<p>Errors are RFC 9457 problem details (<code>application/problem+json</code>); their <code>type</code> names the broken rule.</p>\n")
	b.WriteString("<table><tr><th>Type</th><th>Response</th><th>Meaning</th></tr>\n")
	for _, p := range ps {
		fmt.Fprintf(b, "<tr><td><code>%s</code></td><td><code>%s</code></td><td>%s</td></tr>\n", esc(p.urn), esc(p.response), prose(p.meaning))
	}
	b.WriteString("</table>\n</section>\n")
}

// examples renders a body's examples per media type: the media type's own example
// or named examples, else the example its schema composes.
func examples(c openapi3.Content) string {
	var b strings.Builder
	for _, name := range sortedKeys(c) {
		mt := c[name]
		switch {
		case mt.Example != nil:
			fmt.Fprintf(&b, "<p class=\"meta\">Example (<code>%s</code>):</p>\n%s", esc(name), pre(mt.Example, name))
		case len(mt.Examples) > 0:
			for _, key := range sortedKeys(mt.Examples) {
				if ex := mt.Examples[key].Value; ex != nil {
					fmt.Fprintf(&b, "<p class=\"meta\">Example <code>%s</code> (<code>%s</code>): %s</p>\n%s", esc(key), esc(name), esc(ex.Summary), pre(ex.Value, name))
				}
			}
		case mt.Schema != nil && mt.Schema.Value != nil:
			if ex := schemaExample(mt.Schema.Value, 0); ex != nil {
				fmt.Fprintf(&b, "<p class=\"meta\">Example (<code>%s</code>):</p>\n%s", esc(name), pre(ex, name))
			}
		}
	}
	return b.String()
}

// schemaExample is a schema's example, or one composed of its members' examples;
// nil when it has none. depth bounds recursive schemas.
func schemaExample(s *openapi3.Schema, depth int) any {
	if s == nil || depth > 8 {
		return nil
	}
	if s.Example != nil {
		return s.Example
	}
	if s.Type.Is("array") && s.Items != nil {
		if ex := schemaExample(s.Items.Value, depth+1); ex != nil {
			return []any{ex}
		}
		return nil
	}
	m := map[string]any{}
	for name, p := range s.Properties {
		if ex := schemaExample(p.Value, depth+1); ex != nil {
			m[name] = ex
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func paramExample(p *openapi3.Parameter) string {
	ex := p.Example
	if ex == nil && p.Schema != nil && p.Schema.Value != nil {
		ex = p.Schema.Value.Example
	}
	if ex == nil {
		return ""
	}
	return "<p class=\"meta\">Example: <code>" + esc(exampleText(ex, "")) + "</code></p>"
}

// pre is an example as an escaped block: a string as it is for a non-JSON media
// type, anything else as indented JSON.
func pre(v any, mediaType string) string {
	return "<pre><code>" + esc(exampleText(v, mediaType)) + "</code></pre>\n"
}

func exampleText(v any, mediaType string) string {
	if s, ok := v.(string); ok && !strings.Contains(mediaType, "json") {
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the page escapes it once, as HTML
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// content lists a body's media types and schemas.
func content(c openapi3.Content) string {
	var parts []string
	for _, mt := range sortedKeys(c) {
		parts = append(parts, "<code>"+esc(mt)+"</code>: "+schema(c[mt].Schema))
	}
	return strings.Join(parts, "<br>")
}

// schema describes a schema in one line: a link to a named schema, or its type and
// constraints.
func schema(s *openapi3.SchemaRef) string {
	if s == nil {
		return ""
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		return `<a href="#schema/` + esc(name) + `"><code>` + esc(name) + `</code></a>`
	}
	v := s.Value
	if v == nil {
		return ""
	}
	t := strings.Join(v.Type.Slice(), " or ")
	if v.Type.Is("array") {
		t = "array of " + schema(v.Items)
	} else {
		t = esc(cmp.Or(t, "any"))
	}
	var c []string
	if v.Format != "" {
		c = append(c, "format <code>"+esc(v.Format)+"</code>")
	}
	if v.Pattern != "" {
		c = append(c, "pattern <code>"+esc(v.Pattern)+"</code>")
	}
	if len(v.Enum) > 0 {
		vals := make([]string, len(v.Enum))
		for i, e := range v.Enum {
			vals[i] = "<code>" + esc(fmt.Sprint(e)) + "</code>"
		}
		c = append(c, "one of "+strings.Join(vals, ", "))
	}
	if v.MinLength > 0 {
		c = append(c, "at least "+strconv.FormatUint(v.MinLength, 10)+" characters")
	}
	if v.MaxLength != nil {
		c = append(c, "at most "+strconv.FormatUint(*v.MaxLength, 10)+" characters")
	}
	if v.Min != nil {
		c = append(c, "minimum "+strconv.FormatFloat(*v.Min, 'g', -1, 64))
	}
	if v.Max != nil {
		c = append(c, "maximum "+strconv.FormatFloat(*v.Max, 'g', -1, 64))
	}
	if len(c) > 0 {
		t += " (" + strings.Join(c, ", ") + ")"
	}
	return t
}

// prose renders a description: paragraphs at blank lines, `code` spans, everything
// else as escaped text (CommonMark's other syntax is not used by our spec).
func prose(s string) string {
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if para = strings.TrimSpace(para); para != "" {
			b.WriteString("<p>" + inline(para) + "</p>\n")
		}
	}
	return b.String()
}

// inline escapes s and turns `code` spans into <code>.
func inline(s string) string {
	parts := strings.Split(strings.Join(strings.Fields(s), " "), "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(esc(p))
		case i == len(parts)-1: // an unpaired backtick stays a backtick
			b.WriteString("`" + esc(p))
		default:
			b.WriteString("<code>" + esc(p) + "</code>")
		}
	}
	return b.String()
}

// link is an anchor to an http(s) URL, or the escaped text alone.
func link(url, text string) string {
	if strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") {
		return `<a href="` + esc(url) + `">` + esc(cmp.Or(text, url)) + `</a>`
	}
	return esc(text)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func esc(s string) string { return html.EscapeString(s) }

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
