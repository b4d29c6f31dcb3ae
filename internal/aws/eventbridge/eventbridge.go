// Package eventbridge publishes click graph facts to the shared EventBridge bus: one
// PutEvents entry per fact with Source "shorturl" and DetailType "GraphFactProduced".
// It implements shorturl.Publisher.
//
// Retries are the SDK's, bounded by the context the caller passes to Publish. The
// resolver's client (NewRequestClient) retries a 5xx once, soon, and never
// throttling (retrypolicy.InRequest), and each publish has a short timeout, so a
// slow or failing bus costs at most that timeout before the fact goes to the DLQ;
// replay's client (NewClient) keeps the standard retryer.
package eventbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/linoone/linoone/internal/aws/retrypolicy"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// ErrRejected reports a PutEvents call that succeeded but did not accept the entry
// (FailedEntryCount > 0).
var ErrRejected = errors.New("eventbridge rejected the entry")

// ErrInvalidBus reports an unusable bus name or ARN.
var ErrInvalidBus = errors.New("invalid event bus name or arn")

// DefaultRetryMaxAttempts is the number of attempts NewClient allows per call unless
// the aws.Config sets its own.
const DefaultRetryMaxAttempts = 2

// PutEventsAPI is the part of *eventbridge.Client the Publisher uses.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var (
	_ PutEventsAPI       = (*eventbridge.Client)(nil)
	_ shorturl.Publisher = (*Publisher)(nil)
)

// Publisher puts click facts on one event bus. It is safe for concurrent use.
type Publisher struct {
	api PutEventsAPI
	bus string
}

// New builds a Publisher for the bus named (or with the ARN) busNameOrARN.
func New(api PutEventsAPI, busNameOrARN string) (*Publisher, error) {
	if api == nil {
		return nil, errors.New("eventbridge publisher needs a PutEvents client")
	}
	if busNameOrARN == "" || strings.TrimSpace(busNameOrARN) != busNameOrARN || strings.ContainsAny(busNameOrARN, " \t\r\n") {
		return nil, fmt.Errorf("%w: %q", ErrInvalidBus, busNameOrARN)
	}
	return &Publisher{api: api, bus: busNameOrARN}, nil
}

// Bus returns the configured bus name or ARN.
func (p *Publisher) Bus() string { return p.bus }

// Publish sends the fact as one GraphFactProduced entry. It returns nil only when
// the call succeeded and FailedEntryCount is 0; a rejected entry is ErrRejected
// with the entry's error code and message.
func (p *Publisher) Publish(ctx context.Context, f clickfact.Fact) error {
	out, err := p.api.PutEvents(ctx, &eventbridge.PutEventsInput{
		Entries: []types.PutEventsRequestEntry{{
			Source:       aws.String(clickfact.Source),
			DetailType:   aws.String(clickfact.DetailType),
			EventBusName: aws.String(p.bus),
			Detail:       aws.String(string(f.Detail)),
		}},
	})
	if err != nil {
		return fmt.Errorf("put %s on bus %s: %w", f.IdempotencyKey, p.bus, err)
	}
	if out == nil {
		return fmt.Errorf("put %s on bus %s: %w: empty response", f.IdempotencyKey, p.bus, ErrRejected)
	}
	if out.FailedEntryCount == 0 {
		return nil
	}
	code, msg := "unknown", "no entry result"
	if len(out.Entries) > 0 {
		e := out.Entries[0]
		code, msg = aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
	}
	return fmt.Errorf("put %s on bus %s: %w: failed entry count %d: %s: %s",
		f.IdempotencyKey, p.bus, ErrRejected, out.FailedEntryCount, code, msg)
}

// NewClient builds an EventBridge client from cfg. Unless cfg sets RetryMaxAttempts,
// a call makes at most DefaultRetryMaxAttempts attempts with the standard retryer;
// the caller's context bounds them all. A non-empty endpoint overrides the service
// endpoint (a local test server).
func NewClient(cfg aws.Config, endpoint string) *eventbridge.Client {
	return eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) {
		if cfg.RetryMaxAttempts == 0 && cfg.Retryer == nil {
			o.RetryMaxAttempts = DefaultRetryMaxAttempts
		}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// NewRequestClient builds the EventBridge client of a publish made inside a
// visitor's request: retrypolicy.InRequest, whatever cfg sets, so that a throttled
// bus is never called again within the request. A non-empty endpoint overrides the
// service endpoint (a local test server).
func NewRequestClient(cfg aws.Config, endpoint string) *eventbridge.Client {
	return eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) {
		o.Retryer = retrypolicy.InRequest()
		o.RetryMaxAttempts = 0 // else it would replace the retryer's own
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}
