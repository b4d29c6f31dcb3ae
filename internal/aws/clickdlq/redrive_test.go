package clickdlq_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/linoone/linoone/internal/aws/clickdlq"
	"github.com/linoone/linoone/internal/aws/clickdlq/sqstest"
	"github.com/linoone/linoone/internal/core/clickfact"
)

// deadName is the click DLQ's own deadletter queue, where SQS puts what replay
// failed maxReceiveCount times.
const deadName = "linoone-click-dlq-deadletter"

func arnOf(name string) string { return "arn:aws:sqs:us-east-1:" + sqstest.AccountID + ":" + name }

// TestRedrive: issue 48 item 4. A move task started through the real SDK client
// against the SQS stand-in moves every message of the deadletter queue back to the
// click DLQ, bodies and idempotency attributes unchanged, and the wait reports it
// completed.
func TestRedrive(t *testing.T) {
	tasks := sqstest.StartMoveTasks(goaws, map[string]string{deadName: queueName})
	defer tasks.Close()
	api := clickdlq.NewClient(goaws.Config(), tasks.Endpoint)
	dead, err := clickdlq.New(api, goaws.QueueURL(deadName))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // idempotency key → body
	for i := range 3 {
		f := clickFact(t, fmt.Sprintf("ev_01KB0000000000000000000RD%d", i), "https://example.com/r?i=1&j=<2>", "redrive-test/1.0")
		d := clickfact.NewDeadLetter(f, time.Now(), 5, errors.New("put: eventbridge outage"))
		if err := dead.DeadLetter(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		body, err := clickdlq.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		want[f.IdempotencyKey] = body
	}

	handle, err := clickdlq.Redrive{Source: arnOf(deadName), Rate: 100}.Start(t.Context(), api)
	if err != nil || handle == "" {
		t.Fatalf("start: %q, %v", handle, err)
	}
	var seen []string
	task, err := clickdlq.WaitMoveTask(t.Context(), api, arnOf(deadName), 20*time.Millisecond, func(m clickdlq.MoveTask) { seen = append(seen, m.Status) })
	if err != nil {
		t.Fatal(err)
	}
	if task.Handle != handle || task.Status != "COMPLETED" || task.Moved != 3 || task.ToMove != 3 || !task.Finished {
		t.Errorf("task %+v, want %s COMPLETED with 3 of 3 moved", task, handle)
	}
	if len(seen) == 0 || seen[len(seen)-1] != "COMPLETED" {
		t.Errorf("progress saw %v", seen)
	}
	if n, _ := goaws.Held(deadName); n != 0 {
		t.Errorf("the deadletter queue still holds %d messages", n)
	}
	for len(want) > 0 {
		out, err := api.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(goaws.QueueURL(queueName)),
			MaxNumberOfMessages: 10, VisibilityTimeout: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			t.Fatalf("the click DLQ lacks %d of the moved messages", len(want))
		}
		for _, m := range out.Messages {
			key := aws.ToString(m.MessageAttributes[clickdlq.AttrIdempotencyKey].StringValue)
			body, ok := want[key]
			if !ok {
				continue
			}
			if aws.ToString(m.Body) != body {
				t.Errorf("%s: body changed by the move:\n got %s\nwant %s", key, aws.ToString(m.Body), body)
			}
			delete(want, key)
			_, _ = api.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(goaws.QueueURL(queueName)), ReceiptHandle: m.ReceiptHandle})
		}
	}

	// Nothing left: a second task completes with nothing moved.
	if _, err := (clickdlq.Redrive{Source: arnOf(deadName)}).Start(t.Context(), api); err != nil {
		t.Fatal(err)
	}
	if task, err := clickdlq.WaitMoveTask(t.Context(), api, arnOf(deadName), 20*time.Millisecond, nil); err != nil || task.Moved != 0 {
		t.Errorf("empty queue: %+v, %v", task, err)
	}
}

func TestRedriveRefused(t *testing.T) {
	tasks := sqstest.StartMoveTasks(goaws, map[string]string{deadName: queueName})
	defer tasks.Close()
	api := clickdlq.NewClient(goaws.Config(), tasks.Endpoint)
	for _, tt := range []struct {
		name string
		r    clickdlq.Redrive
		is   error
	}{
		{"not an ARN", clickdlq.Redrive{Source: goaws.QueueURL(deadName)}, clickdlq.ErrInvalidQueueARN},
		{"bad destination", clickdlq.Redrive{Source: arnOf(deadName), Destination: "click-dlq"}, clickdlq.ErrInvalidQueueARN},
		{"rate past SQS's", clickdlq.Redrive{Source: arnOf(deadName), Rate: clickdlq.MaxRedriveRate + 1}, nil},
		{"no dead-letter queue", clickdlq.Redrive{Source: arnOf(queueName)}, nil}, // SQS refuses: no original source
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.r.Start(t.Context(), api)
			if err == nil || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Start = %v, want an error (%v)", err, tt.is)
			}
		})
	}
	if _, ok, err := clickdlq.LatestMoveTask(t.Context(), api, arnOf(queueName)); err != nil || ok {
		t.Errorf("tasks from the click DLQ: %v, %v; want none", ok, err)
	}
}
