package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/app/serve"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/golden"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// commands are every subcommand of linoone.
var commands = []string{"serve", "shorten", "status", "dlq", "replay", "recover", "consume",
	"block", "unblock", "blocked", "console", "discover", "capacity", "version", "inspect", "stats", "smoke", "links", "qr", serve.ChildCommand}

// runCLI runs linoone in-process with an empty environment but for a data dir.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "LINOONE_DATA_DIR" {
			return dir
		}
		return ""
	}
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, getenv, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelp: -h and --help print the command's usage, with an example, on stdout and
// exit 0; the text is golden (testdata/help, go test -update rewrites it).
func TestHelp(t *testing.T) {
	for _, name := range append([]string{"linoone"}, commands...) {
		t.Run(name, func(t *testing.T) {
			args := []string{name, "-h"}
			if name == "linoone" {
				args = []string{"--help"}
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
			}
			if !strings.Contains(stdout, "usage: linoone") || !strings.Contains(strings.ToLower(stdout), "example") {
				t.Errorf("%v: no usage with an example:\n%s", args, stdout)
			}
			golden.Text(t, "help/"+name+".txt", []byte(stdout))
			if name == "linoone" {
				return
			}
			for _, alt := range [][]string{{name, "--help"}, {"help", name}} {
				code, out, _ := runCLI(t, alt...)
				if code != 0 || out != stdout {
					t.Errorf("%v: exit %d, output differs from -h:\n%s", alt, code, out)
				}
			}
		})
	}
}

// TestUsageErrors: an unknown flag, a missing or an extra argument prints the usage on
// stderr and exits 2, before anything is read or written.
func TestUsageErrors(t *testing.T) {
	cases := [][]string{{"nonsense"}, {"shorten"}, {"block"}, {"unblock"}, {"recover"},
		{"shorten", "a", "b"}, {"serve", "extra"}, {"inspect"}, {"stats"}, {"stats", "a", "b"}, {"version", "extra"}, {"blocked", "extra"}, {"status", "extra"},
		{"smoke"}, {"smoke", "--resolver", "http://127.0.0.1:1"}, {"smoke", "--from-terraform", "d", "--resolver", "http://127.0.0.1:1"},
		{"smoke", "--resolver", "ftp://x", "--management", "http://127.0.0.1:1"}, {"smoke", "--from-terraform", "d", "--redirects", "0"}}
	for _, name := range commands {
		if name != "discover" { // exit 2 means "a person must act" there; its usage errors exit 1
			cases = append(cases, []string{name, "--no-such-flag"})
		}
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, "usage: linoone") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
		})
	}
}

