//go:build linux

package lambdas_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// The idempotency secret parameter of the deployed configuration (issue 10), and the
// IAM principal of the recorded events (requestContext.authorizer.iam.userArn).
const (
	idempotencySecretParam = "/linoone/rie-test/idempotency-secret"
	idempotencySecret      = "rie-test-idempotency-secret-0123456789abcdef"
	producerARN            = "arn:aws:iam::123456789012:user/producer"
)

// secureSSM answers GetParameter for the idempotency secret, only when decryption
// was asked for, as SSM answers a SecureString (encrypted otherwise).
type secureSSM struct {
	value string

	mu        sync.Mutex
	decrypted []bool
}

func (s *secureSSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	var in struct {
		Name           string
		WithDecryption bool
	}
	if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || json.NewDecoder(r.Body).Decode(&in) != nil || in.Name != idempotencySecretParam {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": "ParameterNotFound", "message": in.Name})
		return
	}
	s.mu.Lock()
	s.decrypted = append(s.decrypted, in.WithDecryption)
	s.mu.Unlock()
	v := s.value
	if !in.WithDecryption {
		v = "AQICAHh-ciphertext-not-the-secret"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{
		"ARN": "arn:aws:ssm:us-east-1:123456789012:parameter" + in.Name, "DataType": "text",
		"Name": in.Name, "Type": "SecureString", "Value": v, "Version": 1,
	}})
}

