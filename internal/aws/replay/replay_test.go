package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/aws/clickdlq"
	"github.com/linoone/linoone/internal/aws/clickdlq/sqstest"
	"github.com/linoone/linoone/internal/aws/replay"
	"github.com/linoone/linoone/internal/core/clickfact"
)

const queueName = "linoone-click-dlq"

// goaws is the in-process SQS server of this test binary (goaws state is global).
var goaws *sqstest.Server

func TestMain(m *testing.M) {
	s, err := sqstest.Start(queueName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goaws = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

// eventID is the i-th valid event identifier: "ev_" + a 26-character ULID.
func eventID(i int) string { return fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", i) }

func clickFact(t *testing.T, i int) clickfact.Fact {
	t.Helper()
	c := clickfact.Click{Token: "aB3dE5gH7j", Path: "https://l.example/aB3dE5gH7j", Target: fmt.Sprintf("https://shop.example/p?i=%d&x=<y>", i),
		IP: "203.0.113.9", UserAgent: "Mozilla/5.0 & <friends>", At: time.Date(2026, 11, 29, 10, 11, 12, 0, time.UTC).Add(time.Duration(i) * time.Second)}
	f, err := clickfact.Build(c, eventID(i))
	if err != nil {
		t.Fatalf("clickfact.Build: %v", err)
	}
	return f
}

func deadLetterBody(t *testing.T, f clickfact.Fact, attempts int) string {
	t.Helper()
	body, err := clickdlq.Marshal(clickfact.NewDeadLetter(f, time.Date(2026, 11, 29, 10, 12, 0, 0, time.UTC), attempts, errors.New("throttled")))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// fakePublisher records published facts and fails the keys in fail.
type fakePublisher struct {
	fail  map[string]bool
	block bool // wait for the context instead of answering

	mu        sync.Mutex
	published []clickfact.Fact
	inFlight  atomic.Int32
	maxFlight atomic.Int32
}

func (p *fakePublisher) Publish(ctx context.Context, f clickfact.Fact) error {
	n := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	for {
		m := p.maxFlight.Load()
		if n <= m || p.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if p.block {
		<-ctx.Done()
		return ctx.Err()
	}
	time.Sleep(2 * time.Millisecond) // let records overlap
	if p.fail[f.IdempotencyKey] {
		return errors.New("bus says no")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.published = append(p.published, f)
	return nil
}

func (p *fakePublisher) byKey() map[string]clickfact.Fact {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := map[string]clickfact.Fact{}
	for _, f := range p.published {
		m[f.IdempotencyKey] = f
	}
	return m
}

type logLine struct {
	Level                   string `json:"level"`
	Msg                     string `json:"msg"`
	MessageID               string `json:"message_id"`
	ShortURLToken           string `json:"short_url_token"`
	IdempotencyKey          string `json:"idempotency_key"`
	Attempts                int    `json:"attempts"`
	ApproximateReceiveCount int    `json:"approximate_receive_count"`
}

func parseLog(t *testing.T, s string) []logLine {
	t.Helper()
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func failures(ids ...string) []events.SQSBatchItemFailure {
	var out []events.SQSBatchItemFailure
	for _, id := range ids {
		out = append(out, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	return out
}

// TestReplayFromSQS sends dead letters (and one garbage body) through goaws with the
// real SDK, receives them as the Lambda event source would, and replays the batch.
func TestReplayFromSQS(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	client := clickdlq.NewClient(goaws.Config(), goaws.Endpoint)
	queueURL := goaws.QueueURL(queueName)
	dlq, err := clickdlq.New(client, queueURL)
	if err != nil {
		t.Fatal(err)
	}

	const n = 7
	facts := map[string]clickfact.Fact{}
	for i := range n {
		f := clickFact(t, i)
		facts[f.IdempotencyKey] = f
		if err := dlq.DeadLetter(ctx, clickfact.NewDeadLetter(f, time.Now(), 1+i%3, errors.New("throttled"))); err != nil {
			t.Fatalf("DeadLetter %d: %v", i, err)
		}
	}
	const garbage = `{"hello":"not a dead letter"}`
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(garbage)}); err != nil {
		t.Fatalf("SendMessage garbage: %v", err)
	}

	// A short visibility timeout, and each message kept once: a receive whose answer
	// is lost on a loaded machine (the SDK then retries) hides its messages for only
	// two seconds, not for the queue's thirty, which outlast the test.
	var msgs []types.Message
	seen := map[string]bool{}
	for len(msgs) < n+1 && ctx.Err() == nil {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(queueURL),
			MaxNumberOfMessages:         10,
			VisibilityTimeout:           2,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			held, hidden := goaws.Held(queueName)
			t.Fatalf("ReceiveMessage (%d of %d messages received; goaws holds %d, %d of them hidden): %v", len(msgs), n+1, held, hidden, err)
		}
		for _, m := range out.Messages {
			if id := aws.ToString(m.MessageId); !seen[id] {
				seen[id] = true
				msgs = append(msgs, m)
			}
		}
	}
	if len(msgs) != n+1 {
		held, hidden := goaws.Held(queueName)
		t.Fatalf("received %d messages, want %d (goaws holds %d, %d of them hidden)", len(msgs), n+1, held, hidden)
	}

	ev := events.SQSEvent{}
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId:     aws.ToString(m.MessageId),
			ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body:          aws.ToString(m.Body),
			Md5OfBody:     aws.ToString(m.MD5OfBody),
			Attributes:    m.Attributes,
			EventSource:   "aws:sqs",
			AWSRegion:     "us-east-1",
		})
	}

	failKeys := map[string]bool{eventIDKey(1): true, eventIDKey(4): true}
	pub := &fakePublisher{fail: failKeys}
	var logs bytes.Buffer
	var counters replay.Counters
	h, err := replay.New(pub, slog.New(slog.NewJSONHandler(&logs, nil)), &counters)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(ctx, ev)
	if err != nil {
		t.Fatalf("Handle returned an error (would fail the whole batch): %v", err)
	}

	// Expected failures, in batch order: the refused keys and the garbage body.
	var wantFailed []string
	for _, r := range ev.Records {
		var d clickfact.DeadLetter
		_ = json.Unmarshal([]byte(r.Body), &d)
		var key struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		_ = json.Unmarshal(d.GraphFact, &key)
		if r.Body == garbage || failKeys[key.IdempotencyKey] {
			wantFailed = append(wantFailed, r.MessageId)
		}
	}
	if len(wantFailed) != 3 {
		t.Fatalf("test setup: %d expected failures, want 3", len(wantFailed))
	}
	if diff := cmp.Diff(failures(wantFailed...), resp.BatchItemFailures); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}

	published := pub.byKey()
	if len(published) != n-2 {
		t.Errorf("published %d facts, want %d", len(published), n-2)
	}
	for key, f := range facts {
		got, ok := published[key]
		if failKeys[key] {
			if ok {
				t.Errorf("%s was refused but recorded as published", key)
			}
			continue
		}
		if !ok {
			t.Errorf("%s was not republished", key)
			continue
		}
		if got.IdempotencyKey != f.IdempotencyKey || got.EventID != f.EventID || !bytes.Equal(got.Detail, f.Detail) {
			t.Errorf("%s republished as %s / %s, want the same key and byte-identical detail %s", key, got.IdempotencyKey, got.Detail, f.Detail)
		}
	}
	if counters.Replayed.Load() != n-2 || counters.Failed.Load() != 3 {
		t.Errorf("counters replayed=%d failed=%d, want %d and 3", counters.Replayed.Load(), counters.Failed.Load(), n-2)
	}

	var errorLines, warnLines, infoLines int
	for _, l := range parseLog(t, logs.String()) {
		switch l.Level {
		case "ERROR":
			errorLines++
		case "WARN":
			warnLines++
		case "INFO":
			infoLines++
			d, stored, err := clickfact.ParseDeadLetter([]byte(bodyOf(ev, l.MessageID)))
			if err != nil || stored.IdempotencyKey != l.IdempotencyKey || l.Attempts != d.Attempts+1 || l.ApproximateReceiveCount != 1 {
				t.Errorf("log line %+v: want the record's key, attempts %d (stored + 1), approximate_receive_count 1 (err %v)", l, d.Attempts+1, err)
			}
		}
	}
	if errorLines != 1 || warnLines != 2 || infoLines != n-2 {
		t.Errorf("log levels error=%d warn=%d info=%d, want 1, 2, %d:\n%s", errorLines, warnLines, infoLines, n-2, logs.String())
	}
}

func eventIDKey(i int) string { return clickfact.IdempotencyPrefix + eventID(i) }

func bodyOf(ev events.SQSEvent, id string) string {
	for _, r := range ev.Records {
		if r.MessageId == id {
			return r.Body
		}
	}
	return ""
}

func record(id, body string, receives string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"ApproximateReceiveCount": receives}}
}