func TestParseFlagsAnywhere(t *testing.T) {
	cases := []struct {
		args []string
		pos  []string
		json bool
	}{
		{[]string{"https://example.com/", "--json"}, []string{"https://example.com/"}, true},
		{[]string{"--json", "https://example.com/"}, []string{"https://example.com/"}, true},
		{[]string{"https://example.com/"}, []string{"https://example.com/"}, false},
		{[]string{"--", "--json"}, []string{"--json"}, false},
		{[]string{"a", "--json", "--", "-b"}, []string{"a", "-b"}, true},
	}
	for _, c := range cases {
		fs := newFlags("shorten")
		asJSON := fs.Bool("json", false, "")
		pos, err := parse(fs, c.args, 0, -1)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if diff := cmp.Diff(c.pos, pos); diff != "" || *asJSON != c.json {
			t.Errorf("%v: json %v, positional (-want +got):\n%s", c.args, *asJSON, diff)
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "linoone github.com/linoone/linoone ") || !strings.Contains(stdout, "\nrevision ") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestSignedCommandsFollowNoRedirect: the CLI signs every request it sends, so a
// management URL that redirects elsewhere must not get the other host a freshly
// signed request (and its body) to replay against the API.
func TestSignedCommandsFollowNoRedirect(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	env := map[string]string{
		"LINOONE_DATA_DIR": t.TempDir(), "LINOONE_MANAGEMENT_URL": redirect.URL,
		sigv4.EnvAccessKeyID: "LNKREDIRECTTEST00001", sigv4.EnvSecretAccessKey: "redirect-test-secret-redirect-test-secret",
	}
	for _, args := range [][]string{
		{"shorten", "https://example.com/a"},
		{"shorten", "--idempotency-key", "k", "https://example.com/a"},
		{"inspect", "7BTadEDkJ8"},
		{"stats", "7BTadEDkJ8"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut); code == 0 {
			t.Errorf("%v: exit 0 on a redirect: %s", args, out.String())
		}
		if !strings.Contains(errOut.String(), "307") {
			t.Errorf("%v: the error does not name the redirect: %s", args, errOut.String())
		}
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the host redirected to got %d signed requests", n)
	}
}

// TestManagementURLWithUserinfoIsRefused: SigV4 signs in a header, so a password in
// the management URL serves nothing, and the messages that name the URL (a refused
// connection here) would print it. The flag is a command line the CLI cannot run
// (exit 2), the variable a bad configuration (exit 1); neither message shows it.
func TestManagementURLWithUserinfoIsRefused(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // a refused connection: the error names the URL
	withPassword := strings.Replace(dead.URL, "http://", "http://producer:PASS@", 1)
	for _, tt := range []struct {
		args []string
		env  string // LINOONE_MANAGEMENT_URL
		code int
	}{
		{[]string{"shorten", "--management-url", withPassword, "https://example.com/a"}, "", 2},
		{[]string{"inspect", "--management-url", withPassword, "7BTadEDkJ8"}, "", 2},
		{[]string{"stats", "--management-url", withPassword, "7BTadEDkJ8"}, "", 2},
		{[]string{"shorten", "https://example.com/a"}, withPassword, 1},
		{[]string{"shorten", "--file", "-"}, withPassword, 1},
	} {
		env := map[string]string{
			"LINOONE_DATA_DIR": t.TempDir(), "LINOONE_MANAGEMENT_URL": tt.env,
			sigv4.EnvAccessKeyID: "LNKUSERINFOTEST00001", sigv4.EnvSecretAccessKey: "userinfo-test-secret-userinfo-test-secret",
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, func(k string) string { return env[k] }, &out, &errOut)
		if code != tt.code || strings.Contains(errOut.String(), "PASS") || !strings.Contains(errOut.String(), "xxxxx@") {
			t.Errorf("%v (LINOONE_MANAGEMENT_URL %q): exit %d, want %d, and the userinfo masked:\n%s", tt.args, tt.env, code, tt.code, errOut.String())
		}
	}
}

// TestEmptyIdempotencyKeyIsRefused: --idempotency-key "$KEY" with KEY unset would send
// no key, and every retry would issue another short URL; the flag given empty is a
// command line the CLI cannot run, before anything is sent.
func TestEmptyIdempotencyKeyIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"shorten", "--idempotency-key", "", "https://example.com/a"},
		{"shorten", "--idempotency-key=", "https://example.com/a"},
		{"shorten", "https://example.com/a", "--idempotency-key", ""},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "--idempotency-key is empty") {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "shorten", "--file", "links.txt", "--idempotency-key="); code != 2 || !strings.Contains(stderr, "--idempotency-key is for one URL") {
		t.Errorf("--file with an empty --idempotency-key: exit %d:\n%s", code, stderr)
	}
}

// TestUnexpectedAnswersFail: a proxy or another service at a wrong management URL
// answers 2xx JSON of another shape, which the generated client decodes as an
// empty answer; the CLI must fail and name the request, not print nothing and exit 0.
func TestUnexpectedAnswersFail(t *testing.T) {
	bodies := map[string]string{
		"/shorten":                `{"foo":1}`,
		"/links/7BTadEDkJ8":       `{"foo":1}`,
		"/links/7BTadEDkJ8/stats": `{"token":"7BTadEDkJ8","clicks":1,"unique_visitors":1,"by_day":[{"date":"2026-11-30","clicks":1,"unique_visitors":1}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/shorten" {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = w.Write([]byte(bodies[r.URL.Path]))
	}))
	defer srv.Close()
	env := map[string]string{
		"LINOONE_DATA_DIR": t.TempDir(), "LINOONE_MANAGEMENT_URL": srv.URL,
		sigv4.EnvAccessKeyID: "LNKSHAPETEST00000001", sigv4.EnvSecretAccessKey: "shape-test-secret-shape-test-secret-shape",
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"shorten", "https://example.com/a"}, "unexpected answer from POST " + srv.URL + "/shorten: 201 lacks token, short_url: "},
		{[]string{"shorten", "--json", "https://example.com/a"}, "unexpected answer from POST " + srv.URL + "/shorten: 201 lacks token, short_url: "},
		{[]string{"inspect", "7BTadEDkJ8"}, "unexpected answer from GET " + srv.URL + "/links/7BTadEDkJ8: 200 lacks token, short_url, target_url, blocked: "},
		{[]string{"stats", "--json", "7BTadEDkJ8"}, "unexpected answer from GET " + srv.URL + "/links/7BTadEDkJ8/stats: 200 lacks by_day[0] (lacks previews): "},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, func(k string) string { return env[k] }, &out, &errOut)
		if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1, nothing, %q", tt.args, code, &out, &errOut, tt.want)
		}
	}
}

// TestAnswersArePrintedPrintable: inspect and shorten print what a server answered
// on the operator's terminal; a terminal escape sequence in it (a server the
// --management-url pointed at is not necessarily ours) is quoted, not run.
func TestAnswersArePrintedPrintable(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/shorten" {
			w.WriteHeader(http.StatusCreated)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"token": "7BTadEDkJ8", "blocked": false,
			"short_url": "https://s.example/7BTadEDkJ8" + evil, "target_url": "https://t.example/" + evil})
	}))
	defer srv.Close()
	env := map[string]string{
		"LINOONE_DATA_DIR": t.TempDir(), "LINOONE_MANAGEMENT_URL": srv.URL,
		sigv4.EnvAccessKeyID: "LNKSHAPETEST00000001", sigv4.EnvSecretAccessKey: "shape-test-secret-shape-test-secret-shape",
	}
	for _, args := range [][]string{{"inspect", "7BTadEDkJ8"}, {"shorten", "https://example.com/a"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
		if code != 0 || strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `\x1b]0;pwned\a\x1b[2J"`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and the answer's strings quoted", args, code, &out, &errOut)
		}
	}
}