// TestIssueIdempotencyUnderRIE: issue 10 items 2 and 3 in the issue function as
// deployed: the secret from a SecureString, the caller from the request context's
// IAM principal, POST /shorten/batch through the same function.
func TestIssueIdempotencyUnderRIE(t *testing.T) {
	rie := riePath(t)
	store := openPersist(t)
	persistURL := serve(t, store.Handler())
	set, unset := &secureSSM{value: idempotencySecret}, &secureSSM{value: "unset"}
	bootstrap := buildBootstraps(t, "issue")["issue"]
	env := func(ssmURL string) []string {
		home := t.TempDir()
		return []string{
			"PATH=/usr/bin:/bin", "HOME=" + home, "AWS_REGION=us-east-1",
			"AWS_ACCESS_KEY_ID=" + accessKeyID, "AWS_SECRET_ACCESS_KEY=" + secretAccessKey, "AWS_SESSION_TOKEN=" + sessionToken,
			"AWS_CONFIG_FILE=" + home + "/no-config", "AWS_SHARED_CREDENTIALS_FILE=" + home + "/no-credentials",
			"AWS_EC2_METADATA_DISABLED=true", "AWS_LAMBDA_FUNCTION_NAME=linoone-issue", "AWS_LAMBDA_FUNCTION_TIMEOUT=15",
			"LINOONE_ENVIRONMENT=rie-test", "LINOONE_PERSIST_URL=" + persistURL, "LINOONE_RESOLVER_BASE_URL=" + resolverBaseURL,
			"LINOONE_IDEMPOTENCY_SECRET_PARAM=" + idempotencySecretParam, "AWS_ENDPOINT_URL_SSM=" + ssmURL,
		}
	}
	issue := startRIE(t, rie, "issue (idempotency secret set)", bootstrap, env(serve(t, set)))
	placeholder := startRIE(t, rie, "issue (idempotency secret unset)", bootstrap, env(serve(t, unset)))

	want := string(shorturl.DeriveToken([]byte(idempotencySecret), producerARN, "order-4711"))
	first := issue.api(t, event(t, "issue", "shorten_idempotent.json"))
	if first.StatusCode != http.StatusCreated || !strings.Contains(first.Body, `"token":"`+want+`"`) {
		t.Fatalf("first: %d %s, want 201 with token %s (derived from the IAM principal ARN)", first.StatusCode, first.Body, want)
	}
	retry := issue.api(t, event(t, "issue", "shorten_idempotent.json"))
	if retry.StatusCode != http.StatusOK || header(retry, "Idempotent-Replayed") != "true" || retry.Body != first.Body {
		t.Errorf("retry: %d %v %s", retry.StatusCode, retry.Headers, retry.Body)
	}
	other := issue.api(t, event(t, "issue", "shorten_idempotent.json", "utm_source=rie", "utm_source=other"))
	checkProblem(t, "same key, other target", other, http.StatusUnprocessableEntity, "urn:linoone:problem:idempotency-key-reused")
	// Another principal with the same key gets its own token.
	mine := issue.api(t, event(t, "issue", "shorten_idempotent.json", producerARN, "arn:aws:iam::123456789012:role/importer"))
	if mine.StatusCode != http.StatusCreated || strings.Contains(mine.Body, want) {
		t.Errorf("another principal: %d %s", mine.StatusCode, mine.Body)
	}
	// An assumed role's session name changes with each producer process: a retry from
	// another session of the same role finds the short URL the first one issued.
	role := "arn:aws:sts::123456789012:assumed-role/producer-role/"
	fromA := issue.api(t, event(t, "issue", "shorten_idempotent.json", producerARN, role+"aws-go-sdk-1764417600123456789"))
	fromB := issue.api(t, event(t, "issue", "shorten_idempotent.json", producerARN, role+"aws-go-sdk-1764417999000000000"))
	if fromA.StatusCode != http.StatusCreated || fromB.StatusCode != http.StatusOK || fromB.Body != fromA.Body ||
		header(fromB, "Idempotent-Replayed") != "true" {
		t.Errorf("one role, two sessions: %d %s, then %d %s; want 201, then 200 with the same short URL",
			fromA.StatusCode, fromA.Body, fromB.StatusCode, fromB.Body)
	}
	set.mu.Lock()
	if len(set.decrypted) != 1 || !set.decrypted[0] {
		t.Errorf("GetParameter calls with decryption: %v, want one at init, decrypted", set.decrypted)
	}
	set.mu.Unlock()

	var batch struct {
		Results []struct {
			Token    string `json:"token"`
			ShortURL string `json:"short_url"`
			Problem  *struct {
				Type   string `json:"type"`
				Title  string `json:"title"`
				Status int    `json:"status"`
				Detail string `json:"detail"`
			} `json:"problem"`
			Replayed bool `json:"replayed"`
		} `json:"results"`
	}
	for round := range 2 {
		resp := issue.api(t, event(t, "issue", "shorten_batch.json"))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("batch: %d %s", resp.StatusCode, resp.Body)
		}
		batch.Results = nil
		decodeStrict(t, resp.Body, &batch)
		if len(batch.Results) != 4 || batch.Results[1].Problem == nil || batch.Results[1].Problem.Type != "urn:linoone:problem:target-url-scheme" ||
			batch.Results[2].Problem == nil || batch.Results[2].Problem.Type != "urn:linoone:problem:unknown-field" {
			t.Fatalf("batch round %d: %s", round, resp.Body)
		}
		for _, i := range []int{0, 3} {
			r := batch.Results[i]
			if r.Token != string(shorturl.DeriveToken([]byte(idempotencySecret), producerARN, "import-7#"+string(rune('0'+i)))) || r.Replayed != (round == 1) {
				t.Errorf("batch round %d item %d: %+v", round, i, r)
			}
		}
	}

	// The placeholder Terraform writes is no secret: issuance works, keys answer 503.
	checkProblem(t, "placeholder secret", placeholder.api(t, event(t, "issue", "shorten_idempotent.json")),
		http.StatusServiceUnavailable, "urn:linoone:problem:idempotency-unavailable")
	if resp := placeholder.api(t, event(t, "issue", "shorten.json")); resp.StatusCode != http.StatusCreated {
		t.Errorf("without a key, under a placeholder secret: %d %s", resp.StatusCode, resp.Body)
	}
	if strings.Contains(placeholder.out.String(), "unset") && !strings.Contains(placeholder.out.String(), "is not set") {
		t.Errorf("the placeholder value reached the log")
	}
	if strings.Contains(issue.out.String(), idempotencySecret) {
		t.Error("the idempotency secret reached the log")
	}
}
