package localpersist

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/graphson"
)

func TestBadHTTPInput(t *testing.T) {
	e := newEnv(t, Options{MaxBodyBytes: 4096})
	big := []byte(`{"gremlin":"` + strings.Repeat(" ", 5000) + `g.V()"}`)
	bigDoc := docJSON(t, graphson.Document{Vertices: []graphson.Vertex{shortURL(t, strings.Repeat("x", 5000))}})

	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        []byte
		status      int
		code        int    // Gremlin status code; 0 for the plain JSON endpoints
		want        string // substring of the error message
	}{
		{"ingest GET", http.MethodGet, "/persist/ingest", "", nil, http.StatusMethodNotAllowed, 0, "use POST"},
		{"ingest PUT", http.MethodPut, "/persist/ingest", "application/json", []byte(`{}`), http.StatusMethodNotAllowed, 0, "use POST"},
		{"ingest text", http.MethodPost, "/persist/ingest", "text/plain", []byte(`{}`), http.StatusUnsupportedMediaType, 0, "send application/json"},
		{"ingest form", http.MethodPost, "/persist/ingest", "application/x-www-form-urlencoded", []byte(`a=b`), http.StatusUnsupportedMediaType, 0, "not supported"},
		{"ingest not JSON", http.MethodPost, "/persist/ingest", "application/json", []byte(`vertices`), http.StatusBadRequest, 0, "invalid graphson document"},
		{"ingest empty body", http.MethodPost, "/persist/ingest", "application/json", nil, http.StatusBadRequest, 0, "invalid graphson document"},
		{"ingest wrong shape", http.MethodPost, "/persist/ingest", "application/json", []byte(`{"gremlin":"g.V()"}`), http.StatusBadRequest, 0, "unknown field"},
		{"ingest trailing data", http.MethodPost, "/persist/ingest", "application/json", []byte(`{"vertices":[],"edges":[]} {}`), http.StatusBadRequest, 0, "invalid graphson document"},
		{"ingest too large", http.MethodPost, "/persist/ingest", "application/json", bigDoc, http.StatusRequestEntityTooLarge, 0, "exceeds 4096 bytes"},
		{"gremlin GET", http.MethodGet, "/persist/gremlin?gremlin=g.V()", "", nil, http.StatusMethodNotAllowed, codeInvalidRequestArguments, "use POST"},
		{"gremlin text", http.MethodPost, "/persist/gremlin", "text/plain", []byte(`g.V()`), http.StatusUnsupportedMediaType, codeInvalidRequestArguments, "send application/json"},
		{"gremlin not JSON", http.MethodPost, "/persist/gremlin", "application/json", []byte(`g.V()`), http.StatusBadRequest, codeInvalidRequestArguments, "invalid request body"},
		{"gremlin empty body", http.MethodPost, "/persist/gremlin", "application/json", nil, http.StatusBadRequest, codeInvalidRequestArguments, "invalid request body"},
		{"gremlin array", http.MethodPost, "/persist/gremlin", "application/json", []byte(`["g.V()"]`), http.StatusBadRequest, codeInvalidRequestArguments, "invalid request body"},
		{"gremlin unknown field", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","binding":{}}`), http.StatusBadRequest, codeInvalidRequestArguments, "unknown field"},
		{"gremlin trailing data", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()"}{}`), http.StatusBadRequest, codeInvalidRequestArguments, "trailing data"},
		{"gremlin missing script", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"bindings":{}}`), http.StatusBadRequest, codeInvalidRequestArguments, "no gremlin script supplied"},
		{"gremlin blank script", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"  "}`), http.StatusBadRequest, codeInvalidRequestArguments, "no gremlin script supplied"},
		{"gremlin script not a string", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":1}`), http.StatusBadRequest, codeInvalidRequestArguments, "invalid request body"},
		{"gremlin language", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","language":"gremlin-lang"}`), http.StatusBadRequest, codeInvalidRequestArguments, `language "gremlin-lang" is not supported`},
		{"gremlin bindings not an object", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":[]}`), http.StatusBadRequest, codeInvalidRequestArguments, "invalid request body"},
		{"gremlin float binding", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":{"n":1.5}}`), http.StatusBadRequest, codeInvalidRequestArguments, "binding n: number 1.5 is not a 64-bit integer"},
		{"gremlin huge binding", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":{"n":99999999999999999999}}`), http.StatusBadRequest, codeInvalidRequestArguments, "not a 64-bit integer"},
		{"gremlin null binding", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":{"n":null}}`), http.StatusBadRequest, codeInvalidRequestArguments, "binding n: null is not supported"},
		{"gremlin object binding", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":{"n":{"@type":"g:Int64","@value":1}}}`), http.StatusBadRequest, codeInvalidRequestArguments, "an object is not supported"},
		{"gremlin binding name", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":{"a-b":"x"}}`), http.StatusBadRequest, codeInvalidRequestArguments, `binding name "a-b" is not a valid variable name`},
		{"gremlin binding g", http.MethodPost, "/persist/gremlin", "application/json", []byte(`{"gremlin":"g.V()","bindings":{"g":"x"}}`), http.StatusBadRequest, codeInvalidRequestArguments, `binding name "g"`},
		{"gremlin too large", http.MethodPost, "/persist/gremlin", "application/json", big, http.StatusRequestEntityTooLarge, codeInvalidRequestArguments, "exceeds 4096 bytes"},
		{"unknown path", http.MethodPost, "/persist/other", "application/json", []byte(`{}`), http.StatusNotFound, 0, "no such endpoint"},
		{"healthz POST", http.MethodPost, "/healthz", "", nil, http.StatusMethodNotAllowed, 0, "use GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := e.do(t, tt.method, tt.path, tt.contentType, tt.body)
			if status != tt.status {
				t.Errorf("status %d, want %d: %s", status, tt.status, body)
			}
			var msg string
			if tt.code != 0 {
				r := decodeGremlinReply(t, body)
				if r.Status.Code != tt.code {
					t.Errorf("gremlin code %d, want %d", r.Status.Code, tt.code)
				}
				msg = r.Status.Message
			} else {
				var r struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatalf("error body %q: %v", body, err)
				}
				msg = r.Error
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not contain %q", msg, tt.want)
			}
		})
	}
}

func TestGremlinAccept(t *testing.T) {
	e := newEnv(t, Options{})
	tests := []struct {
		accept string
		status int
	}{
		{"", http.StatusOK},
		{"application/vnd.gremlin-v3.0+json", http.StatusOK},
		{"application/json", http.StatusOK},
		{"*/*", http.StatusOK},
		{"text/html, application/json;q=0.5", http.StatusOK},
		{"application/vnd.gremlin-v3.0+json;types=false", http.StatusNotAcceptable},
		{"application/vnd.gremlin-v2.0+json", http.StatusNotAcceptable},
		{"application/json;q=0", http.StatusNotAcceptable},
		{"text/plain", http.StatusNotAcceptable},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/persist/gremlin", strings.NewReader(`{"gremlin":"g.V().count()"}`))
			if err != nil {
				t.Fatal(err)
			}
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
}

func TestHealthz(t *testing.T) {
	e := newEnv(t, Options{})
	status, body := e.do(t, http.MethodGet, "/healthz", "", nil)
	if status != http.StatusOK || string(body) != `{"status":"ok"}` {
		t.Errorf("healthz: %d %s", status, body)
	}
}
