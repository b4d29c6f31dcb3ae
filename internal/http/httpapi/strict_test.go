package httpapi_test

import (
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// newManagementAPIOn is newManagementAPI with the resolver at base and further own
// and reserved hosts, as a local serve wires it.
func newManagementAPIOn(t *testing.T, st *store, base string, self, reserved []string) http.Handler {
	t.Helper()
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st, ResolverBaseURL: base, Rand: rand.Reader, SelfHosts: self, ReservedHosts: reserved})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sigv4.New(creds, "us-east-1", "execute-api")
	if err != nil {
		t.Fatal(err)
	}
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: st, Authenticator: v})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// shorten posts a signed body and returns the status and, for a problem, its code.
func shorten(t *testing.T, h http.Handler, body string) (int, string, []byte) {
	t.Helper()
	res, out := do(t, h, signed(t, http.MethodPost, "/shorten", "application/json", []byte(body), creds, time.Now()))
	if res.StatusCode == http.StatusCreated {
		return res.StatusCode, "", out
	}
	p := decodeProblem(t, res, out)
	return res.StatusCode, strings.TrimPrefix(p.Type, httpapi.ProblemTypePrefix), out
}

// TestShortenRefusesOwnHostSpellings: issue 9 item 3, through the real router with
// the resolver on 127.0.0.1:8080 and the management API on 127.0.0.1:8081.
func TestShortenRefusesOwnHostSpellings(t *testing.T) {
	st := newStore()
	h := newManagementAPIOn(t, st, "http://127.0.0.1:8080", []string{"127.0.0.1:8081"}, []string{"*.corp.example", "169.254.169.254"})
	for _, host := range []string{
		"localhost", "LOCALHOST", "localhost.", "0x7f000001", "0x7f.0.0.1", "2130706433", "127.1",
		"0177.0.0.1", "127.000.000.001", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]",
		"１２７.０.０.１", "127。0。0。1", "[::1]", "0.0.0.0",
	} {
		t.Run(host, func(t *testing.T) {
			for _, port := range []string{":8080", ":8081", ""} {
				status, code, out := shorten(t, h, `{"target_url":"http://`+host+port+`/7BTadEDkJ8"}`)
				if status != http.StatusBadRequest || code != string(shorturl.RuleSelf) {
					t.Errorf("port %q: %d %s: %s", port, status, code, out)
				}
			}
		})
	}
	for target, want := range map[string]string{
		"https://db.corp.example/":           string(shorturl.RuleReserved),
		"http://0xa9fea9fe/latest/meta-data": string(shorturl.RuleReserved),
		"https://127.0.0.1.example.com/":     "",
		"https://example.com/":               "",
		"https://[2001:db8::1]/":             "",
		"https://corp.example.com/":          "",
	} {
		status, code, out := shorten(t, h, `{"target_url":"`+target+`"}`)
		if want == "" && status != http.StatusCreated || want != "" && (status != http.StatusBadRequest || code != want) {
			t.Errorf("%s: %d %s, want %q: %s", target, status, code, want, out)
		}
	}
	if st.saves != 4 {
		t.Errorf("%d saves, want the 4 allowed targets", st.saves)
	}
}

