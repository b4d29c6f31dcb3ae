package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pages for people: a browser that opens an unknown, malformed or taken-down short
// URL reads a sentence instead of a problem document. Presentation only, on the
// 404 and 410 path: the redirect never asks for it.

// pageStyle is the pages' only style, allowed by its hash in pageCSP.
const pageStyle = `body{font:17px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:34rem;margin:12vh auto;padding:0 1.5rem;color:#1b1f24}` +
	`h1{font-size:1.5rem;margin:0 0 .5rem}code{font:15px ui-monospace,Menlo,Consolas,monospace;background:#f2f4f7;padding:0 .2em;word-break:break-all}`

// pageCSP allows nothing but the inline style: no script, no image, no font, no
// form, no frame, from anywhere.
var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

// maxEchoedPath bounds how much of the request path a page shows back.
const maxEchoedPath = 64

// writeResolverProblem answers a problem of the resolver: for a 404 or a 410, a
// page when the request prefers HTML, and in either form Vary: Accept, since the
// answer depends on it.
func writeResolverProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	if p.Status != http.StatusNotFound && p.Status != http.StatusGone {
		WriteProblem(w, p)
		return
	}
	w.Header().Set("Vary", "Accept")
	if !PrefersHTML(r.Header.Values("Accept")) {
		WriteProblem(w, p)
		return
	}
	writePage(w, p.Status, r.URL.Path)
}

func writePage(w http.ResponseWriter, status int, path string) {
	title, say := "Link not found", "There is no short link at this address. Check that the whole link was copied: a short link ends in ten letters and digits."
	if status == http.StatusGone {
		title, say = "Link taken down", "This short link was taken down by the people who run this service, because of where it led. It no longer goes anywhere."
	}
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<title>" + title + "</title>\n<style>" + pageStyle + "</style>\n</head>\n<body>\n<main>\n")
	b.WriteString("<h1>" + title + "</h1>\n<p>" + say + "</p>\n")
	b.WriteString("<p>You asked for <code>" + html.EscapeString(echo(path)) + "</code>.</p>\n")
	b.WriteString("</main>\n</body>\n</html>\n")
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store") // as a problem: a lifted rule must turn a 410 back into a 302
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// echo is the path as the page shows it: at most maxEchoedPath bytes, cut on a
// rune boundary, invalid UTF-8 replaced. The caller escapes it.
func echo(path string) string {
	path = strings.ToValidUTF8(path, "\uFFFD")
	if len(path) <= maxEchoedPath {
		return path
	}
	cut := maxEchoedPath
	for cut > 0 && !utf8.RuneStart(path[cut]) {
		cut--
	}
	return path[:cut] + "…"
}

// PrefersHTML reports whether Accept header values rank text/html (or
// application/xhtml+xml) above JSON, as a browser's navigation does. Only a type
// named outright counts: */* alone, an absent Accept and application/json get JSON,
// and so does a tie.
func PrefersHTML(accept []string) bool {
	var htmlQ, jsonQ float64
	for _, v := range accept {
		for _, part := range strings.Split(v, ",") {
			typ, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			switch typ {
			case "text/html", "application/xhtml+xml":
				htmlQ = max(htmlQ, q)
			case "application/json", "application/problem+json", "application/*":
				jsonQ = max(jsonQ, q)
			}
		}
	}
	return htmlQ > 0 && htmlQ > jsonQ
}
