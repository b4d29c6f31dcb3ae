//go:build linux

package lambdas_test

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/persist"
)

// TestFunctionsAnswerBeforeTheirTimeout: a function whose downstream is slower than
// the invocation's time left still answers, and loses nothing, before Lambda stops
// it. Terraform lets api_timeout_seconds be as short as 1 s while publish_timeout and
// Persist's budget for a batch (5 × LINOONE_PERSIST_TIMEOUT) are longer.
func TestFunctionsAnswerBeforeTheirTimeout(t *testing.T) {
	rie := riePath(t)
	store := openPersist(t)
	fast := serve(t, store.Handler())
	inner := store.Handler()
	slowPersist := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		select { // slower than the whole invocation
		case <-time.After(4 * time.Second):
			inner.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	silentBus := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the caller hang up
		select {                           // PutEvents does not answer
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	}))
	pc, err := persist.New(persist.Config{BaseURL: fast})
	if err != nil {
		t.Fatal(err)
	}
	link := seedLink(t, pc)
	bootstraps := buildBootstraps(t, "issue", "resolve")
	env := func(name string, extra ...string) []string {
		home := t.TempDir()
		return append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "AWS_REGION=us-east-1",
			"AWS_ACCESS_KEY_ID=" + accessKeyID, "AWS_SECRET_ACCESS_KEY=" + secretAccessKey, "AWS_SESSION_TOKEN=" + sessionToken,
			"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
			"AWS_EC2_METADATA_DISABLED=true", "AWS_LAMBDA_FUNCTION_NAME=linoone-" + name, "AWS_LAMBDA_FUNCTION_TIMEOUT=2",
			"LINOONE_ENVIRONMENT=rie-test", "LINOONE_RESOLVER_BASE_URL=" + resolverBaseURL}, extra...)
	}

	t.Run("resolve: publish_timeout past the invocation's end", func(t *testing.T) {
		fn := startRIE(t, rie, "resolve (2 s, publish 5 s)", bootstraps["resolve"], env("resolve",
			"LINOONE_PERSIST_URL="+fast, "LINOONE_PUBLISH_TIMEOUT=5s",
			"LINOONE_EVENT_BUS="+busName, "LINOONE_CLICK_DLQ_URL="+goaws.QueueURL(dlqName),
			"AWS_ENDPOINT_URL_EVENTBRIDGE="+silentBus, "AWS_ENDPOINT_URL_SQS="+goaws.Endpoint))
		before, _ := goaws.Held(dlqName)
		resp := fn.api(t, event(t, "resolve", "resolve.json", recordedToken, string(link.Token)))
		checkRedirect(t, "GET /{token}", resp, link.Target)
		if after, _ := goaws.Held(dlqName); after != before+1 {
			t.Errorf("click DLQ holds %d messages, want %d: the fact the bus did not take must be dead-lettered in time", after, before+1)
		}
	})

	t.Run("issue: Persist slower than the invocation", func(t *testing.T) {
		fn := startRIE(t, rie, "issue (2 s, slow Persist)", bootstraps["issue"], env("issue", "LINOONE_PERSIST_URL="+slowPersist,
			"LINOONE_IDEMPOTENCY_SECRET_PARAM="+idempotencySecretParam, "AWS_ENDPOINT_URL_SSM="+serve(t, &secureSSM{value: idempotencySecret})))
		for _, file := range []string{"shorten.json", "shorten_batch.json"} {
			resp := fn.api(t, event(t, "issue", file))
			checkProblem(t, file, resp, http.StatusServiceUnavailable, "urn:linoone:problem:persist-unavailable")
		}
	})
}
