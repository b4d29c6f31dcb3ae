//go:build linux

// Package lambdas_test runs the three Lambda functions the way Lambda runs them: each
// bootstrap is built for the host and started under the official Runtime Interface
// Emulator (aws-lambda-rie, installed by scripts/install-rie.sh), then invoked with
// the recorded API Gateway v2 and SQS events in lambdas/<function>/testdata. The
// functions talk to local Persist, goaws (the click DLQ) and a fake EventBridge
// PutEvents endpoint, reached through the SDK's AWS_ENDPOINT_URL_<SERVICE> variables
// exactly as a deployed function reaches AWS. It also checks the reproducible zips.
// Beside them runs lambdas/internal/floor, the bare aws-lambda-go runtime, whose
// init is the floor of the functions' own on the same run.
//
// The file is Linux-only: the emulator and the bootstraps (provided.al2023) are.
package lambdas_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone"
	"github.com/linoone/linoone/internal/aws/clickdlq"
	"github.com/linoone/linoone/internal/aws/clickdlq/sqstest"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/eventid"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/testutil/schematest"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
	"github.com/linoone/linoone/internal/testutil/testlayer"
	"github.com/linoone/linoone/internal/testutil/testport"
)

const (
	dlqName         = "linoone-click-dlq"
	busName         = "linoone-test-bus"
	resolverBaseURL = "https://abc123defg.execute-api.us-east-1.amazonaws.com"
	accessKeyID     = "AKIDRIETEST"
	secretAccessKey = "rie-test-secret-access-key"
	sessionToken    = "rie-test-session-token"
	// recordedToken is the token in the recorded events; tests replace it with the
	// token they created.
	recordedToken = "7BTadEDkJ8"
	// targetURL is the target of the recorded POST /shorten event.
	targetURL = "https://example.com/landing?message_id=msg_123&utm_source=rie"

	// The resolver base URL of the deployed configuration (terraform/modules/stack).
	deployedResolverBaseURL = "https://links.example.net"
	// denyListParam holds a deny list whose host rule blocks targetURL (issue 11).
	denyListParam = "/linoone/rie-test/denylist"
)

// goaws serves the click DLQ; it keeps global state, so it starts once per process.
var goaws *sqstest.Server

