package clickdlq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/aws/clickdlq"
	"github.com/linoone/linoone/internal/aws/clickdlq/sqstest"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/schematest"
)

const queueName = "linoone-click-dlq"

// goaws is the in-process SQS server of this test binary (goaws state is global).
var goaws *sqstest.Server

func TestMain(m *testing.M) {
	s, err := sqstest.Start(queueName, deadName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goaws = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

func clickFact(t *testing.T, eventID, target, userAgent string) clickfact.Fact {
	t.Helper()
	c := clickfact.Click{Token: "aB3dE5gH7j", Path: "https://l.example/aB3dE5gH7j", Target: target,
		IP: "203.0.113.9", UserAgent: userAgent, At: time.Date(2026, 11, 29, 10, 11, 12, 345e6, time.UTC)}
	f, err := clickfact.Build(c, eventID)
	if err != nil {
		t.Fatalf("clickfact.Build: %v", err)
	}
	return f
}

func TestDeadLetterRoundTripsThroughSQS(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	client := clickdlq.NewClient(goaws.Config(), goaws.Endpoint)
	q, err := clickdlq.New(client, goaws.QueueURL(queueName))
	if err != nil {
		t.Fatal(err)
	}
	// "&", "<", ">" and non-ASCII must survive unescaped: a replay publishes these bytes.
	f := clickFact(t, "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", "https://shop.example/p?a=1&b=<2>", "Mozilla/5.0 (X11; <Linux>) Ünïcødé & co")
	d := clickfact.NewDeadLetter(f, time.Date(2026, 11, 29, 10, 11, 13, 0, time.UTC), 1, errors.New("put on bus: ThrottlingException: Rate exceeded"))
	if err := q.DeadLetter(ctx, d); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}

	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:              aws.String(goaws.QueueURL(queueName)),
		MaxNumberOfMessages:   10,
		MessageAttributeNames: []string{"All"},
	})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("received %d messages, want 1", len(out.Messages))
	}
	msg := out.Messages[0]
	defer deleteMessage(t, client, msg)

	want, err := clickdlq.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	schematest.MustValidate(t, schematest.ClickDLQ, []byte(aws.ToString(msg.Body)))
	if got := aws.ToString(msg.Body); got != want {
		t.Errorf("body differs from the dead letter JSON:\n got %s\nwant %s", got, want)
	}
	var back clickfact.DeadLetter
	if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &back); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("dead letter (-sent +received):\n%s", diff)
	}
	if string(back.GraphFact) != string(f.Detail) {
		t.Errorf("graph_fact is not byte-identical to the fact detail:\n got %s\nwant %s", back.GraphFact, f.Detail)
	}
	_, parsed, err := clickfact.ParseDeadLetter([]byte(aws.ToString(msg.Body)))
	if err != nil {
		t.Fatalf("ParseDeadLetter: %v", err)
	}
	if diff := cmp.Diff(f, parsed); diff != "" {
		t.Errorf("fact (-built +parsed back):\n%s", diff)
	}
	attr, ok := msg.MessageAttributes[clickdlq.AttrIdempotencyKey]
	if !ok || aws.ToString(attr.DataType) != "String" || aws.ToString(attr.StringValue) != f.IdempotencyKey {
		t.Errorf("idempotency_key attribute = %+v (present %v), want String %q", attr, ok, f.IdempotencyKey)
	}
}

func deleteMessage(t *testing.T, c *sqs.Client, m types.Message) {
	t.Helper()
	_, err := c.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(goaws.QueueURL(queueName)), ReceiptHandle: m.ReceiptHandle})
	if err != nil {
		t.Errorf("DeleteMessage: %v", err)
	}
}

func TestMarshalKeepsFactBytes(t *testing.T) {
	tests := []struct {
		name string
		ua   string
		want string // substring of the body
	}{
		{name: "html characters stay raw", ua: "a&b<c>d", want: `a&b<c>d`},
		{name: "noncharacters SQS refuses are escaped", ua: "x\uFFFEy\uFFFFz", want: `x\ufffey\uffffz`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clickFact(t, "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", "https://shop.example/", tt.ua)
			d := clickfact.NewDeadLetter(f, time.Unix(0, 0), 2, errors.New("boom"))
			body, err := clickdlq.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(body, tt.want) || strings.ContainsAny(body, "\uFFFE\uFFFF\n") {
				t.Errorf("body %s does not contain %s (or contains a raw noncharacter / newline)", body, tt.want)
			}
			schematest.MustValidate(t, schematest.ClickDLQ, []byte(body))
			back, parsed, err := clickfact.ParseDeadLetter([]byte(body))
			if err != nil {
				t.Fatalf("ParseDeadLetter: %v", err)
			}
			if back.Attempts != 2 || parsed.IdempotencyKey != f.IdempotencyKey {
				t.Errorf("parsed back %+v / %q", back, parsed.IdempotencyKey)
			}
		})
	}
}

// freePort returns a loopback address nobody listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// blackhole accepts connections and never answers.
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
			close(done)
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l.Addr().String()
}

