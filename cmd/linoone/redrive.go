package main

import (
	"context"
	"fmt"
	"io"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/linoone/linoone/internal/aws/clickdlq"
)

const redriveUsage = `usage: linoone dlq redrive --from DEADLETTER_QUEUE [--to QUEUE] [--rate N] [--wait]
       linoone dlq redrive --status --from DEADLETTER_QUEUE

On AWS: moves the click facts that replay gave up on (the click DLQ's own
deadletter queue) back to the click DLQ, where the replay function takes them
again, with SQS's StartMessageMoveTask. SQS moves the messages itself, unchanged;
the task goes on if this command stops. Run it once EventBridge is healthy again
(docs/aws.md, "Replay after an outage"). Credentials and region come from the
AWS environment (profile, role); the region defaults to the queue's. A queue is
named by its ARN or its URL.

example:
  linoone dlq redrive --from "$(terraform output -raw click_deadletter_url)" --rate 50 --wait
`

// redrivePoll is how often --wait asks SQS how the task is going.
var redrivePoll = 5 * time.Second

// redriveCmd starts (or reports) a move task from the click DLQ's deadletter queue.
func redriveCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("dlq redrive")
	from := fs.String("from", "", "ARN or URL of the queue to move messages from: the click DLQ's deadletter queue (required)")
	to := fs.String("to", "", "ARN or URL of the queue to move them to (default: the queue each came from, the click DLQ)")
	rate := fs.Int("rate", 0, fmt.Sprintf("messages per second, up to %d (default: SQS chooses)", clickdlq.MaxRedriveRate))
	wait := fs.Bool("wait", false, "wait until the task has finished, printing its progress")
	status := fs.Bool("status", false, "print the latest move task from --from and start nothing")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *from == "" {
		return &usageError{fs: fs, err: fmt.Errorf("--from is missing")}
	}
	source, err := clickdlq.QueueARN(*from)
	if err != nil {
		return &usageError{fs: fs, err: fmt.Errorf("--from: %w", err)}
	}
	region, _ := clickdlq.RegionOfQueueARN(source)
	dest := *to
	if dest != "" {
		if dest, err = clickdlq.QueueARN(dest); err != nil {
			return &usageError{fs: fs, err: fmt.Errorf("--to: %w", err)}
		}
	}
	if *rate < 0 || *rate > clickdlq.MaxRedriveRate {
		return &usageError{fs: fs, err: fmt.Errorf("--rate %d: want 0 (SQS chooses) to %d", *rate, clickdlq.MaxRedriveRate)}
	}
	if v := getenv("AWS_REGION"); v != "" {
		region = v
	}
	// The full default chain (profiles, SSO, roles): an operator's machine, not Lambda.
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
	if err != nil {
		return fmt.Errorf("load aws config: %w", err)
	}
	api := clickdlq.NewClient(awsCfg, getenv("AWS_ENDPOINT_URL_SQS"))
	progress := func(t clickdlq.MoveTask) {
		toMove := "?"
		if t.ToMove >= 0 {
			toMove = fmt.Sprint(t.ToMove)
		}
		fmt.Fprintf(stdout, "%s %s: %d of %s moved%s\n", t.Handle, t.Status, t.Moved, toMove, failure(t))
	}
	if *status {
		t, ok, err := clickdlq.LatestMoveTask(ctx, api, source)
		if err != nil {
			return err
		}
		if !ok {
			_, err = fmt.Fprintf(stdout, "no move task from %s\n", source)
			return err
		}
		progress(t)
		return nil
	}
	handle, err := clickdlq.Redrive{Source: source, Destination: dest, Rate: int32(*rate)}.Start(ctx, api)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "started move task %s from %s\n", handle, source)
	if !*wait {
		return nil
	}
	_, err = clickdlq.WaitMoveTask(ctx, api, source, redrivePoll, progress)
	return err
}

func failure(t clickdlq.MoveTask) string {
	if t.Failure == "" {
		return ""
	}
	return " (" + t.Failure + ")"
}
