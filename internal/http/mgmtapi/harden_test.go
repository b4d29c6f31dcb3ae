package mgmtapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

// TestHealthCountsMalformedDenyListLines is issue 44's finding 1: the lines of the
// deny list left out as malformed are counted in /healthz, which names deny-list
// degraded meanwhile.
func TestHealthCountsMalformedDenyListLines(t *testing.T) {
	var h denylist.Holder
	e := newEnv(t, func(d *mgmtapi.ManagementDeps) {
		d.DenyList = &h
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

// TestBatchItemTypeErrorsFailAlone is issue 44's finding 5: an item whose
// target_url has the wrong type, or that names a member twice, gets its own
// problem; the others are issued (the batch was 400).
func TestBatchItemTypeErrorsFailAlone(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"items":[{"target_url":5},{"target_url":"https://ok.example/"},
		{"target_url":null},{"target_url":["https://a.example/"]},{"target_url":{"x":1}},{"target_url":true},
		{"target_url":"https://ok.example/1","target_url":"https://evil.example/"},
		{"target_url":"https://ok.example/2","created_by":"me","created_by":"you"}]}`)
	got := decodeBatch(t, e.post(t, "/shorten/batch", body))
	want := []string{"must be a string, not a number", "", "not null", "not an array", "not an object", "not a boolean",
		`member "target_url" is given more than once`, `member "created_by" is given more than once`}
	if len(got.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(got.Results), len(want))
	}
	for i, r := range got.Results {
		switch {
		case want[i] == "" && (r.Problem != nil || !shorturl.IsToken(r.Token)):
			t.Errorf("item %d: %+v, want issued", i, r)
		case want[i] != "" && (r.Problem == nil || r.Problem.Status != 400 || r.Token != "" ||
			r.Problem.Type != httpapi.ProblemTypePrefix+httpapi.CodeInvalidRequest || !strings.Contains(r.Problem.Detail, want[i])):
			t.Errorf("item %d: %+v, want a 400 invalid-request saying %q", i, r, want[i])
		}
	}
	if u, err := e.pc.Lookup(context.Background(), shorturl.Token(got.Results[1].Token)); err != nil || u.Target != "https://ok.example/" {
		t.Errorf("item 1 stored as %+v, %v", u, err)
	}
}