func TestMain(m *testing.M) {
	s, err := sqstest.Start(dlqName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start goaws:", err)
		os.Exit(1)
	}
	goaws = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

func TestLambdasUnderRIE(t *testing.T) {
	rie := riePath(t)
	store := openPersist(t)
	persistURL := serve(t, store.Handler())
	// The same store behind a SigV4 check, for the deployed configuration.
	verifier, err := sigv4.New(sigv4.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey}, "us-east-1", "execute-api")
	if err != nil {
		t.Fatal(err)
	}
	signedPersistURL := serve(t, verifier.Middleware(nil)(store.Handler()))
	bus := &fakeBus{}
	busURL := serve(t, bus)
	ssm := &fakeSSM{params: map[string]string{denyListParam: "# deny list: one rule per line\nnot a rule\nEXAMPLE.com.\n"}}
	ssmURL := serve(t, ssm)
	bootstraps := buildBootstraps(t, "issue", "resolve", "replay", "internal/floor")

	env := func(name string, extra ...string) []string {
		home := t.TempDir()
		return append([]string{
			"PATH=/usr/bin:/bin",
			"HOME=" + home,
			"AWS_REGION=us-east-1",
			"AWS_ACCESS_KEY_ID=" + accessKeyID,
			"AWS_SECRET_ACCESS_KEY=" + secretAccessKey,
			"AWS_SESSION_TOKEN=" + sessionToken, // Lambda's role credentials always have one
			// No shared config or credentials files, no instance metadata: only what
			// a Lambda function has.
			"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"),
			"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
			"AWS_EC2_METADATA_DISABLED=true",
			"AWS_LAMBDA_FUNCTION_NAME=linoone-" + name,
			"AWS_LAMBDA_FUNCTION_TIMEOUT=15",
			"LINOONE_ENVIRONMENT=rie-test",
		}, extra...)
	}
	direct := []string{"LINOONE_PERSIST_URL=" + persistURL, "LINOONE_RESOLVER_BASE_URL=" + resolverBaseURL}
	clickEnv := []string{
		"LINOONE_EVENT_BUS=" + busName,
		"LINOONE_CLICK_DLQ_URL=" + goaws.QueueURL(dlqName),
		"AWS_ENDPOINT_URL_EVENTBRIDGE=" + busURL,
		"AWS_ENDPOINT_URL_SQS=" + goaws.Endpoint,
	}
	issue := startRIE(t, rie, "issue", bootstraps["issue"], env("issue", direct...))
	resolve := startRIE(t, rie, "resolve", bootstraps["resolve"], env("resolve", append(direct, clickEnv...)...))
	replay := startRIE(t, rie, "replay", bootstraps["replay"], env("replay", clickEnv...))
	// The bare aws-lambda-go runtime: the floor of the functions' init on this run.
	floor := startRIE(t, rie, "floor (bare aws-lambda-go)", bootstraps["internal/floor"], env("floor"))
	// The issue function as terraform/modules/stack configures it: URLs in its
	// environment (no SSM call at start, issue 48), Persist calls signed with the
	// function's credentials. An SSM call would reach the fake and be seen.
	issueDeployed := startRIE(t, rie, "issue (deployed configuration)", bootstraps["issue"], env("issue",
		"LINOONE_PERSIST_URL="+signedPersistURL,
		"LINOONE_RESOLVER_BASE_URL="+deployedResolverBaseURL,
		"LINOONE_PERSIST_SIGV4=true",
		"AWS_ENDPOINT_URL_SSM="+ssmURL))
	// The resolve function with the deny list in an SSM parameter.
	resolveDenied := startRIE(t, rie, "resolve (deny list)", bootstraps["resolve"], env("resolve", append(append(direct, clickEnv...),
		"LINOONE_DENYLIST_PARAM="+denyListParam, "AWS_ENDPOINT_URL_SSM="+ssmURL)...))

	pc, err := persist.New(persist.Config{BaseURL: persistURL})
	if err != nil {
		t.Fatal(err)
	}
	var (
		link       shorturl.ShortURL // issued by the issue function
		deadLetter string            // a click DLQ message body written by the resolve function
	)

	t.Run("floor", func(t *testing.T) {
		ev := []byte(`{"ping":"floor"}`)
		got := floor.invoke(t, ev)
		floor.logInit(t)
		if !bytes.Equal(got, ev) {
			t.Errorf("the bare function answered %s, want its event back", got)
		}
	})

	t.Run("issue", func(t *testing.T) {
		resp := issue.api(t, event(t, "issue", "shorten.json"))
		issue.logInit(t)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /shorten: status %d, body %s", resp.StatusCode, resp.Body)
		}
		if ct := header(resp, "Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		var got struct {
			Token    string `json:"token"`
			ShortURL string `json:"short_url"`
		}
		decodeStrict(t, resp.Body, &got)
		if len(got.Token) != shorturl.TokenLength || !shorturl.IsToken(got.Token) {
			t.Fatalf("token %q is not %d base62 characters", got.Token, shorturl.TokenLength)
		}
		if want := resolverBaseURL + "/" + got.Token; got.ShortURL != want {
			t.Errorf("short_url %q, want %q", got.ShortURL, want)
		}
		stored, err := pc.Lookup(context.Background(), shorturl.Token(got.Token))
		if err != nil {
			t.Fatalf("the short URL is not in local Persist: %v", err)
		}
		want := shorturl.ShortURL{Token: shorturl.Token(got.Token), Path: got.ShortURL, Target: targetURL}
		if diff := cmp.Diff(want, stored); diff != "" {
			t.Errorf("short URL in Persist (-want +got):\n%s", diff)
		}
		link = stored

		for _, tt := range []struct {
			file, problemType string
		}{
			{"shorten_bad_scheme.json", "urn:linoone:problem:target-url-scheme"},
			{"shorten_unknown_field.json", "urn:linoone:problem:unknown-field"},
		} {
			resp := issue.api(t, event(t, "issue", tt.file))
			checkProblem(t, tt.file, resp, http.StatusBadRequest, tt.problemType)
		}

		resp = issue.api(t, event(t, "issue", "stats.json", recordedToken, got.Token))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /links/%s/stats: status %d, body %s", got.Token, resp.StatusCode, resp.Body)
		}
		type statsBody struct {
			Token     string            `json:"token"`
			Clicks    *int64            `json:"clicks"`
			Unique    *int64            `json:"unique_visitors"`
			ByDay     []json.RawMessage `json:"by_day"`
			Breakdown map[string][]any  `json:"breakdown"`
		}
		var stats statsBody
		decodeStrict(t, resp.Body, &stats)
		if stats.Token != got.Token || stats.Clicks == nil || *stats.Clicks != 0 || stats.Unique == nil || *stats.Unique != 0 || len(stats.ByDay) != 30 || stats.Breakdown != nil {
			t.Errorf("stats %s, want token %s, clicks 0, unique visitors 0 and 30 days", resp.Body, got.Token)
		}
		// Issue 41: the breakdown, asked for, lists each dimension (empty: no clicks).
		resp = issue.api(t, event(t, "issue", "stats.json", recordedToken, got.Token, `"rawQueryString": ""`, `"rawQueryString": "breakdown=browser,os,device"`))
		stats = statsBody{}
		decodeStrict(t, resp.Body, &stats)
		if resp.StatusCode != http.StatusOK || len(stats.Breakdown) != 3 || stats.Breakdown["browser"] == nil {
			t.Errorf("stats with a breakdown: %d %s", resp.StatusCode, resp.Body)
		}
		resp = issue.api(t, event(t, "issue", "stats_window.json", recordedToken, got.Token))
		checkProblem(t, "stats_window.json", resp, http.StatusBadRequest, "urn:linoone:problem:stats-window-order")

		resp = issue.api(t, event(t, "issue", "link.json", recordedToken, got.Token))
		var link struct {
			Token     string `json:"token"`
			ShortURL  string `json:"short_url"`
			TargetURL string `json:"target_url"`
			CreatedAt string `json:"created_at"`
			Blocked   bool   `json:"blocked"`
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /links/%s: status %d, body %s", got.Token, resp.StatusCode, resp.Body)
		}
		decodeStrict(t, resp.Body, &link)
		if link.Token != got.Token || link.ShortURL != got.ShortURL || link.TargetURL == "" || link.CreatedAt == "" {
			t.Errorf("link %s, want token %s with its target and created_at", resp.Body, got.Token)
		}

		// The public routes (authorization NONE: no IAM authorizer in the context).
		resp = issue.api(t, event(t, "issue", "docs.json"))
		if resp.StatusCode != http.StatusOK || header(resp, "Content-Type") != "text/html" ||
			!strings.HasPrefix(header(resp, "Content-Security-Policy"), "default-src 'none'") ||
			!strings.Contains(resp.Body, `id="operation/shorten"`) {
			t.Errorf("GET /docs: status %d, Content-Type %q, CSP %q, %d bytes", resp.StatusCode,
				header(resp, "Content-Type"), header(resp, "Content-Security-Policy"), len(resp.Body))
		}
		resp = issue.api(t, event(t, "issue", "docs.json", `/docs"`, `/openapi.yaml"`))
		if resp.StatusCode != http.StatusOK || header(resp, "Content-Type") != "application/yaml" || resp.Body != linoone.OpenAPI {
			t.Errorf("GET /openapi.yaml: status %d, Content-Type %q, the embedded openapi.yaml: %v",
				resp.StatusCode, header(resp, "Content-Type"), resp.Body == linoone.OpenAPI)
		}
	})

	t.Run("issue with the deployed configuration", func(t *testing.T) {
		resp := issueDeployed.api(t, event(t, "issue", "shorten.json"))
		issueDeployed.logInit(t)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /shorten: status %d, body %s", resp.StatusCode, resp.Body)
		}
		var got struct {
			Token    string `json:"token"`
			ShortURL string `json:"short_url"`
		}
		decodeStrict(t, resp.Body, &got)
		if want := deployedResolverBaseURL + "/" + got.Token; got.ShortURL != want {
			t.Errorf("short_url %q, want %q (LINOONE_RESOLVER_BASE_URL)", got.ShortURL, want)
		}
		// The signed Persist refuses unsigned calls: the short URL is there only if
		// the function signed its calls with its credentials for execute-api.
		if _, err := pc.Lookup(context.Background(), shorturl.Token(got.Token)); err != nil {
			t.Errorf("the short URL is not in local Persist: %v", err)
		}
		// The only parameter read is the deny list, by the resolve function that has one.
		calls := ssm.calls()
		for _, name := range calls.names {
			if name != denyListParam {
				t.Errorf("SSM GetParameter %s: the deployed issue function's start read SSM", name)
			}
		}
		for _, a := range calls.authorizations {
			if !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential="+accessKeyID+"/") || !strings.Contains(a, "/us-east-1/ssm/aws4_request") {
				t.Errorf("GetParameter not signed for ssm in us-east-1 with the function's key: %q", credential(a))
			}
		}
	})

	t.Run("resolve", func(t *testing.T) {
		if link.Token == "" { // the issue subtest did not run or failed: issue with the real code
			link = seedLink(t, pc)
		}
		for i, file := range []string{"resolve.json", "resolve_ipv6.json"} {
			raw := event(t, "resolve", file, recordedToken, string(link.Token))
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			n := bus.count()
			resp := resolve.api(t, raw)
			if i == 0 {
				resolve.logInit(t)
			}
			checkRedirect(t, file, resp, link.Target)
			entries := bus.since(n)
			if len(entries) != 1 {
				t.Fatalf("%s: %d PutEvents entries, want 1: %+v", file, len(entries), entries)
			}
			e := entries[0]
			checkEntry(t, file, e)
			if !e.Accepted {
				t.Errorf("%s: the bus rejected the entry", file)
			}
			visit := edgeProperties(t, e.Detail)
			if got, want := visit[clickfact.PropVisitorIP], ev.RequestContext.HTTP.SourceIP; got != want {
				t.Errorf("%s: visitor_ip_address %v, want the event's sourceIp %q", file, got, want)
			}
			if got, want := visit[clickfact.PropUserAgent], ev.Headers["user-agent"]; got != want {
				t.Errorf("%s: user_agent %v, want the event's %q", file, got, want)
			}
		}
		checkHotSetMetrics(t, resolve.out)

		for _, tt := range []struct{ name, token string }{
			{"unknown token", "ZZZZZZZZZZ"},
			{"invalid token", "0123456789x"},
			{"invalid characters", "abc.de_fgh"},
		} {
			n := bus.count()
			// An API client gets the problem; the recorded browser (issue 41) a page.
			resp := resolve.api(t, event(t, "resolve", "resolve.json", recordedToken, tt.token, recordedAccept, "application/json"))
			checkProblem(t, tt.name, resp, http.StatusNotFound, "urn:linoone:problem:not-found")
			resp = resolve.api(t, event(t, "resolve", "resolve.json", recordedToken, tt.token))
			checkPage(t, tt.name+", browser", resp, http.StatusNotFound, "Link not found")
			if entries := bus.since(n); len(entries) != 0 {
				t.Errorf("%s: a click was published: %+v", tt.name, entries)
			}
		}

		// The bus refuses the entry: the visitor is redirected anyway and the fact
		// goes to the click DLQ.
		bus.reject(func(string) bool { return true })
		defer bus.reject(nil)
		n := bus.count()
		resp := resolve.api(t, event(t, "resolve", "resolve.json", recordedToken, string(link.Token)))
		checkRedirect(t, "failing bus", resp, link.Target)
		entries := bus.since(n)
		if len(entries) != 1 || entries[0].Accepted {
			t.Fatalf("failing bus: want one rejected PutEvents entry, got %+v", entries)
		}
		checkEntry(t, "failing bus", entries[0])
		key := entries[0].IdempotencyKey
		msg := receiveDeadLetter(t, key)
		body := aws.ToString(msg.Body)
		schematest.MustValidate(t, schematest.ClickDLQ, []byte(body))
		var raw struct {
			GraphFact struct {
				IdempotencyKey string `json:"idempotency_key"`
			} `json:"graph_fact"`
		}
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			t.Fatal(err)
		}
		if raw.GraphFact.IdempotencyKey != key {
			t.Errorf("dead letter graph_fact.idempotency_key %q, want %q", raw.GraphFact.IdempotencyKey, key)
		}
		d, _, err := clickfact.ParseDeadLetter([]byte(body))
		if err != nil {
			t.Fatalf("dead letter: %v", err)
		}
		if !bytes.Equal(d.GraphFact, []byte(entries[0].Detail)) {
			t.Errorf("dead letter graph_fact differs from the refused detail:\n%s\n%s", d.GraphFact, entries[0].Detail)
		}
		if d.Attempts != 1 || !strings.Contains(d.Reason, "eventbridge rejected the entry") {
			t.Errorf("dead letter attempts %d, reason %q", d.Attempts, d.Reason)
		}
		if a := aws.ToString(msg.MessageAttributes[clickdlq.AttrIdempotencyKey].StringValue); a != key {
			t.Errorf("message attribute %s = %q, want %q", clickdlq.AttrIdempotencyKey, a, key)
		}
		deadLetter = body
	})

	t.Run("replay", func(t *testing.T) {
		// Two dead letters built by the real code: the one the resolve function wrote
		// (when that subtest ran) and a fresh one; then a body that is none.
		first := deadLetter
		if first == "" {
			first = buildDeadLetter(t)
		}
		second := buildDeadLetter(t)
		_, f1, err := clickfact.ParseDeadLetter([]byte(first))
		if err != nil {
			t.Fatal(err)
		}
		_, f2, err := clickfact.ParseDeadLetter([]byte(second))
		if err != nil {
			t.Fatal(err)
		}
		raw, ids := sqsEvent(t, first, second)

		bus.reject(func(key string) bool { return key == f2.IdempotencyKey })
		defer bus.reject(nil)
		n := bus.count()
		out := replay.invoke(t, raw)
		replay.logInit(t)
		var resp events.SQSEventResponse
		decodeStrict(t, string(out), &resp)
		want := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ids[1]}, {ItemIdentifier: ids[2]}}}
		if diff := cmp.Diff(want, resp); diff != "" {
			t.Errorf("batch item failures (-want +got):\n%s", diff)
		}

		var accepted, rejected []putEntry
		for _, e := range bus.since(n) {
			checkEntry(t, "replay", e)
			if e.Accepted {
				accepted = append(accepted, e)
			} else {
				rejected = append(rejected, e)
			}
		}
		if len(accepted) != 1 || accepted[0].IdempotencyKey != f1.IdempotencyKey {
			t.Fatalf("accepted entries %+v, want only %s", accepted, f1.IdempotencyKey)
		}
		if accepted[0].Detail != string(f1.Detail) {
			t.Errorf("replayed detail is not byte-identical to the dead letter's fact:\n got %s\nwant %s", accepted[0].Detail, f1.Detail)
		}
		if len(rejected) == 0 {
			t.Error("the failing fact never reached the bus")
		}
		for _, e := range rejected {
			if e.IdempotencyKey != f2.IdempotencyKey || e.Detail != string(f2.Detail) {
				t.Errorf("rejected entry %s, want only %s, unchanged", e.IdempotencyKey, f2.IdempotencyKey)
			}
		}
	})

	// Issue 11: a short URL whose target the deny list (an SSM parameter, malformed
	// line and all) blocks answers 410 link-blocked, and no click is published.
	t.Run("resolve a blocked link", func(t *testing.T) {
		if link.Token == "" {
			link = seedLink(t, pc)
		}
		n := bus.count()
		resp := resolveDenied.api(t, event(t, "resolve", "resolve.json", recordedToken, string(link.Token), recordedAccept, "*/*"))
		resolveDenied.logInit(t)
		checkProblem(t, "blocked link", resp, http.StatusGone, "urn:linoone:problem:link-blocked")
		page := resolveDenied.api(t, event(t, "resolve", "resolve.json", recordedToken, string(link.Token)))
		checkPage(t, "blocked link, browser", page, http.StatusGone, "Link taken down")
		if !strings.Contains(resp.Body, "host rule") {
			t.Errorf("the problem does not name the rule kind: %s", resp.Body)
		}
		if entries := bus.since(n); len(entries) != 0 {
			t.Errorf("a blocked link published a click: %+v", entries)
		}
		if !slices.Contains(ssm.calls().names, denyListParam) {
			t.Errorf("the deny list parameter was never read: %v", ssm.calls().names)
		}
	})
}

