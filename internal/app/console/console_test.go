package console

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

// The pair the stand-in for API Gateway verifies (AWS's documentation example).
const (
	testKeyID  = "AKIAIOSFODNN7EXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true}, {"127.0.0.1:8443", true}, {"[::1]:9000", true}, {"127.9.9.9:1", true},
		{"0.0.0.0:8080", false}, {":8080", false}, {"[::]:80", false}, {"192.168.1.20:80", false},
		{"localhost:80", false}, {"evil.example:80", false}, {"127.0.0.1", false},
	} {
		if err := CheckAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
	}
}

// apiStandIn is a management API that checks SigV4 as API Gateway's AWS_IAM
// authorization does (the project's verifier) and answers a few routes.
type apiStandIn struct {
	*httptest.Server
	verified atomic.Int64 // requests whose signature was accepted
	refused  atomic.Int64
}

func newAPIStandIn(t *testing.T, region string) *apiStandIn {
	t.Helper()
	v, err := sigv4.New(sigv4.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, region, "execute-api")
	if err != nil {
		t.Fatal(err)
	}
	a := &apiStandIn{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /shorten", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			TargetURL string `json:"target_url"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		if strings.Contains(body.TargetURL, "blocked.example") {
			problem(w, 422, "target-url-blocked", "the target URL matches a rule of the deny list")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"token":"AbCdEfGh12","short_url":"https://s.example/AbCdEfGh12"}`)
	})
	mux.HandleFunc("GET /links/{token}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("token") != "AbCdEfGh12" {
			problem(w, 404, "not-found", "no short URL has this token")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"token":"AbCdEfGh12","short_url":"https://s.example/AbCdEfGh12","target_url":"https://example.com/a","created_at":"2026-12-01T10:00:00Z"}`)
	})
	mux.HandleFunc("GET /links/{token}/stats", func(w http.ResponseWriter, r *http.Request) {
		today := time.Now().UTC().Format(time.DateOnly)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"token":"AbCdEfGh12","clicks":7,"by_day":[{"date":"`+today+`","clicks":7,"previews":2}]}`)
	})
	reject := func(w http.ResponseWriter, _ *http.Request, _ error) {
		a.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"message":"Forbidden"}`)
	}
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.verified.Add(1); mux.ServeHTTP(w, r) })
	a.Server = httptest.NewServer(v.Middleware(reject)(counted))
	t.Cleanup(a.Close)
	return a
}

func problem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "urn:linoone:problem:" + code, "title": code, "status": status, "detail": detail})
}

// testConsole is a console served on a loopback port, and its log.
type testConsole struct {
	*Server
	url string
	log *syncbuf.Buffer
}

func startConsole(t *testing.T, cfg Config) *testConsole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	cfg.Addr, cfg.Log = ln.Addr().String(), slog.New(slog.NewJSONHandler(logs, nil))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &testConsole{Server: s, url: "http://" + cfg.Addr, log: logs}
}

// browser is an HTTP client with a cookie jar that does not follow redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, hc *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func post(t *testing.T, hc *http.Client, u, origin string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// login opens a session with the one-time URL and returns the page's CSRF token.
func login(t *testing.T, c *testConsole, hc *http.Client) string {
	t.Helper()
	res, _ := get(t, hc, c.LoginURL())
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d, want 303", res.StatusCode)
	}
	_, page := get(t, hc, c.url+"/")
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the Shorten page:\n%s", page)
	}
	return m[1]
}

