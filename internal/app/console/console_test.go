package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/core/qr"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/qrdecode"
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
		breakdown := ""
		if r.URL.Query().Get("breakdown") == "browser,os,device" {
			breakdown = `,"breakdown":{"browser":[{"name":"Firefox","clicks":4},{"name":"Chrome","clicks":1}],"os":[{"name":"Linux","clicks":5}],"device":[{"name":"desktop","clicks":5}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"token":"AbCdEfGh12","clicks":7,"unique_visitors":3,"by_day":[{"date":"`+today+`","clicks":7,"previews":2,"unique_visitors":3}]`+breakdown+`}`)
	})
	mux.HandleFunc("GET /links", standInLinks)
	mux.HandleFunc("GET /links/{token}/qr", func(w http.ResponseWriter, r *http.Request) {
		// Level H, not the API's default M: qrdecode finds no code in the M
		// encoding of https://s.example/AbCdEfGh12 (its detector estimates 19
		// modules for 29), a decoder or encoder fault outside the console.
		code, err := qr.Encode("https://s.example/"+r.PathValue("token"), qr.High)
		if err != nil {
			problem(w, 500, "internal", err.Error())
			return
		}
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		img, ct := []byte(nil), "image/svg+xml"
		if r.URL.Query().Get("format") == "png" {
			img, ct = must(code.PNG(size, 4)), "image/png"
		} else {
			img, err = code.SVG(size, 4)
		}
		if err != nil {
			problem(w, 400, "qr-size-too-small", err.Error())
			return
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(img)
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

// standInLinks pages through five links, newest first, two at a time, the
// cursor being the index of the page's first link; q searches the targets.
func standInLinks(w http.ResponseWriter, r *http.Request) {
	items := []map[string]any{}
	for i := range 5 {
		target := fmt.Sprintf("https://example.com/item/%d", 5-i)
		if i == 1 {
			target = "https://blocked.example/spam"
		}
		if q := r.URL.Query().Get("q"); q == "" || strings.Contains(target, q) {
			items = append(items, map[string]any{"token": fmt.Sprintf("Tok%07d", 5-i), "short_url": fmt.Sprintf("https://s.example/Tok%07d", 5-i),
				"target_url": target, "blocked": i == 1, "created_at": time.Date(2026, 12, 5-i, 9, 0, 0, 0, time.UTC)})
		}
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	page := map[string]any{"items": items[min(from, len(items)):min(from+2, len(items))]}
	if from+2 < len(items) {
		page["next_cursor"] = strconv.Itoa(from + 2)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
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

// TestLinksPageListsSearchesAndPages: the Links page lists two links a page,
// newest first, with a BLOCKED badge, pages on through the API's cursor, and a
// search narrows the list to the targets that contain it.
func TestLinksPageListsSearchesAndPages(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "test"})
	hc := browser(t)
	login(t, c, hc)
	rows := regexp.MustCompile(`<tr data-token="(\w+)">`)
	tokens := func(page string) []string {
		var out []string
		for _, m := range rows.FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return out
	}
	res, page := get(t, hc, c.url+"/links")
	if got := tokens(page); res.StatusCode != 200 || strings.Join(got, ",") != "Tok0000005,Tok0000004" {
		t.Fatalf("first page: %d %v, want Tok0000005,Tok0000004\n%s", res.StatusCode, got, page)
	}
	badge := func(tok string) bool {
		m := regexp.MustCompile(`(?s)<tr data-token="` + tok + `">(.*?)</tr>`).FindStringSubmatch(page)
		return m != nil && strings.Contains(m[1], "BLOCKED")
	}
	if !badge("Tok0000004") || badge("Tok0000005") {
		t.Error("the blocked link, and only it, wants a BLOCKED badge")
	}
	next := regexp.MustCompile(`id="next-page" rel="next" href="([^"]+)"`).FindStringSubmatch(page)
	if next == nil {
		t.Fatal("the first page has no next page link")
	}
	_, page = get(t, hc, c.url+strings.ReplaceAll(next[1], "&amp;", "&"))
	if got := tokens(page); strings.Join(got, ",") != "Tok0000003,Tok0000002" {
		t.Errorf("second page: %v, want Tok0000003,Tok0000002", got)
	}
	_, page = get(t, hc, c.url+"/links?q=blocked.example")
	if got := tokens(page); strings.Join(got, ",") != "Tok0000004" || strings.Contains(page, "next-page") {
		t.Errorf("search by target: %v, want Tok0000004 alone", got)
	}
	if _, page = get(t, hc, c.url+"/links?q=nothing-matches"); !strings.Contains(page, `id="no-links"`) {
		t.Error("an empty search does not say so")
	}
	res, _ = get(t, hc, c.url+"/links?q="+url.QueryEscape("https://s.example/AbCdEfGh12"))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/link/AbCdEfGh12" {
		t.Errorf("a short URL searched: %d to %q, want 303 to its link", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestLinkPageQRAndBreakdowns: the Link page shows unique visitors, the
// breakdowns and a QR image of the console's own origin, whose PNG and SVG
// decode to the short URL; a download is an attachment; a bad format is 404.
func TestLinkPageQRAndBreakdowns(t *testing.T) {
	api := newAPIStandIn(t, "us-east-1")
	c := startConsole(t, Config{API: localClient(t, api, testSecret), Identity: "test"})
	hc := browser(t)
	login(t, c, hc)
	_, page := get(t, hc, c.url+"/link/AbCdEfGh12")
	for _, want := range []string{`<dd id="unique-visitors">3 `, `<img id="qr" src="/link/AbCdEfGh12/qr?format=svg"`,
		`<th scope="row">Firefox</th><td>4</td>`, `<th scope="row">Linux</th><td>5</td>`, `<th scope="row">desktop</th><td>5</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("link page lacks %s", want)
		}
	}
	if strings.Contains(page, "Unfinished") {
		t.Error("the link page still says it is unfinished")
	}
	for format, decode := range map[string]func([]byte) (string, error){"png": qrdecode.PNG, "svg": qrdecode.SVG} {
		res, body := get(t, hc, c.url+"/link/AbCdEfGh12/qr?format="+format+"&download=1")
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/") ||
			!strings.Contains(res.Header.Get("Content-Disposition"), `filename="AbCdEfGh12-qr.`+format+`"`) ||
			!strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("QR %s: %d %v", format, res.StatusCode, res.Header)
			continue
		}
		if text, err := decode([]byte(body)); err != nil || text != "https://s.example/AbCdEfGh12" {
			t.Errorf("QR %s decodes to %q, %v", format, text, err)
		}
	}
	if res, _ := get(t, hc, c.url+"/link/AbCdEfGh12/qr?format=gif"); res.StatusCode != http.StatusNotFound {
		t.Errorf("format gif: %d, want 404", res.StatusCode)
	}
	if res, _ := get(t, hc, c.url+"/link/AbCdEfGh12/qr?size=9999"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("size 9999: %d, want 400", res.StatusCode)
	}
	anon := browser(t)
	if res, _ := get(t, anon, c.url+"/link/AbCdEfGh12/qr"); res.StatusCode == http.StatusOK {
		t.Error("the QR route answers without a session")
	}
}
