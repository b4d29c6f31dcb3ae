package sqstest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// TestReceivedMessageReturnsAfterItsVisibilityTimeout checks the SQS behaviour tests
// lean on when a receive is lost: a message received and not deleted is hidden for
// its visibility timeout, then received again.
func TestReceivedMessageReturnsAfterItsVisibilityTimeout(t *testing.T) {
	s, err := Start("visibility")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	client := sqs.NewFromConfig(s.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.Endpoint) })
	queueURL := aws.String(s.QueueURL("visibility"))
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: queueURL, MessageBody: aws.String("hello")}); err != nil {
		t.Fatal(err)
	}
	receive := func() []types.Message {
		t.Helper()
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queueURL, MaxNumberOfMessages: 10, VisibilityTimeout: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	first := receive()
	if len(first) != 1 || aws.ToString(first[0].Body) != "hello" {
		t.Fatalf("first receive: %d messages, want the one sent", len(first))
	}
	if again := receive(); len(again) != 0 {
		t.Fatalf("received %d messages within the visibility timeout, want none", len(again))
	}
	if held, hidden := s.Held("visibility"); held != 1 || hidden != 1 {
		t.Fatalf("Held: %d messages, %d hidden; want 1 and 1", held, hidden)
	}
	hidden := time.Now()
	for {
		if msgs := receive(); len(msgs) > 0 {
			// (goaws does not count this receive in ApproximateReceiveCount.)
			if id := aws.ToString(msgs[0].MessageId); len(msgs) != 1 || id != aws.ToString(first[0].MessageId) {
				t.Fatalf("second receive: %d messages, the first %s, want %s alone", len(msgs), id, aws.ToString(first[0].MessageId))
			}
			t.Logf("visible again %v after the first receive", time.Since(hidden).Round(time.Millisecond))
			return
		}
		if ctx.Err() != nil {
			t.Fatal("the message never became visible again")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