func TestHandleAttemptsAndReceiveCountAreLogged(t *testing.T) {
	f := clickFact(t, 9)
	var logs bytes.Buffer
	h, err := replay.New(&fakePublisher{fail: map[string]bool{f.IdempotencyKey: true}}, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(t.Context(), events.SQSEvent{Records: []events.SQSMessage{record("m-1", deadLetterBody(t, f, 3), "4")}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(failures("m-1"), resp.BatchItemFailures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	want := []logLine{{Level: "WARN", Msg: "click fact replay failed: left to redrive", MessageID: "m-1", ShortURLToken: "aB3dE5gH7j",
		IdempotencyKey: f.IdempotencyKey, Attempts: 4, ApproximateReceiveCount: 4}}
	if diff := cmp.Diff(want, parseLog(t, logs.String())); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if c := h.Counters(); c.Failed.Load() != 1 || c.Replayed.Load() != 0 {
		t.Errorf("counters failed=%d replayed=%d", c.Failed.Load(), c.Replayed.Load())
	}
}

func TestHandleBoundsConcurrencyAndKeepsOrder(t *testing.T) {
	const n = 35
	fail := map[string]bool{}
	var ev events.SQSEvent
	var want []string
	for i := range n {
		f := clickFact(t, i)
		id := fmt.Sprintf("m-%02d", i)
		if i%4 == 1 {
			fail[f.IdempotencyKey] = true
			want = append(want, id)
		}
		ev.Records = append(ev.Records, record(id, deadLetterBody(t, f, 1), "1"))
	}
	for _, c := range []int{1, 3, replay.DefaultConcurrency} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			pub := &fakePublisher{fail: fail}
			opts := []replay.Option{}
			if c != replay.DefaultConcurrency {
				opts = append(opts, replay.WithConcurrency(c))
			}
			h, err := replay.New(pub, nil, nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.Handle(t.Context(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(failures(want...), resp.BatchItemFailures); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if m := pub.maxFlight.Load(); m > int32(c) || m < 1 {
				t.Errorf("max publishes in flight %d, want 1..%d", m, c)
			}
		})
	}
}

func TestHandlePublishTimeout(t *testing.T) {
	pub := &fakePublisher{block: true}
	h, err := replay.New(pub, nil, nil, replay.WithPublishTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{
		record("a", deadLetterBody(t, clickFact(t, 1), 1), "1"),
		record("b", deadLetterBody(t, clickFact(t, 2), 1), "2"),
	}}
	start := time.Now()
	resp, err := h.Handle(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Handle took %v with a 50ms publish timeout", elapsed)
	}
	if diff := cmp.Diff(failures("a", "b"), resp.BatchItemFailures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

func TestHandleInvalidBodies(t *testing.T) {
	valid := deadLetterBody(t, clickFact(t, 3), 1)
	tests := []struct {
		name string
		body string
	}{
		{name: "empty", body: ""},
		{name: "not json", body: "hello"},
		{name: "unknown field", body: strings.Replace(valid, `"attempts"`, `"extra":1,"attempts"`, 1)},
		{name: "zero attempts", body: strings.Replace(valid, `"attempts":1`, `"attempts":0`, 1)},
		{name: "fact tampered", body: strings.Replace(valid, `203.0.113.9`, `203.0.113.10`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := &fakePublisher{}
			var logs bytes.Buffer
			h, err := replay.New(pub, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.Handle(t.Context(), events.SQSEvent{Records: []events.SQSMessage{record("bad", tt.body, "1"), record("good", valid, "1")}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(failures("bad"), resp.BatchItemFailures); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			var errorLines int
			for _, l := range parseLog(t, logs.String()) {
				if l.Level == "ERROR" {
					errorLines++
					if l.MessageID != "bad" {
						t.Errorf("error logged for %q", l.MessageID)
					}
				}
			}
			if errorLines != 1 {
				t.Errorf("%d ERROR lines, want 1:\n%s", errorLines, logs.String())
			}
			if len(pub.byKey()) != 1 {
				t.Errorf("published %d facts, want only the valid one", len(pub.byKey()))
			}
		})
	}
}

func TestHandleEmptyBatch(t *testing.T) {
	h, err := replay.New(&fakePublisher{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(t.Context(), events.SQSEvent{})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Errorf("empty batch: %+v, %v", resp, err)
	}
}

func TestNewNeedsPublisher(t *testing.T) {
	if _, err := replay.New(nil, nil, nil); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("err %v, want one saying what it needs", err)
	}
}

// TestReplayLogsTheToken: "what happened to token X" follows a click through the
// replay: the line of a replayed fact and of one that failed again each name its
// short URL's token (short_url_token, the field of the issuance and resolver lines).
func TestReplayLogsTheToken(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 11, 12, 0, time.UTC)
	var facts []clickfact.Fact
	for i, tok := range []string{"Tok0000001", "Tok0000002"} {
		f, err := clickfact.Build(clickfact.Click{Token: tok, Path: "https://l.example/" + tok, Target: "https://example.com/",
			IP: "203.0.113.9", UserAgent: "ua", At: at}, eventID(100+i))
		if err != nil {
			t.Fatal(err)
		}
		facts = append(facts, f)
	}
	var logs bytes.Buffer
	pub := &fakePublisher{fail: map[string]bool{facts[1].IdempotencyKey: true}}
	h, err := replay.New(pub, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{record("m-1", deadLetterBody(t, facts[0], 1), "1"), record("m-2", deadLetterBody(t, facts[1], 1), "1")}}
	if _, err := h.Handle(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // message → token
	for _, l := range parseLog(t, logs.String()) {
		got[l.Msg] = l.ShortURLToken
	}
	want := map[string]string{"click fact replayed": "Tok0000001", "click fact replay failed: left to redrive": "Tok0000002"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token by log message (-want +got):\n%s\n%s", diff, logs.String())
	}
}