// TestCLIRoughEdges are issue 43's: --version and -v answer as version does; an
// unknown command suggests the nearest; a missing argument is named; a usage error
// prints the usage line and the hint to -h, not the whole help.
func TestCLIRoughEdges(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		code, stdout, _ := runCLI(t, flag)
		if code != 0 || !strings.HasPrefix(stdout, "linoone github.com/linoone/linoone ") {
			t.Errorf("%s: exit %d, %q", flag, code, stdout)
		}
	}
	for args, want := range map[string]string{
		"shortn":            `unknown command "shortn": did you mean "shorten"?`,
		"STATUS":            `did you mean "status"?`,
		"stats":             "linoone stats: TOKEN|SHORT_URL is missing\nusage: linoone stats ",
		"inspect":           "linoone inspect: TOKEN|SHORT_URL is missing\n",
		"block":             "linoone block: RULE is missing\n",
		"shorten --nope":    "linoone shorten: flag provided but not defined: -nope\nusage: linoone shorten ",
		"discover --region": "linoone discover: flag needs an argument: -region\nusage: linoone discover ",
	} {
		code, stdout, stderr := runCLI(t, strings.Fields(args)...)
		if code == 0 || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", args, code, stdout, stderr, want)
		}
		if strings.Contains(stderr, "flags:") || strings.Contains(stderr, "example:") || !strings.Contains(stderr, "-h' for") {
			t.Errorf("%s: a usage error prints the whole help, or no hint to -h:\n%s", args, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "zzzzzzzz"); code != 2 || strings.Contains(stderr, "did you mean") {
		t.Errorf("a command like none: exit %d, %q; want 2 and no suggestion", code, stderr)
	}
}

// TestFlagsPrintWithTwoDashes: the flag list uses the style of the usage lines,
// --name, and prints a default once.
func TestFlagsPrintWithTwoDashes(t *testing.T) {
	for _, name := range commands {
		_, stdout, _ := runCLI(t, name, "-h")
		_, flags, _ := strings.Cut(stdout, "\nflags:\n")
		for _, line := range strings.Split(flags, "\n") {
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
				t.Errorf("%s: flag line %q has one dash", name, line)
			}
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s: %q gives its default twice", name, line)
			}
		}
	}
}

// TestServeOnATakenPortNamesTheVariable: a second serve whose port is taken says
// which variable moves it, and leaves no new data dir behind.
func TestServeOnATakenPortNamesTheVariable(t *testing.T) {
	for _, variable := range []string{"LINOONE_RESOLVER_ADDR", "LINOONE_MANAGEMENT_ADDR", "LINOONE_PERSIST_ADDR"} {
		t.Run(variable, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			dataDir := filepath.Join(t.TempDir(), "new")
			env := map[string]string{"LINOONE_DATA_DIR": dataDir, "LINOONE_RESOLVER_ADDR": testport.Free(t),
				"LINOONE_MANAGEMENT_ADDR": testport.Free(t), "LINOONE_PERSIST_ADDR": testport.Free(t)}
			env[variable] = taken.Addr().String()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, &stdout, &stderr)
			want := taken.Addr().String() + " is in use (another linoone serve?): set " + variable + " to another address"
			if code != 1 || !strings.Contains(stderr.String(), want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, &stderr, want)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("serve made the data dir though it could not bind: %v", err)
			}
		})
	}
}
