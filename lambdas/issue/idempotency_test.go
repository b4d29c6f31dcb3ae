package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localpersist"
)

// parameter is an SSM parameter whose value the test changes, as an operator's
// put-parameter does.
type parameter struct {
	mu    sync.Mutex
	value string
	reads int
}

func (p *parameter) put(v string) { p.mu.Lock(); p.value = v; p.mu.Unlock() }

func (p *parameter) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads++
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(p.value)}}, nil
}

type emptyStore struct{}

func (emptyStore) Lookup(context.Context, shorturl.Token) (shorturl.ShortURL, error) {
	return shorturl.ShortURL{}, shorturl.ErrNotFound
}
func (emptyStore) Save(context.Context, shorturl.ShortURL) error { return nil }

// TestSecretPutAfterStart: an instance that started before the operator put the
// idempotency secret serves Idempotency-Key requests once its next read finds it,
// and then never reads the parameter again.
func TestSecretPutAfterStart(t *testing.T) {
	ctx := context.Background()
	param := &parameter{value: "unset"}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	secret, err := idempotencySecret(ctx, param, "/linoone/test/idempotency-secret", log)
	if err != nil || secret != nil {
		t.Fatalf("placeholder at start: secret %q, %v", secret, err)
	}
	issuer, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: emptyStore{}, ResolverBaseURL: "https://s.example.com", Rand: bytes.NewReader(make([]byte, 1<<10))})
	if err != nil {
		t.Fatal(err)
	}
	id := shorturl.Idempotent{Caller: "arn:aws:iam::123456789012:user/producer", Key: "order-4711"}
	issue := func() error {
		_, _, err := issuer.ShortenIdempotent(ctx, "https://example.com/a", "", id)
		return err
	}
	p := &secretPoller{api: param, param: "/linoone/test/idempotency-secret", issuer: issuer, log: log}
	p.poll(ctx)
	if err := issue(); !errors.Is(err, shorturl.ErrIdempotencyUnavailable) {
		t.Fatalf("secret still unset: %v, want ErrIdempotencyUnavailable", err)
	}
	param.put("0123456789abcdef0123456789abcdef-put-later")
	p.interval = time.Hour
	p.poll(ctx) // read now: next was never set past the first read's time
	if err := issue(); err != nil {
		t.Fatalf("after the put: %v", err)
	}
	reads := param.reads
	p.next = time.Time{}
	p.poll(ctx)
	if param.reads != reads {
		t.Errorf("the parameter was read again after the secret was set")
	}
	if err := issuer.SetIdempotencySecret([]byte("another-secret-0123456789abcdef-0123")); err == nil {
		t.Error("a second secret replaced the first")
	}
}

// TestSetupPollsForTheSecret: the function as deployed, its parameter read over the
// SSM API. Idempotency-Key requests answer 503 while the parameter holds Terraform's
// placeholder and 201 once the operator has put the secret, in the same instance.
func TestSetupPollsForTheSecret(t *testing.T) {
	secretPollInterval = 0
	t.Cleanup(func() { secretPollInterval = defaultSecretPollInterval })
	param := &parameter{value: "unset"}
	ssmAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in ssm.GetParameterInput
		if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"__type":"UnknownOperationException"}`, http.StatusBadRequest)
			return
		}
		out, _ := param.GetParameter(r.Context(), &in)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": *in.Name, "Type": "SecureString", "Value": *out.Parameter.Value}})
	}))
	t.Cleanup(ssmAPI.Close)
	store, err := localpersist.Open(context.Background(), filepath.Join(t.TempDir(), "persist.db"), localpersist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	persistAPI := httptest.NewServer(store.Handler())
	t.Cleanup(persistAPI.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_ENDPOINT_URL_SSM", ssmAPI.URL)
	env := map[string]string{"AWS_REGION": "us-east-1", "LINOONE_PERSIST_URL": persistAPI.URL,
		"LINOONE_RESOLVER_BASE_URL":        "https://abc123defg.execute-api.us-east-1.amazonaws.com",
		"LINOONE_IDEMPOTENCY_SECRET_PARAM": "/linoone/test/idempotency-secret"}
	h, err := setup(context.Background(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "shorten_idempotent.json"))
	if err != nil {
		t.Fatal(err)
	}
	invoke := func() int {
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if status := invoke(); status != http.StatusServiceUnavailable {
		t.Fatalf("placeholder: %d, want 503", status)
	}
	param.put("0123456789abcdef0123456789abcdef-put-later")
	if status := invoke(); status != http.StatusCreated {
		t.Fatalf("after the put: %d, want 201", status)
	}
}

// silentSSM is an SSM that answers nothing until the caller gives up.
type silentSSM struct{}

func (silentSSM) GetParameter(ctx context.Context, _ *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestSecretPollIsBounded: a read of the secret that SSM does not answer gives up
// after a second, as the deny list's does, instead of holding the request that
// came when the read was due for the rest of the invocation.
func TestSecretPollIsBounded(t *testing.T) {
	issuer, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: emptyStore{}, ResolverBaseURL: "https://s.example.com", Rand: bytes.NewReader(make([]byte, 1<<10))})
	if err != nil {
		t.Fatal(err)
	}
	p := &secretPoller{api: silentSSM{}, param: "/linoone/test/idempotency-secret", issuer: issuer, log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	p.poll(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("poll held the request %v while SSM did not answer", took)
	}
}