// riePath finds aws-lambda-rie in PATH, GOBIN or GOPATH/bin. A missing emulator fails
// the test: CI installs it first.
func riePath(t *testing.T) string {
	t.Helper()
	testlayer.Skip(t, testlayer.Emulator)
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	var dirs []string
	if gobin := goEnv(t, "GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, p := range filepath.SplitList(goEnv(t, "GOPATH")) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "aws-lambda-rie")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Fatalf("aws-lambda-rie is not in PATH nor in %v: run scripts/install-rie.sh", dirs)
	return ""
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// buildBootstraps builds the functions (lambdas/<fn>) for the host in one go build
// and returns each bootstrap's path (<dir>/<fn>/bootstrap).
func buildBootstraps(t *testing.T, fns ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "build") + string(filepath.Separator)
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-o", out}
	for _, fn := range fns {
		args = append(args, "./lambdas/"+fn)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	paths := make(map[string]string, len(fns))
	for _, fn := range fns {
		p := filepath.Join(dir, fn, "bootstrap")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(out, filepath.Base(fn)), p); err != nil {
			t.Fatal(err)
		}
		paths[fn] = p
	}
	return paths
}

// openPersist opens local Persist on a temporary file.
func openPersist(t *testing.T) *localpersist.Store {
	t.Helper()
	store, err := localpersist.Open(context.Background(), filepath.Join(t.TempDir(), "persist.db"), localpersist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("close local persist: %v", err)
		}
	})
	return store
}

