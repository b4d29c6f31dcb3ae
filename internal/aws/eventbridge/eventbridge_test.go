package eventbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdk "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/aws/eventbridge"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/testutil/schematest"
)

const bus = "arn:aws:events:us-east-1:123456789012:event-bus/engagement"

func clickFact(t *testing.T) clickfact.Fact {
	t.Helper()
	c := clickfact.Click{Token: "aB3dE5gH7j", Path: "https://l.example/aB3dE5gH7j", Target: "https://shop.example/p?a=1&b=<2>",
		IP: "203.0.113.9", UserAgent: "Mozilla/5.0 (X11; Linux) \"quoted\" Ünïcødé", At: time.Date(2026, 11, 29, 10, 11, 12, 345e6, time.UTC)}
	f, err := clickfact.Build(c, "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G")
	if err != nil {
		t.Fatalf("clickfact.Build: %v", err)
	}
	schematest.MustValidate(t, schematest.GraphFact, f.Detail)
	return f
}

// putEntry is a PutEvents request entry as it travels on the wire.
type putEntry struct {
	Source       string
	DetailType   string
	EventBusName string
	Detail       string
}

// fakeBus is an EventBridge PutEvents endpoint (JSON 1.1). Each request is checked
// and recorded, then answered by answer(attempt).
type fakeBus struct {
	t        *testing.T
	answer   func(w http.ResponseWriter, r *http.Request, attempt int)
	attempts atomic.Int32
	entries  chan putEntry
}

func (b *fakeBus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(b.attempts.Add(1))
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" ||
		r.Header.Get("Content-Type") != "application/x-amz-json-1.1" ||
		!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") {
		b.t.Errorf("unexpected request %s %s target=%q content-type=%q authorization=%q", r.Method, r.URL,
			r.Header.Get("X-Amz-Target"), r.Header.Get("Content-Type"), r.Header.Get("Authorization"))
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		b.t.Errorf("read body: %v", err)
	}
	var in struct{ Entries []putEntry }
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || len(in.Entries) != 1 {
		b.t.Errorf("body %s: want one entry (decode error %v)", raw, err)
	} else {
		b.entries <- in.Entries[0]
	}
	b.answer(w, r, n)
}

func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", "req-1")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

const accepted = `{"FailedEntryCount":0,"Entries":[{"EventId":"11710aed-b79e-4468-a20b-bb3c0c3b4860"}]}`

// testConfig retries quickly so tests stay fast; NewClient's own default is
// checked in TestNewClientDefaultsAreBoundedByContext.
func testConfig(maxAttempts int) aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = maxAttempts
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 5 * time.Millisecond, nil })
			})
		},
	}
}

func startBus(t *testing.T, answer func(http.ResponseWriter, *http.Request, int)) (*fakeBus, *httptest.Server) {
	t.Helper()
	b := &fakeBus{t: t, answer: answer, entries: make(chan putEntry, 16)}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, srv
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name         string
		answer       func(w http.ResponseWriter, r *http.Request, attempt int)
		wantAttempts int32
		wantErr      []string // substrings of the error; nil means success
		wantRejected bool
		wantAPICode  string
	}{
		{
			name:         "accepted",
			answer:       func(w http.ResponseWriter, _ *http.Request, _ int) { reply(w, 200, accepted) },
			wantAttempts: 1,
		},
		{
			name: "entry failed",
			answer: func(w http.ResponseWriter, _ *http.Request, _ int) {
				reply(w, 200, `{"FailedEntryCount":1,"Entries":[{"ErrorCode":"InternalFailure","ErrorMessage":"Internal service error"}]}`)
			},
			wantAttempts: 1,
			wantErr:      []string{"InternalFailure", "Internal service error", "shorturl:ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", bus},
			wantRejected: true,
		},
		{
			name: "throttled",
			answer: func(w http.ResponseWriter, _ *http.Request, _ int) {
				reply(w, 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
			},
			wantAttempts: 2,
			wantErr:      []string{"ThrottlingException", "Rate exceeded"},
			wantAPICode:  "ThrottlingException",
		},
		{
			name: "server error",
			answer: func(w http.ResponseWriter, _ *http.Request, _ int) {
				reply(w, 500, `{"__type":"InternalException","message":"try again"}`)
			},
			wantAttempts: 2,
			wantErr:      []string{"InternalException", "500"},
			wantAPICode:  "InternalException",
		},
		{
			name: "server error then accepted on retry",
			answer: func(w http.ResponseWriter, _ *http.Request, attempt int) {
				if attempt == 1 {
					reply(w, 503, `{"__type":"ServiceUnavailable","message":"later"}`)
					return
				}
				reply(w, 200, accepted)
			},
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, srv := startBus(t, tt.answer)
			pub, err := eventbridge.New(eventbridge.NewClient(testConfig(2), srv.URL), bus)
			if err != nil {
				t.Fatal(err)
			}
			f := clickFact(t)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()

			err = pub.Publish(ctx, f)

			if got := b.attempts.Load(); got != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", got, tt.wantAttempts)
			}
			want := putEntry{Source: "shorturl", DetailType: "GraphFactProduced", EventBusName: bus, Detail: string(f.Detail)}
			for range tt.wantAttempts {
				if diff := cmp.Diff(want, <-b.entries); diff != "" {
					t.Errorf("entry (-want +got):\n%s", diff)
				}
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Publish: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Publish succeeded, want an error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if got := errors.Is(err, eventbridge.ErrRejected); got != tt.wantRejected {
				t.Errorf("errors.Is(err, ErrRejected) = %v, want %v", got, tt.wantRejected)
			}
			var apiErr smithy.APIError
			if tt.wantAPICode != "" && (!errors.As(err, &apiErr) || apiErr.ErrorCode() != tt.wantAPICode) {
				t.Errorf("error %v is not API error %s", err, tt.wantAPICode)
			}
		})
	}
}