func TestUnreachableQueueFailsWithinDeadline(t *testing.T) {
	tests := []struct {
		name string
		addr func(*testing.T) string
	}{
		{name: "connection refused", addr: freePort},
		{name: "no answer", addr: blackhole},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := "http://" + tt.addr(t)
			queueURL := endpoint + "/" + sqstest.AccountID + "/" + queueName
			q, err := clickdlq.New(clickdlq.NewClient(goaws.Config(), endpoint), queueURL)
			if err != nil {
				t.Fatal(err)
			}
			f := clickFact(t, "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", "https://shop.example/", "ua")
			const deadline = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			start := time.Now()
			err = q.DeadLetter(ctx, clickfact.NewDeadLetter(f, time.Now(), 1, errors.New("boom")))
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("DeadLetter to an unreachable queue succeeded")
			}
			if elapsed > deadline+200*time.Millisecond {
				t.Errorf("DeadLetter took %v, want about the %v deadline", elapsed, deadline)
			}
			if msg := err.Error(); !strings.Contains(msg, "send dead letter "+f.IdempotencyKey) || !strings.Contains(msg, queueURL) {
				t.Errorf("error %q does not name the fact and the queue", msg)
			}
		})
	}
}

type fakeSender struct {
	in  *sqs.SendMessageInput
	err error
}

func (f *fakeSender) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.in = in
	return &sqs.SendMessageOutput{}, f.err
}

func TestDeadLetterWithoutKeyIsStillSent(t *testing.T) {
	fs := &fakeSender{}
	q, err := clickdlq.New(fs, "https://sqs.us-east-1.amazonaws.com/123456789012/q")
	if err != nil {
		t.Fatal(err)
	}
	d := clickfact.DeadLetter{GraphFact: json.RawMessage(`{"not":"a fact"}`), FailedAt: "2026-11-29T10:11:12.000Z", Attempts: 1, Reason: "x"}
	if err := q.DeadLetter(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if fs.in == nil || fs.in.MessageAttributes != nil {
		t.Errorf("want a message without attributes, got %+v", fs.in)
	}
	want := `{"graph_fact":{"not":"a fact"},"failed_at":"2026-11-29T10:11:12.000Z","attempts":1,"reason":"x"}`
	if got := aws.ToString(fs.in.MessageBody); got != want {
		t.Errorf("body %s, want %s", got, want)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := clickdlq.New(nil, "https://q"); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("nil api: err %v", err)
	}
	if _, err := clickdlq.New(&fakeSender{}, "linoone-click-dlq"); !errors.Is(err, clickdlq.ErrInvalidQueueURL) {
		t.Errorf("queue name instead of url: err %v", err)
	}
}

type failingPublisher struct{}

func (failingPublisher) Publish(context.Context, clickfact.Fact) error { return errors.New("bus down") }

// TestDeadLetterLinesNameTheToken: "what happened to token X" follows a click past
// the redirect. With the bus down, the line of a click sent to the DLQ, and, when
// the DLQ send fails too, the lines of a click held in memory or logged whole, each
// name its short URL's token (short_url_token, as the issuance and resolver lines).
func TestDeadLetterLinesNameTheToken(t *testing.T) {
	u := shorturl.ShortURL{Token: "aB3dE5gH7j", Path: "https://l.example/aB3dE5gH7j", Target: "https://example.com/"}
	for _, tc := range []struct {
		name        string
		sendErr     error
		bufferBytes int
		wantMsgs    []string
	}{
		{"dlq takes it", nil, 0, []string{"click fact dead-lettered", "click fact dead-lettered"}},
		// One line per outage, naming the first click's token.
		{"dlq send fails, buffered", errors.New("sqs down"), 1 << 20, []string{"click facts buffered in memory: publish and dead-letter both failed"}},
		{"dlq send fails, logged whole", errors.New("sqs down"), 0, []string{shorturl.MsgLostToLog, shorturl.MsgLostToLog}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := clickdlq.New(&fakeSender{err: tc.sendErr}, "https://sqs.us-east-1.amazonaws.com/123456789012/q")
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			n := 0
			rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: failingPublisher{}, DeadLetters: q,
				EventIDs: func() (string, error) { n++; return fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", n), nil },
				Logger:   slog.New(slog.NewJSONHandler(&logs, nil)), BufferBytes: tc.bufferBytes})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				rec.Record(t.Context(), u, shorturl.Visit{IP: "203.0.113.9", UserAgent: "ua"})
			}
			var msgs []string
			for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
				var l struct {
					Msg   string `json:"msg"`
					Token string `json:"short_url_token"`
				}
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if l.Token != string(u.Token) {
					t.Errorf("line %q names token %q, want %s", l.Msg, l.Token, u.Token)
				}
				msgs = append(msgs, l.Msg)
			}
			if !slices.Equal(msgs, tc.wantMsgs) {
				t.Errorf("log messages %q, want %q", msgs, tc.wantMsgs)
			}
		})
	}
}