// serve serves h on a loopback port until the test ends and returns its URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// emulator is one aws-lambda-rie process running one bootstrap.
type emulator struct {
	name string
	url  string          // the invocation URL
	out  *syncbuf.Buffer // the emulator's and the function's stdout and stderr
	done chan struct{}   // closed when the process has exited
}

// startRIE starts the emulator on two free loopback ports, waits until it accepts
// connections, and kills its process group when the test ends.
func startRIE(t *testing.T, rie, name, bootstrap string, env []string) *emulator {
	t.Helper()
	invokeAddr, runtimeAddr := testport.Free(t), testport.Free(t)
	cmd := exec.Command(rie,
		"--runtime-interface-emulator-address", invokeAddr,
		"--runtime-api-address", runtimeAddr,
		bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	cmd.Env = env
	e := &emulator{
		name: name,
		url:  "http://" + invokeAddr + "/2015-03-31/functions/function/invocations",
		out:  &syncbuf.Buffer{},
		done: make(chan struct{}),
	}
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", rie, err)
	}
	go func() {
		_ = cmd.Wait()
		close(e.done)
	}()
	t.Cleanup(func() {
		// The emulator starts the bootstrap in a process group of its own: find it
		// before the emulator is gone, kill both, and wait for both.
		runtimes := children(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		for _, pid := range runtimes {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-e.done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the emulator did not exit after SIGKILL", name)
		}
		for _, pid := range runtimes {
			if !gone(pid, 10*time.Second) {
				t.Errorf("%s: the bootstrap (pid %d) did not exit after SIGKILL", name, pid)
			}
		}
		if t.Failed() {
			t.Logf("%s: emulator output:\n%s", name, e.out)
		}
	})

	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", invokeAddr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return e
		}
		select {
		case <-e.done:
			t.Fatalf("%s: the emulator exited before it listened:\n%s", name, e.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the emulator did not listen on %s within 10s: %v\n%s", name, invokeAddr, err, e.out)
		}
	}
}