func TestPublishHangingBusFailsWithinDeadline(t *testing.T) {
	release := make(chan struct{})
	_, srv := startBus(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	pub, err := eventbridge.New(eventbridge.NewClient(testConfig(2), srv.URL), bus)
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 250 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	err = pub.Publish(ctx, clickFact(t))
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("Publish to a hanging bus succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v is not a deadline error", err)
	}
	if elapsed > deadline+250*time.Millisecond {
		t.Errorf("Publish took %v, want about the %v deadline", elapsed, deadline)
	}
}

// TestNewClientDefaultsAreBoundedByContext uses NewClient's own retry settings (the
// SDK's standard backoff, up to seconds) and shows the context still bounds them.
func TestNewClientDefaultsAreBoundedByContext(t *testing.T) {
	b, srv := startBus(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		reply(w, 500, `{"__type":"InternalException","message":"down"}`)
	})
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	pub, err := eventbridge.New(eventbridge.NewClient(cfg, srv.URL), bus)
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	err = pub.Publish(ctx, clickFact(t))
	if err == nil {
		t.Fatal("Publish succeeded against a failing bus")
	}
	if elapsed := time.Since(start); elapsed > deadline+250*time.Millisecond {
		t.Errorf("Publish took %v, want at most about the %v deadline", elapsed, deadline)
	}
	if n := b.attempts.Load(); n < 1 || n > eventbridge.DefaultRetryMaxAttempts {
		t.Errorf("attempts = %d, want 1..%d", n, eventbridge.DefaultRetryMaxAttempts)
	}
}

type fakeAPI struct {
	out *sdk.PutEventsOutput
	err error
}

func (f fakeAPI) PutEvents(context.Context, *sdk.PutEventsInput, ...func(*sdk.Options)) (*sdk.PutEventsOutput, error) {
	return f.out, f.err
}

func TestPublishOddResponses(t *testing.T) {
	tests := []struct {
		name string
		api  fakeAPI
		want string
	}{
		{name: "nil output", api: fakeAPI{}, want: "empty response"},
		{name: "failed count without entries", api: fakeAPI{out: &sdk.PutEventsOutput{FailedEntryCount: 1}}, want: "no entry result"},
		{name: "failed entry", api: fakeAPI{out: &sdk.PutEventsOutput{FailedEntryCount: 1, Entries: []types.PutEventsResultEntry{{
			ErrorCode: aws.String("MalformedDetail"), ErrorMessage: aws.String("Detail is malformed."),
		}}}}, want: "MalformedDetail: Detail is malformed."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, err := eventbridge.New(tt.api, "engagement")
			if err != nil {
				t.Fatal(err)
			}
			err = pub.Publish(t.Context(), clickFact(t))
			if !errors.Is(err, eventbridge.ErrRejected) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrRejected mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := eventbridge.New(nil, bus); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("nil api: err %v", err)
	}
	for _, name := range []string{"", " engagement", "engagement\n", "two words"} {
		if _, err := eventbridge.New(fakeAPI{}, name); !errors.Is(err, eventbridge.ErrInvalidBus) {
			t.Errorf("bus %q: err %v, want ErrInvalidBus", name, err)
		}
	}
}