func localClient(t *testing.T, api *apiStandIn, secret string) *client.Client {
	t.Helper()
	c, err := client.New(api.URL, append(apiOptions(), client.WithCredentials(testKeyID, secret), client.WithRegion("us-east-1"))...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLogin: the login URL works once and sets an HttpOnly, SameSite=Strict cookie;
// nothing but login and the assets answers without it.
func TestLogin(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "test"})
	hc := browser(t)
	if res, _ := get(t, hc, c.url+"/"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET / before login: %d, want 401", res.StatusCode)
	}
	if res, _ := get(t, hc, c.url+"/login?secret=guess"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("login with a wrong secret: %d, want 403", res.StatusCode)
	}
	loginURL := c.LoginURL()
	res, _ := get(t, hc, loginURL)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d, want 303", res.StatusCode)
	}
	cookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{cookieName + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	res, page := get(t, hc, c.url+"/")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "URL to shorten") {
		t.Fatalf("GET / after login: %d\n%s", res.StatusCode, page)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	again := browser(t)
	res, page = get(t, again, loginURL)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "used already") || res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("second login with the used URL: %d %q\n%s", res.StatusCode, res.Header.Get("Set-Cookie"), page)
	}
	if res, _ := get(t, again, c.url+"/"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET / after a refused login: %d, want 401", res.StatusCode)
	}
}

// TestForeignHost: a request naming another Host (DNS rebinding) is refused, the
// login URL included, and does not spend the login secret.
func TestForeignHost(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "test"})
	for _, host := range []string{"evil.example", "evil.example:" + strings.Split(c.cfg.Addr, ":")[1], "localhost:" + strings.Split(c.cfg.Addr, ":")[1]} {
		req, _ := http.NewRequest(http.MethodGet, c.LoginURL(), nil)
		req.Host = host
		res, err := browser(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMisdirectedRequest || res.Header.Get("Set-Cookie") != "" {
			t.Errorf("Host %s: %d %q, want 421 and no cookie", host, res.StatusCode, res.Header.Get("Set-Cookie"))
		}
	}
	login(t, c, browser(t)) // the secret still works for the console's own Host
}

// TestStateChangeNeedsSessionOriginAndToken: a POST lacking any of the three is
// refused before the management API is called; with all three it is signed and sent,
// and the log says who did what.
func TestStateChangeNeedsSessionOriginAndToken(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "access key AKIAIOSF… (test)"})
	hc := browser(t)
	csrf := login(t, c, hc)
	form := url.Values{"urls": {"https://example.com/a"}, "csrf": {csrf}}
	noToken := url.Values{"urls": {"https://example.com/a"}}
	wrongToken := url.Values{"urls": {"https://example.com/a"}, "csrf": {csrf + "x"}}
	for _, tc := range []struct {
		name   string
		hc     *http.Client
		origin string
		form   url.Values
	}{
		{"cross-origin", hc, "http://evil.example", form},
		{"no Origin", hc, "", form},
		{"null Origin", hc, "null", form},
		{"no token", hc, c.origin, noToken},
		{"wrong token", hc, c.origin, wrongToken},
		{"no session", browser(t), c.origin, form},
	} {
		res, page := post(t, tc.hc, c.url+"/shorten", tc.origin, tc.form)
		if res.StatusCode != http.StatusForbidden || strings.Contains(page, "s.example/AbCdEfGh12") {
			t.Errorf("%s: %d, want 403\n%s", tc.name, res.StatusCode, page)
		}
	}
	if n := api.verified.Load() + api.refused.Load(); n != 0 {
		t.Fatalf("refused requests reached the API %d times", n)
	}
	res, page := post(t, hc, c.url+"/shorten", c.origin, form)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-copy="https://s.example/AbCdEfGh12"`) {
		t.Fatalf("shorten: %d\n%s", res.StatusCode, page)
	}
	if api.verified.Load() != 1 {
		t.Fatalf("the API verified %d signed requests, want 1", api.verified.Load())
	}
	if strings.Contains(page, testSecret) || strings.Contains(page, testKeyID) {
		t.Fatal("a credential reached the browser")
	}
	logs := c.log.String()
	if !strings.Contains(logs, `"action":"shorten"`) || !strings.Contains(logs, `"target_url":"https://example.com/a"`) || !strings.Contains(logs, `"who":"session-`) {
		t.Errorf("the log does not say who shortened what:\n%s", logs)
	}
	if strings.Contains(logs, testSecret) || strings.Contains(logs, csrf) {
		t.Error("the log holds a secret")
	}
}