// children lists the child processes of pid (Linux /proc).
func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// gone waits until the process pid (not a child of ours) has exited: it no longer
// exists or is a zombie (a container's init may never reap it).
func gone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		// /proc/<pid>/stat is "pid (comm) state …"; comm may contain spaces.
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var invokeClient = &http.Client{Timeout: 30 * time.Second}

// invoke sends one event and returns the function's response payload. A function
// error (errorType/errorMessage) fails the test.
func (e *emulator) invoke(t *testing.T, event []byte) []byte {
	t.Helper()
	resp, err := invokeClient.Post(e.url, "application/json", bytes.NewReader(event))
	if err != nil {
		t.Fatalf("%s: invoke: %v", e.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read invoke response: %v", e.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: invoke status %d: %s", e.name, resp.StatusCode, body)
	}
	var fnErr struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &fnErr) == nil && (fnErr.ErrorType != "" || fnErr.ErrorMessage != "") {
		t.Fatalf("%s: function error %s: %s", e.name, fnErr.ErrorType, fnErr.ErrorMessage)
	}
	return body
}

// api invokes with an API Gateway v2 event and decodes the proxy response.
func (e *emulator) api(t *testing.T, event []byte) events.APIGatewayV2HTTPResponse {
	t.Helper()
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(e.invoke(t, event), &resp); err != nil {
		t.Fatalf("%s: decode API Gateway response: %v", e.name, err)
	}
	if resp.IsBase64Encoded {
		t.Fatalf("%s: response body is base64-encoded", e.name)
	}
	return resp
}

