// Command replay is the Replay Lambda: it consumes the click DLQ (SQS event source
// with partial batch responses) and republishes each fact unchanged to the shared bus.
// Failed messages are left to SQS redrive and end in the DLQ's own deadletter queue.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/linoone/linoone/internal/app/awswire"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/aws/eventbridge"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/aws/replay"
)

func main() { awswire.Start("replay", setup) }

// setup reads the configuration and wires the replay handler into a Lambda handler.
func setup(ctx context.Context, getenv func(string) string) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	cfg, err := config.LoadReplayFunction(getenv)
	if err != nil {
		return nil, fmt.Errorf("bad configuration: %w", err)
	}
	awsCfg, log, err := awswire.Load(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	pub, err := eventbridge.New(eventbridge.NewClient(awsCfg, ""), cfg.EventBus)
	if err != nil {
		return nil, fmt.Errorf("event bus: %w", err)
	}
	counters := &replay.Counters{}
	rh, err := replay.New(pub, log, counters)
	if err != nil {
		return nil, fmt.Errorf("handler: %w", err)
	}
	emf, err := metrics.New(os.Stdout, cfg.MetricsNamespace, cfg.Environment, metrics.Replays(&counters.Replayed, &counters.Failed)...)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		ctx, cancel := awswire.AnswerBy(ctx) // answer before Lambda stops the invocation
		defer cancel()
		resp, err := rh.Handle(ctx, ev)
		if ferr := emf.Flush(time.Now()); ferr != nil {
			log.Error("replay: emit metrics", "err", ferr)
		}
		return resp, err
	}, nil
}
