//go:build linux

package lambdas_test

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/persist"
)

// TestDenyListColdStartUnderRIE: issue 48 item 2. A resolve function whose first
// read of the deny list fails (SSM throttles) still starts and redirects, counts
// each such request in DenyListMissing, reads again in the background, and blocks
// once SSM answers; no redirect waits on SSM, which hangs for a while too.
func TestDenyListColdStartUnderRIE(t *testing.T) {
	rie := riePath(t)
	store := openPersist(t)
	persistURL := serve(t, store.Handler())
	pc, err := persist.New(persist.Config{BaseURL: persistURL})
	if err != nil {
		t.Fatal(err)
	}
	link := seedLink(t, pc)
	good := &fakeSSM{params: map[string]string{denyListParam: "EXAMPLE.com.\n"}}
	var state atomic.Value // "throttle", "hang" or "ok"
	state.Store("throttle")
	var reads atomic.Int64
	ssmURL := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		switch state.Load() {
		case "throttle":
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"ThrottlingException","message":"Rate exceeded"}`))
		case "hang":
			_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the caller hang up
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		default:
			good.ServeHTTP(w, r)
		}
	}))
	home := t.TempDir()
	fn := startRIE(t, rie, "resolve (deny list cold start)", buildBootstraps(t, "resolve")["resolve"], []string{
		"PATH=/usr/bin:/bin", "HOME=" + home, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=" + accessKeyID, "AWS_SECRET_ACCESS_KEY=" + secretAccessKey, "AWS_SESSION_TOKEN=" + sessionToken,
		"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_LAMBDA_FUNCTION_NAME=linoone-resolve", "AWS_LAMBDA_FUNCTION_TIMEOUT=15",
		"LINOONE_ENVIRONMENT=rie-test", "LINOONE_PERSIST_URL=" + persistURL,
		"LINOONE_EVENT_BUS=" + busName, "LINOONE_CLICK_DLQ_URL=" + goaws.QueueURL(dlqName),
		"AWS_ENDPOINT_URL_EVENTBRIDGE=" + serve(t, &fakeBus{}), "AWS_ENDPOINT_URL_SQS=" + goaws.Endpoint,
		"LINOONE_DENYLIST_PARAM=" + denyListParam, "AWS_ENDPOINT_URL_SSM=" + ssmURL,
		"LINOONE_DENYLIST_REFRESH=10s",
	})
	ev := event(t, "resolve", "resolve.json", recordedToken, string(link.Token))
	apiEv := event(t, "resolve", "resolve.json", recordedToken, string(link.Token), recordedAccept, "application/json")

	// The first read is throttled: the function starts and redirects, nothing blocked.
	checkRedirect(t, "first read throttled", fn.api(t, ev), link.Target)
	if n := reads.Load(); n != 1 {
		t.Errorf("%d GetParameter calls at start, want 1: a throttled read is not retried by the SDK", n)
	}
	if !eventually(func() bool {
		return regexp.MustCompile(`"` + metrics.DenyListMissing + `":1[,}]`).MatchString(fn.out.String())
	}) {
		t.Errorf("no EMF line counting the request in %s:\n%s", metrics.DenyListMissing, fn.out.String())
	}
	if !strings.Contains(fn.out.String(), "none loaded yet") {
		t.Error("the failed first read was not logged")
	}

	// SSM hangs: the retry is due after a second; the redirect that starts it does
	// not wait for it.
	state.Store("hang")
	time.Sleep(1100 * time.Millisecond)
	start := time.Now()
	checkRedirect(t, "retry while SSM hangs", fn.api(t, ev), link.Target)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("a redirect waited %v on a hanging SSM", d)
	}

	for reads.Load() < 2 { // the retry reached the hanging SSM
		if time.Since(start) > 5*time.Second {
			t.Fatal("no retry of the deny list read after the backoff")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// SSM answers: within the backoff (the hung read times out after 1 s, the next is
	// due 2 s later) the list is in force and the link answers 410.
	state.Store("ok")
	deadline := time.Now().Add(8 * time.Second)
	for {
		resp := fn.api(t, apiEv)
		if resp.StatusCode == http.StatusGone {
			checkProblem(t, "blocked after the retry", resp, http.StatusGone, "urn:linoone:problem:link-blocked")
			break
		}
		checkRedirect(t, "before the retry", resp, link.Target)
		if time.Now().After(deadline) {
			t.Fatalf("the deny list was never loaded after SSM recovered (%d reads):\n%s", reads.Load(), fn.out.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("GetParameter calls: %d", reads.Load())
}