// initReport is the emulator's log line of the function's init phase. (Its REPORT
// line's Init Duration measures something else and is meaningless there.)
var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// logInit logs the init duration of the function, after its first invocation.
func (e *emulator) logInit(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if m := initReport.FindStringSubmatch(e.out.String()); m != nil {
			ms, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: INIT REPORT init duration %.2f ms", e.name, ms)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: no INIT REPORT line in the emulator's output", e.name)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// event reads lambdas/<fn>/testdata/<file>, with old, new string replacements.
func event(t *testing.T, fn, file string, oldnew ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fn, "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if len(oldnew) > 0 {
		b = []byte(strings.NewReplacer(oldnew...).Replace(string(b)))
	}
	return b
}

// sqsEvent fills the bodies of the first two records of the recorded SQS batch (the
// third is garbage already) and returns it with the three message ids.
func sqsEvent(t *testing.T, bodies ...string) ([]byte, []string) {
	t.Helper()
	var ev struct {
		Records []map[string]any `json:"Records"`
	}
	if err := json.Unmarshal(event(t, "replay", "sqs_batch.json"), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Records) != 3 {
		t.Fatalf("sqs_batch.json has %d records, want 3", len(ev.Records))
	}
	for i, body := range bodies {
		sum := md5.Sum([]byte(body))
		r := ev.Records[i]
		r["body"], r["md5OfBody"] = body, hex.EncodeToString(sum[:])
		_, f, err := clickfact.ParseDeadLetter([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		r["messageAttributes"] = map[string]any{clickdlq.AttrIdempotencyKey: map[string]any{
			"stringValue": f.IdempotencyKey, "stringListValues": []string{}, "binaryListValues": []string{}, "dataType": "String",
		}}
	}
	ids := make([]string, len(ev.Records))
	for i, r := range ev.Records {
		ids[i], _ = r["messageId"].(string)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b, ids
}

// seedLink issues a short URL with the real issuer, straight into Persist.
func seedLink(t *testing.T, pc *persist.Client) shorturl.ShortURL {
	t.Helper()
	iss, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: pc, ResolverBaseURL: resolverBaseURL, Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	u, err := iss.Shorten(context.Background(), targetURL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// buildDeadLetter builds a click DLQ message body with the real code.
func buildDeadLetter(t *testing.T) string {
	t.Helper()
	id, err := eventid.New().Next()
	if err != nil {
		t.Fatal(err)
	}
	c := clickfact.Click{Token: recordedToken, Path: resolverBaseURL + "/" + recordedToken, Target: "https://example.org/a?b=c&d=<e>",
		IP: "192.0.2.44", UserAgent: "replay-test/1.0 (\"quoted\" & <angled>)", At: time.Now()}
	f, err := clickfact.Build(c, id)
	if err != nil {
		t.Fatal(err)
	}
	body, err := clickdlq.Marshal(clickfact.NewDeadLetter(f, time.Now(), 2, errors.New("put: eventbridge rejected the entry")))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// receiveDeadLetter receives the click DLQ message of the fact with the idempotency
// key, deletes it, and returns it.
func receiveDeadLetter(t *testing.T, key string) sqstypes.Message {
	t.Helper()
	ctx := context.Background()
	client := clickdlq.NewClient(goaws.Config(), goaws.Endpoint)
	queue := aws.String(goaws.QueueURL(dlqName))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		// A one-second visibility timeout: a receive whose answer is lost on a loaded
		// machine hides the message for a second, not for the queue's thirty, which
		// outlast the deadline.
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue, MaxNumberOfMessages: 10, VisibilityTimeout: 1,
			MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		for _, m := range out.Messages {
			if _, f, err := clickfact.ParseDeadLetter([]byte(aws.ToString(m.Body))); err != nil || f.IdempotencyKey != key {
				continue
			}
			if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: queue, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Errorf("DeleteMessage: %v", err)
			}
			return m
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no dead letter for %s in the click DLQ", key)
	return sqstypes.Message{}
}

// header reads a response header case-insensitively, as API Gateway does.
func header(resp events.APIGatewayV2HTTPResponse, name string) string {
	for k, v := range resp.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func decodeStrict(t *testing.T, body string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

func checkProblem(t *testing.T, what string, resp events.APIGatewayV2HTTPResponse, status int, problemType string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d; body %s", what, resp.StatusCode, status, resp.Body)
		return
	}
	if ct := header(resp, "Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	if cc := header(resp, "Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", what, cc)
	}
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	decodeStrict(t, resp.Body, &p)
	if p.Type != problemType || p.Status != status || p.Title != http.StatusText(status) || p.Detail == "" {
		t.Errorf("%s: problem %s, want type %s and status %d", what, resp.Body, problemType, status)
	}
}

// recordedAccept is the Accept header of the recorded resolve events: a browser's.
const recordedAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// checkPage checks a resolver's page for a browser: the status, a self-contained
// HTML page under a strict Content-Security-Policy, kept by no cache.
func checkPage(t *testing.T, what string, resp events.APIGatewayV2HTTPResponse, status int, title string) {
	t.Helper()
	if resp.StatusCode != status || header(resp, "Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("%s: %d %q, want %d and a page; body %s", what, resp.StatusCode, header(resp, "Content-Type"), status, resp.Body)
		return
	}
	for name, want := range map[string]string{"Cache-Control": "no-store", "Vary": "Accept"} {
		if got := header(resp, name); got != want {
			t.Errorf("%s: %s %q, want %q", what, name, got, want)
		}
	}
	if csp := header(resp, "Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
	if !strings.Contains(resp.Body, "<h1>"+title+"</h1>") || strings.Contains(strings.ToLower(resp.Body), "<script") {
		t.Errorf("%s: page %s", what, resp.Body)
	}
}

func checkRedirect(t *testing.T, what string, resp events.APIGatewayV2HTTPResponse, target string) {
	t.Helper()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("%s: status %d, want 302; body %s", what, resp.StatusCode, resp.Body)
	}
	if loc := header(resp, "Location"); loc != target {
		t.Errorf("%s: Location %q, want %q", what, loc, target)
	}
	if cc := header(resp, "Cache-Control"); cc != "private, max-age=0" {
		t.Errorf("%s: Cache-Control %q, want %q", what, cc, "private, max-age=0")
	}
}

// checkEntry checks a PutEvents entry's envelope, its signature's scope and its
// detail against the graph fact schema and the fact's own rules.
func checkEntry(t *testing.T, what string, e putEntry) {
	t.Helper()
	if e.Source != clickfact.Source || e.DetailType != clickfact.DetailType || e.EventBusName != busName {
		t.Errorf("%s: entry source %q, detail type %q, bus %q; want %q, %q, %q", what,
			e.Source, e.DetailType, e.EventBusName, clickfact.Source, clickfact.DetailType, busName)
	}
	if !strings.HasPrefix(e.Authorization, "AWS4-HMAC-SHA256 Credential="+accessKeyID+"/") ||
		!strings.Contains(e.Authorization, "/us-east-1/events/aws4_request") {
		t.Errorf("%s: PutEvents not signed for events in us-east-1 with the function's key: %q", what, credential(e.Authorization))
	}
	if e.SecurityToken != sessionToken {
		t.Errorf("%s: X-Amz-Security-Token %q, want the function's session token", what, e.SecurityToken)
	}
	schematest.MustValidate(t, schematest.GraphFact, []byte(e.Detail))
	f, err := clickfact.Parse([]byte(e.Detail))
	if err != nil {
		t.Errorf("%s: detail is not a click fact: %v", what, err)
	} else if f.IdempotencyKey != e.IdempotencyKey {
		t.Errorf("%s: idempotency key %q, recorded %q", what, f.IdempotencyKey, e.IdempotencyKey)
	}
}

// credential is the part of an Authorization header before the signed headers and
// the signature, which are never logged.
func credential(authorization string) string {
	c, _, _ := strings.Cut(authorization, ",")
	return c
}

// edgeProperties returns the properties of the click fact's short_url_visited edge.
func edgeProperties(t *testing.T, detail string) graphson.Properties {
	t.Helper()
	var f struct {
		GraphSON graphson.Document `json:"graphson"`
	}
	if err := json.Unmarshal([]byte(detail), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.GraphSON.Edges) != 1 {
		t.Fatalf("fact has %d edges, want 1", len(f.GraphSON.Edges))
	}
	return f.GraphSON.Edges[0].Properties
}

// putEntry is one PutEvents request entry the fake bus received.
type putEntry struct {
	Source, DetailType, EventBusName, Detail string
	IdempotencyKey                           string // from the detail
	Accepted                                 bool   // false: answered as a failed entry
	Authorization                            string // the request's SigV4 header
	SecurityToken                            string // the request's X-Amz-Security-Token
}

// fakeBus is an EventBridge PutEvents endpoint (AWS JSON 1.1) that records every
// entry and accepts it unless the reject switch says otherwise.
type fakeBus struct {
	mu       sync.Mutex
	rejectFn func(idempotencyKey string) bool
	entries  []putEntry
}

// reject sets the switch: entries whose idempotency key f reports are answered as
// failed (FailedEntryCount > 0); nil accepts everything.
func (b *fakeBus) reject(f func(idempotencyKey string) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rejectFn = f
}

func (b *fakeBus) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}

// since returns the entries recorded after the first n.
func (b *fakeBus) since(n int) []putEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]putEntry(nil), b.entries[n:]...)
}

type putEventsResultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

func (b *fakeBus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" ||
		r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		fail(http.StatusBadRequest, "UnknownOperationException", "only AWSEvents.PutEvents in JSON 1.1")
		return
	}
	var in struct {
		Entries []struct {
			Source, DetailType, EventBusName, Detail string
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := struct {
		FailedEntryCount int
		Entries          []putEventsResultEntry
	}{Entries: []putEventsResultEntry{}}
	for _, e := range in.Entries {
		var d struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		_ = json.Unmarshal([]byte(e.Detail), &d)
		accepted := b.rejectFn == nil || !b.rejectFn(d.IdempotencyKey)
		b.entries = append(b.entries, putEntry{Source: e.Source, DetailType: e.DetailType, EventBusName: e.EventBusName,
			Detail: e.Detail, IdempotencyKey: d.IdempotencyKey, Accepted: accepted,
			Authorization: r.Header.Get("Authorization"), SecurityToken: r.Header.Get("X-Amz-Security-Token")})
		if accepted {
			out.Entries = append(out.Entries, putEventsResultEntry{EventID: fmt.Sprintf("rie-test-%d", len(b.entries))})
		} else {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, putEventsResultEntry{ErrorCode: "InternalFailure", ErrorMessage: "refused by the test"})
		}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

// fakeSSM is an SSM GetParameter endpoint (AWS JSON 1.1) serving fixed String
// parameters and recording the calls.
type fakeSSM struct {
	params map[string]string

	mu             sync.Mutex
	names          []string
	authorizations []string
}

type ssmCalls struct{ names, authorizations []string }

func (s *fakeSSM) calls() ssmCalls {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ssmCalls{append([]string(nil), s.names...), append([]string(nil), s.authorizations...)}
}

func (s *fakeSSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	var in struct{ Name string }
	if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || json.NewDecoder(r.Body).Decode(&in) != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": "UnknownOperationException", "message": "only AmazonSSM.GetParameter"})
		return
	}
	s.mu.Lock()
	s.names = append(s.names, in.Name)
	s.authorizations = append(s.authorizations, r.Header.Get("Authorization"))
	s.mu.Unlock()
	v, ok := s.params[in.Name]
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": "ParameterNotFound", "message": in.Name})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{
		"ARN": "arn:aws:ssm:us-east-1:123456789012:parameter" + in.Name, "DataType": "text",
		"Name": in.Name, "Type": "String", "Value": v, "Version": 1,
	}})
}

// checkHotSetMetrics: the two redirects of one token, a hot set miss then a hit,
// are in the functions' EMF lines (issue 45): the hits and misses on the click-fact
// lines, and the miss's Persist lookup as a PersistLatency value.
func checkHotSetMetrics(t *testing.T, out *syncbuf.Buffer) {
	t.Helper()
	var hits, misses float64
	lookups := 0
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		hits, misses, lookups = 0, 0, 0
		for line := range strings.SplitSeq(out.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || rec["_aws"] == nil {
				continue
			}
			h, _ := rec["HotSetHits"].(float64)
			m, _ := rec["HotSetMisses"].(float64)
			hits, misses = hits+h, misses+m
			if vs, ok := rec["PersistLatency"].([]any); ok && rec["Operation"] == "lookup" {
				lookups += len(vs)
			}
		}
		if (hits == 1 && misses == 1 && lookups == 1) || time.Now().After(deadline) {
			break
		}
	}
	if hits != 1 || misses != 1 || lookups != 1 {
		t.Errorf("EMF: HotSetHits %v, HotSetMisses %v, %d PersistLatency lookup values; want 1, 1 and 1\n%s", hits, misses, lookups, out)
	}
}
