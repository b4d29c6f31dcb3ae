package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/testutil/golden"
)

// fakeMoveTasks answers StartMessageMoveTask and ListMessageMoveTasks in the SQS
// JSON protocol, as SQS does, and records what it was asked.
type fakeMoveTasks struct {
	mu      sync.Mutex
	started []map[string]any
	auth    []string
	lists   int
}

func (f *fakeMoveTasks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	_ = json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSQS.StartMessageMoveTask":
		f.started = append(f.started, in)
		_, _ = w.Write([]byte(`{"TaskHandle":"handle-1"}`))
	case "AmazonSQS.ListMessageMoveTasks":
		f.lists++
		status, moved := "RUNNING", 2
		if f.lists > 1 {
			status, moved = "COMPLETED", 5
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Results": []map[string]any{{"TaskHandle": "handle-1", "Status": status,
			"SourceArn": in["SourceArn"], "ApproximateNumberOfMessagesMoved": moved, "ApproximateNumberOfMessagesToMove": 5,
			"StartedTimestamp": time.Now().UnixMilli()}}})
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.sqs#UnsupportedOperation","message":"no"}`))
	}
}

// TestDLQRedrive: linoone dlq redrive starts one SQS move task from the deadletter
// queue named by its URL (Terraform's output) with the SDK, signed for sqs in the
// queue's region, and --wait follows it to the end.
func TestDLQRedrive(t *testing.T) {
	fake := &fakeMoveTasks{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	home := t.TempDir()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIDREDRIVE", "AWS_SECRET_ACCESS_KEY": "redrive-secret",
		"AWS_CONFIG_FILE": filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "", "AWS_PROFILE": ""} {
		t.Setenv(k, v)
	}
	redrivePoll = time.Millisecond
	defer func() { redrivePoll = 5 * time.Second }()
	getenv := func(k string) string {
		if k == "AWS_ENDPOINT_URL_SQS" {
			return srv.URL
		}
		return ""
	}
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"dlq", "redrive", "--from", "https://sqs.eu-west-1.amazonaws.com/123456789012/linoone-prod-click-dlq-deadletter",
		"--rate", "50", "--wait"}, getenv, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	want := "started move task handle-1 from arn:aws:sqs:eu-west-1:123456789012:linoone-prod-click-dlq-deadletter\n" +
		"handle-1 RUNNING: 2 of 5 moved\nhandle-1 COMPLETED: 5 of 5 moved\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if len(fake.started) != 1 || fake.started[0]["SourceArn"] != "arn:aws:sqs:eu-west-1:123456789012:linoone-prod-click-dlq-deadletter" ||
		fake.started[0]["MaxNumberOfMessagesPerSecond"] != float64(50) || fake.started[0]["DestinationArn"] != nil {
		t.Errorf("StartMessageMoveTask input %v, want the deadletter queue's ARN, rate 50 and no destination (back where each came from)", fake.started)
	}
	for _, a := range fake.auth {
		if !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDREDRIVE/") || !strings.Contains(a, "/eu-west-1/sqs/aws4_request") {
			t.Errorf("not signed for sqs in the queue's region: %q", strings.SplitN(a, ",", 2)[0])
		}
	}

	out.Reset()
	if code := run(context.Background(), []string{"dlq", "redrive", "--status", "--from", "arn:aws:sqs:eu-west-1:123456789012:dead"}, getenv, &out, &errOut); code != 0 ||
		out.String() != "handle-1 COMPLETED: 5 of 5 moved\n" || len(fake.started) != 1 {
		t.Errorf("--status: exit %d, %q, %d tasks started", code, out.String(), len(fake.started))
	}
	for _, args := range [][]string{{"dlq", "redrive"}, {"dlq", "redrive", "--from", "dead"}, {"dlq", "redrive", "--from", "arn:aws:sqs:eu-west-1:123456789012:dead", "--rate", "501"}} {
		if code := run(context.Background(), args, getenv, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if len(fake.started) != 1 {
		t.Errorf("a refused command line started a task")
	}
}

func TestDLQRedriveHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "dlq", "redrive", "-h")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	golden.Text(t, "help/dlq-redrive.txt", []byte(stdout))
}
