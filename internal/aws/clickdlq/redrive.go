package clickdlq

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// MoveTaskAPI is the part of *sqs.Client a redrive uses.
type MoveTaskAPI interface {
	StartMessageMoveTask(ctx context.Context, in *sqs.StartMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	ListMessageMoveTasks(ctx context.Context, in *sqs.ListMessageMoveTasksInput, optFns ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
}

var _ MoveTaskAPI = (*sqs.Client)(nil)

// ErrInvalidQueueARN reports an unusable queue ARN.
var ErrInvalidQueueARN = errors.New("invalid sqs queue arn")

// MaxRedriveRate is SQS's bound on a move task's messages per second.
const MaxRedriveRate = 500

var queueARNPattern = regexp.MustCompile(`^arn:aws[a-z\-]*:sqs:([a-z0-9\-]+):\d{12}:[A-Za-z0-9_\-]{1,80}$`)

// RegionOfQueueARN is the region a standard queue's ARN names, or ErrInvalidQueueARN.
func RegionOfQueueARN(arn string) (string, error) {
	m := queueARNPattern.FindStringSubmatch(arn)
	if m == nil {
		return "", fmt.Errorf("%w: %q is not arn:aws:sqs:REGION:ACCOUNT:QUEUE", ErrInvalidQueueARN, arn)
	}
	return m[1], nil
}

// Redrive moves the messages of a dead-letter queue (Source: the click DLQ's own
// deadletter queue, where SQS put the messages replay failed maxReceiveCount times)
// back to a queue (Destination; "": each message's original source, the click DLQ)
// with SQS's StartMessageMoveTask, so that replay takes them again. SQS moves the
// messages itself, bodies and attributes unchanged, at Rate per second (0: SQS
// chooses), and the task outlives the process that started it.
type Redrive struct {
	Source      string // queue ARN
	Destination string // queue ARN, or "" for the original source queue
	Rate        int32  // messages per second, 0 to MaxRedriveRate
}

// MoveTask is the state of a move task, as ListMessageMoveTasks reports it.
type MoveTask struct {
	Handle   string
	Status   string // RUNNING, COMPLETED, CANCELLING, CANCELLED or FAILED
	Moved    int64
	ToMove   int64 // -1 when SQS does not say
	Failure  string
	Started  time.Time
	Finished bool // COMPLETED, CANCELLED or FAILED
}

// Start checks r and starts its move task, returning the task's handle.
func (r Redrive) Start(ctx context.Context, api MoveTaskAPI) (string, error) {
	if _, err := RegionOfQueueARN(r.Source); err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(r.Source)}
	if r.Destination != "" {
		if _, err := RegionOfQueueARN(r.Destination); err != nil {
			return "", fmt.Errorf("destination: %w", err)
		}
		in.DestinationArn = aws.String(r.Destination)
	}
	if r.Rate < 0 || r.Rate > MaxRedriveRate {
		return "", fmt.Errorf("rate %d: want 0 (SQS chooses) to %d messages per second", r.Rate, MaxRedriveRate)
	}
	if r.Rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(r.Rate)
	}
	out, err := api.StartMessageMoveTask(ctx, in)
	if err != nil {
		return "", fmt.Errorf("start message move task from %s: %w", r.Source, err)
	}
	return aws.ToString(out.TaskHandle), nil
}

// LatestMoveTask is the most recent move task from the queue source (an ARN), or
// ok false when there is none.
func LatestMoveTask(ctx context.Context, api MoveTaskAPI, source string) (MoveTask, bool, error) {
	out, err := api.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(source), MaxResults: aws.Int32(1)})
	if err != nil {
		return MoveTask{}, false, fmt.Errorf("list message move tasks from %s: %w", source, err)
	}
	if len(out.Results) == 0 {
		return MoveTask{}, false, nil
	}
	e := out.Results[0]
	t := MoveTask{Handle: aws.ToString(e.TaskHandle), Status: aws.ToString(e.Status), Moved: e.ApproximateNumberOfMessagesMoved,
		ToMove: -1, Failure: aws.ToString(e.FailureReason), Started: time.UnixMilli(e.StartedTimestamp).UTC()}
	if e.ApproximateNumberOfMessagesToMove != nil {
		t.ToMove = *e.ApproximateNumberOfMessagesToMove
	}
	switch strings.ToUpper(t.Status) {
	case "COMPLETED", "CANCELLED", "FAILED":
		t.Finished = true
	}
	return t, true, nil
}

// WaitMoveTask polls the latest move task from source every poll until it is
// finished or ctx ends, calling progress with each state seen. A FAILED task is an
// error naming SQS's reason.
func WaitMoveTask(ctx context.Context, api MoveTaskAPI, source string, poll time.Duration, progress func(MoveTask)) (MoveTask, error) {
	for {
		t, ok, err := LatestMoveTask(ctx, api, source)
		if err != nil {
			return MoveTask{}, err
		}
		if !ok {
			return MoveTask{}, fmt.Errorf("no message move task from %s", source)
		}
		if progress != nil {
			progress(t)
		}
		if t.Finished {
			if t.Status == "FAILED" {
				return t, fmt.Errorf("message move task %s failed: %s", t.Handle, t.Failure)
			}
			return t, nil
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(poll):
		}
	}
}

var queueURLPattern = regexp.MustCompile(`^https://sqs\.([a-z0-9\-]+)\.amazonaws\.com(\.cn)?/(\d{12})/([A-Za-z0-9_\-]{1,80})$`)

// QueueARN is the ARN of a standard queue given by its ARN or its URL
// (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME, as Terraform outputs it).
func QueueARN(arnOrURL string) (string, error) {
	if strings.HasPrefix(arnOrURL, "arn:") {
		_, err := RegionOfQueueARN(arnOrURL)
		return arnOrURL, err
	}
	m := queueURLPattern.FindStringSubmatch(arnOrURL)
	if m == nil {
		return "", fmt.Errorf("%w: %q is neither a queue ARN nor https://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE", ErrInvalidQueueARN, arnOrURL)
	}
	partition := "aws"
	if m[2] != "" {
		partition = "aws-cn"
	}
	return "arn:" + partition + ":sqs:" + m[1] + ":" + m[3] + ":" + m[4], nil
}