// TestShortenStrictBody: issue 9 item 5, through the real router.
func TestShortenStrictBody(t *testing.T) {
	tests := []struct {
		name, body, want string // want "" = 201
	}{
		{"trailing garbage", `{"target_url":"https://example.com/ok"}xyz`, httpapi.CodeInvalidRequest},
		{"two objects", `{"target_url":"https://example.com/ok"}{"target_url":"https://example.com/ok"}`, httpapi.CodeInvalidRequest},
		{"object then array", `{"target_url":"https://example.com/ok"}[]`, httpapi.CodeInvalidRequest},
		{"trailing whitespace", "{\"target_url\":\"https://example.com/ok\"} \r\n\t", ""},
		{"leading whitespace", " \n{\"target_url\":\"https://example.com/ok\"}", ""},
		{"invalid utf-8 0xff", "{\"target_url\":\"https://example.com/\xff\"}", string(shorturl.RuleCharacters)},
		{"invalid utf-8 0xc0", "{\"target_url\":\"https://example.com/\xc0\"}", string(shorturl.RuleCharacters)},
		{"overlong encoding", "{\"target_url\":\"https://example.com/\xc0\xaf\"}", string(shorturl.RuleCharacters)},
		{"lone high surrogate", `{"target_url":"https://example.com/\ud800"}`, string(shorturl.RuleCharacters)},
		{"lone low surrogate", `{"target_url":"https://example.com/\uDC00"}`, string(shorturl.RuleCharacters)},
		{"high surrogate then a letter", `{"target_url":"https://example.com/\ud800\u0041"}`, string(shorturl.RuleCharacters)},
		{"reversed pair", `{"target_url":"https://example.com/\udc00\ud800"}`, string(shorturl.RuleCharacters)},
		{"escaped surrogate pair", `{"target_url":"https://example.com/\ud83d\ude00"}`, ""},
		{"escaped backslash before u", `{"target_url":"https://example.com/ok","x":"\\ud800"}`, httpapi.CodeUnknownField},
		{"right-to-left override escaped", `{"target_url":"https://example.com/\u202etxt.exe"}`, string(shorturl.RuleCharacters)},
		{"right-to-left override raw", "{\"target_url\":\"https://example.com/\u202etxt.exe\"}", string(shorturl.RuleCharacters)},
		{"left-to-right mark", `{"target_url":"https://example.com/\u200e"}`, string(shorturl.RuleCharacters)},
		{"right-to-left mark", `{"target_url":"https://example.com/\u200F"}`, string(shorturl.RuleCharacters)},
		{"isolates", `{"target_url":"https://example.com/\u2066\u2067\u2068\u2069"}`, string(shorturl.RuleCharacters)},
		{"zero-width joiner", `{"target_url":"https://example.com/\u200d"}`, string(shorturl.RuleCharacters)},
		{"soft hyphen", `{"target_url":"https://exam\u00adple.com/"}`, string(shorturl.RuleCharacters)},
		{"word joiner", `{"target_url":"https://example.com/\u2060"}`, string(shorturl.RuleCharacters)},
		{"mongolian vowel separator", `{"target_url":"https://example.com/\u180e"}`, string(shorturl.RuleCharacters)},
		{"arabic letter mark", `{"target_url":"https://example.com/\u061c"}`, string(shorturl.RuleCharacters)},
		{"byte order mark", `{"target_url":"\ufeffhttps://example.com/"}`, string(shorturl.RuleCharacters)},
		{"port 0", `{"target_url":"https://example.com:0/"}`, string(shorturl.RulePort)},
		{"port 65536", `{"target_url":"https://example.com:65536/"}`, string(shorturl.RulePort)},
		{"port 65535", `{"target_url":"https://example.com:65535/"}`, ""},
		{"non-numeric port", `{"target_url":"https://example.com:http/"}`, string(shorturl.RuleSyntax)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore()
			h, _ := newManagementAPI(t, st, time.Now)
			status, code, out := shorten(t, h, tt.body)
			switch {
			case tt.want == "" && status != http.StatusCreated:
				t.Fatalf("%d %s, want 201: %s", status, code, out)
			case tt.want != "" && (status != http.StatusBadRequest || code != tt.want):
				t.Fatalf("%d %s, want 400 %s: %s", status, code, tt.want, out)
			case tt.want != "" && st.saves != 0:
				t.Fatal("a refused body was stored")
			}
		})
	}
}

// TestShortenLengthInCharacters: issue 9 item 6. maxLength 2048 counts code points,
// and 2048 of them fit in a body even when every one is a \u surrogate-pair escape.
func TestShortenLengthInCharacters(t *testing.T) {
	prefix := "https://example.com/"
	n := 2048 - len(prefix)
	tests := []struct {
		name, target, body string
		want               int
	}{
		{"2048 two-byte characters", prefix + strings.Repeat("é", n), "", http.StatusCreated},
		{"2048 four-byte characters", prefix + strings.Repeat("😀", n), "", http.StatusCreated},
		{"2048 characters as surrogate-pair escapes", prefix + strings.Repeat("😀", n), `{"target_url":"` + prefix + strings.Repeat(`\uD83D\uDE00`, n) + `"}`, http.StatusCreated},
		{"2048 characters as \\u escapes", prefix + strings.Repeat("é", n), `{"target_url":"` + prefix + strings.Repeat(`\u00e9`, n) + `"}`, http.StatusCreated},
		{"2049 two-byte characters", prefix + strings.Repeat("é", n+1), "", http.StatusBadRequest},
		{"2049 four-byte characters", prefix + strings.Repeat("😀", n+1), "", http.StatusBadRequest},
		{"2049 characters as surrogate-pair escapes", "", `{"target_url":"` + prefix + strings.Repeat(`\uD83D\uDE00`, n+1) + `"}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body
			if body == "" {
				body = `{"target_url":"` + tt.target + `"}`
			}
			if len(body) > mgmtapi.MaxBodyBytes {
				t.Fatalf("test body is %d bytes, over MaxBodyBytes", len(body))
			}
			st := newStore()
			h, _ := newManagementAPI(t, st, time.Now)
			res, out := do(t, h, signed(t, http.MethodPost, "/shorten", "application/json", []byte(body), creds, time.Now()))
			if res.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %.300s", res.StatusCode, tt.want, out)
			}
			if tt.want == http.StatusCreated {
				if len(st.m) != 1 {
					t.Fatal("nothing stored")
				}
				for _, u := range st.m {
					if u.Target != tt.target {
						t.Fatalf("stored %.80q…, want %.80q…", u.Target, tt.target)
					}
				}
				return
			}
			p := decodeProblem(t, res, out)
			if p.Type != httpapi.ProblemTypePrefix+string(shorturl.RuleLength) || !strings.Contains(p.Detail, "2048 characters") {
				t.Fatalf("problem %+v", p)
			}
		})
	}
}
