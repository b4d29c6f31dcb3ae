package mgmtapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

// TestHealthCountsMalformedDenyListLines is issue 44's finding 1: the lines of the
// deny list left out as malformed are counted in /healthz, which names deny-list
// degraded meanwhile.
func TestHealthCountsMalformedDenyListLines(t *testing.T) {
	var h denylist.Holder
	e := newEnv(t, func(d *mgmtapi.ManagementDeps) {
		d.DenyList = func() interface{ Malformed() int } { return h.List() }
	})
	if got, want := e.health(t), `{"deny_list_malformed":0,"status":"ok"}`; got != want {
		t.Errorf("no list: %s, want %s", got, want)
	}
	l, _ := denylist.ParseString("*.ok.example\n.evil.example\nevil..example\n")
	h.Set(l)
	if got, want := e.health(t), `{"degraded":["deny-list"],"deny_list_malformed":2,"status":"degraded"}`; got != want {
		t.Errorf("two malformed lines: %s, want %s", got, want)
	}
}

// TestHeadOnPublicRoutes is issue 44's finding 6: HEAD on /docs, /openapi.yaml and
// /healthz answers as GET, unsigned, without a body (it was 403 and 404).
func TestHeadOnPublicRoutes(t *testing.T) {
	srv := httptest.NewServer(newEnv(t).h)
	t.Cleanup(srv.Close)
	for _, path := range []string{"/docs", "/openapi.yaml", "/healthz"} {
		get, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		getBody, _ := io.ReadAll(get.Body)
		_ = get.Body.Close()
		head, err := http.Head(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		headBody, _ := io.ReadAll(head.Body)
		_ = head.Body.Close()
		if get.StatusCode != http.StatusOK || head.StatusCode != http.StatusOK || len(headBody) != 0 ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("%s: GET %d %s, HEAD %d %s with %d bytes; want HEAD as GET without a body", path,
				get.StatusCode, get.Header.Get("Content-Type"), head.StatusCode, head.Header.Get("Content-Type"), len(headBody))
		}
		if cl := head.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(getBody)) {
			t.Errorf("%s: HEAD Content-Length %s, GET body %d bytes", path, cl, len(getBody))
		}
	}
	// HEAD elsewhere is as before: a signed route still needs a signature.
	if res, err := http.Head(srv.URL + "/links/7BTadEDkJ8"); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned HEAD /links/…: %v %v, want 403", res.StatusCode, err)
	}
}

// TestDecodeErrorsNameTheRealProblem is issue 44's finding 8: a deeply nested, a
// gzip and a UTF-16 body were all told "nothing after it but whitespace".
func TestDecodeErrorsNameTheRealProblem(t *testing.T) {
	e := newEnv(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"target_url":"https://example.com/"}`))
	_ = zw.Close()
	utf16le := func(s string, bom bool) []byte {
		var b []byte
		if bom {
			b = []byte{0xff, 0xfe}
		}
		for _, r := range s {
			b = append(b, byte(r), 0)
		}
		return b
	}
	for name, tc := range map[string]struct {
		body []byte
		want string
	}{
		"nested 10,001 deep": {[]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)), "nests arrays or objects too deeply"},
		"nested in a member": {[]byte(`{"target_url":` + strings.Repeat(`[`, 10001) + strings.Repeat("]", 10001) + "}"), "too deeply"},
		"gzip":               {gz.Bytes(), "gzip-compressed"},
		"UTF-16 with a BOM":  {utf16le(`{"target_url":"https://example.com/"}`, true), "UTF-16"},
		"UTF-16 without":     {utf16le(`{"target_url":"https://example.com/"}`, false), "UTF-16"},
		"UTF-8 BOM":          {[]byte("\ufeff" + `{"target_url":"https://example.com/"}`), "byte order mark"},
		"a bad character":    {[]byte(`{"target_url":'https://example.com/'}`), "not valid JSON: invalid character '\\''"},
		"trailing data":      {[]byte(`{"target_url":"https://example.com/"} x`), "nothing after it but whitespace"},
	} {
		got := e.post(t, "/shorten", tc.body)
		var p httpapi.Problem
		if err := json.Unmarshal(got.body, &p); err != nil || got.status != http.StatusBadRequest ||
			p.Type != httpapi.ProblemTypePrefix+httpapi.CodeInvalidRequest || !strings.Contains(p.Detail, tc.want) {
			t.Errorf("%s: %d %s; want 400 invalid-request saying %q", name, got.status, got.body, tc.want)
		}
	}
}