// TestRefusalsInWords: a blocked target and refused credentials are explained.
func TestRefusalsInWords(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "test"})
	hc := browser(t)
	csrf := login(t, c, hc)
	_, page := post(t, hc, c.url+"/shorten", c.origin, url.Values{"urls": {"https://blocked.example/x"}, "csrf": {csrf}})
	if !strings.Contains(page, "on the deny list") {
		t.Errorf("a blocked target is not explained:\n%s", page)
	}
	bad := startConsole(t, Config{API: localClient(t, api, "not-the-secret"), Identity: "test"})
	hc = browser(t)
	csrf = login(t, bad, hc)
	_, page = post(t, hc, bad.url+"/shorten", bad.origin, url.Values{"urls": {"https://example.com/a"}, "csrf": {csrf}})
	if !strings.Contains(page, "refused the console&#39;s credentials") {
		t.Errorf("refused credentials are not explained:\n%s", page)
	}
}

// TestLinkPageChart: the Link page draws today's clicks in the SVG chart and in the
// table, visits and previews apart.
func TestLinkPageChart(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "test"})
	hc := browser(t)
	login(t, c, hc)
	res, page := get(t, hc, c.url+"/link/AbCdEfGh12")
	today := time.Now().UTC().Format(time.DateOnly)
	for _, want := range []string{`<svg class="chart"`, `data-day="` + today + `" data-visits="5" data-previews="2"`,
		`<tr id="day-` + today + `">`, `<td class="visits">5</td><td class="previews">2</td>`, "https://example.com/a"} {
		if !strings.Contains(page, want) {
			t.Errorf("link page lacks %s", want)
		}
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("link page %d", res.StatusCode)
	}
	if res, _ := get(t, hc, c.url+"/link/Zz00000000"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown token: %d, want 404", res.StatusCode)
	}
}

// TestDeployedEndpoint points the console at a stand-in for API Gateway that checks
// SigV4, signing with the AWS default credential chain (here the environment), with
// STS unreachable: the identity names the key's prefix and says STS failed.
func TestDeployedEndpoint(t *testing.T) {
	api := newAPIStandIn(t, "eu-west-1")
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": testKeyID, "AWS_SECRET_ACCESS_KEY": testSecret, "AWS_SESSION_TOKEN": "",
		"AWS_REGION": "eu-west-1", "AWS_PROFILE": "", "AWS_CONFIG_FILE": dir + "/config",
		"AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials", "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:9",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	var cfg Config
	if err := cfg.deployed(context.Background(), api.URL, os.Getenv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg.Identity, "AKIAIOSF…") || strings.Contains(cfg.Identity, testKeyID) || !strings.Contains(cfg.Identity, "STS GetCallerIdentity failed") {
		t.Errorf("identity %q: want the key's prefix only and that STS failed", cfg.Identity)
	}
	c := startConsole(t, cfg)
	hc := browser(t)
	csrf := login(t, c, hc)
	_, page := post(t, hc, c.url+"/shorten", c.origin, url.Values{"urls": {"https://example.com/a"}, "csrf": {csrf}})
	if !strings.Contains(page, `data-copy="https://s.example/AbCdEfGh12"`) || api.verified.Load() != 1 || api.refused.Load() != 0 {
		t.Fatalf("shorten through the deployed endpoint: verified %d, refused %d\n%s", api.verified.Load(), api.refused.Load(), page)
	}
	_, page = get(t, hc, c.url+"/health")
	if !strings.Contains(page, "accepts the console&#39;s signature") || !strings.Contains(page, "deny list") && !strings.Contains(page, "CloudWatch") {
		t.Errorf("health page of a deployed endpoint:\n%s", page)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	var wrong Config
	if err := wrong.deployed(context.Background(), api.URL, os.Getenv); err != nil {
		t.Fatal(err)
	}
	c = startConsole(t, wrong)
	hc = browser(t)
	csrf = login(t, c, hc)
	_, page = post(t, hc, c.url+"/shorten", c.origin, url.Values{"urls": {"https://example.com/a"}, "csrf": {csrf}})
	if !strings.Contains(page, "refused the console&#39;s credentials") || api.refused.Load() == 0 {
		t.Errorf("a wrong secret: refused %d\n%s", api.refused.Load(), page)
	}
}
