package retrypolicy_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/linoone/linoone/internal/aws/retrypolicy"
)

// TestInRequest: through the real SDK client, a throttled call is made once, a 5xx
// twice (one retry, within milliseconds), whatever the configuration's own attempts.
func TestInRequest(t *testing.T) {
	for _, tt := range []struct {
		name      string
		status    int
		errType   string
		wantCalls int64
		throttle  bool
	}{
		{"ThrottlingException", http.StatusBadRequest, "ThrottlingException", 1, true},
		{"TooManyRequestsException", http.StatusBadRequest, "TooManyRequestsException", 1, true},
		{"unmodelled 429", http.StatusTooManyRequests, "", 1, true},
		{"internal error", http.StatusInternalServerError, "InternalException", retrypolicy.InRequestMaxAttempts, false},
		{"validation", http.StatusBadRequest, "ValidationException", 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Header().Set("Content-Type", "application/x-amz-json-1.1")
				w.WriteHeader(tt.status)
				if tt.errType != "" {
					_, _ = w.Write([]byte(`{"__type":"` + tt.errType + `","message":"test"}`))
				}
			}))
			defer srv.Close()
			cfg := aws.Config{Region: "us-east-1", RetryMaxAttempts: 5, // a configuration's attempts do not apply
				Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
			c := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) {
				o.Retryer = retrypolicy.InRequest()
				o.RetryMaxAttempts = 0
				o.BaseEndpoint = aws.String(srv.URL)
			})
			start := time.Now()
			_, err := c.PutEvents(t.Context(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{
				Source: aws.String("s"), DetailType: aws.String("d"), Detail: aws.String("{}")}}})
			if err == nil {
				t.Fatal("no error")
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
			if retrypolicy.IsThrottle(err) != tt.throttle {
				t.Errorf("IsThrottle(%v) = %v, want %v", err, !tt.throttle, tt.throttle)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v: the retry waited longer than a redirect can", d)
			}
		})
	}
}
