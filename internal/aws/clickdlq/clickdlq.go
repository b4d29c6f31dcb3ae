// Package clickdlq keeps click facts that could not be published in the click DLQ
// (SQS): one message per fact whose body is the JSON of a clickfact.DeadLetter
// ({graph_fact, failed_at, attempts, reason}). It implements shorturl.DeadLetters;
// the replay Lambda consumes the queue.
package clickdlq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/linoone/linoone/internal/aws/retrypolicy"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// AttrIdempotencyKey is the String message attribute carrying the fact's
// idempotency key, so the queue can be inspected without parsing bodies.
const AttrIdempotencyKey = "idempotency_key"

// ErrInvalidQueueURL reports an unusable queue URL.
var ErrInvalidQueueURL = errors.New("invalid click dlq queue url")

// DefaultRetryMaxAttempts is the number of attempts NewClient allows per call unless
// the aws.Config sets its own.
const DefaultRetryMaxAttempts = 3

// SendMessageAPI is the part of *sqs.Client the Queue uses.
type SendMessageAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var (
	_ SendMessageAPI       = (*sqs.Client)(nil)
	_ shorturl.DeadLetters = (*Queue)(nil)
)

// Queue sends dead letters to one SQS queue. It is safe for concurrent use.
type Queue struct {
	api SendMessageAPI
	url string
}

// New builds a Queue sending to the queue at queueURL.
func New(api SendMessageAPI, queueURL string) (*Queue, error) {
	if api == nil {
		return nil, errors.New("click dlq needs a SendMessage client")
	}
	if !strings.HasPrefix(queueURL, "https://") && !strings.HasPrefix(queueURL, "http://") {
		return nil, fmt.Errorf("%w: %q is not an http(s) url", ErrInvalidQueueURL, queueURL)
	}
	return &Queue{api: api, url: queueURL}, nil
}

// DeadLetter sends d as one message. The graph fact inside is kept byte for byte, so
// a replay publishes exactly the detail that failed.
func (q *Queue) DeadLetter(ctx context.Context, d clickfact.DeadLetter) error {
	body, err := Marshal(d)
	if err != nil {
		return err
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(body)}
	key := idempotencyKey(d.GraphFact)
	if key != "" {
		in.MessageAttributes = map[string]types.MessageAttributeValue{
			AttrIdempotencyKey: {DataType: aws.String("String"), StringValue: aws.String(key)},
		}
	}
	if _, err := q.api.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("send dead letter %s to %s: %w", key, q.url, err)
	}
	return nil
}

// Marshal is the message body of d: its JSON with the graph fact unchanged (no HTML
// escaping, which encoding/json would otherwise apply to "&", "<" and ">" inside the
// raw fact). The rare code points SQS refuses in a body (U+FFFE, U+FFFF), which can
// only occur inside JSON strings, are written as \u escapes: the same JSON value.
func Marshal(d clickfact.DeadLetter) (string, error) {
	b, err := d.Encode()
	if err != nil {
		return "", err
	}
	if !bytes.ContainsAny(b, "\uFFFE\uFFFF") {
		return string(b), nil
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch r {
		case '\uFFFE':
			sb.WriteString(`\ufffe`)
		case '\uFFFF':
			sb.WriteString(`\uffff`)
		default:
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String(), nil
}

// idempotencyKey reads the fact's idempotency key, or "" when the fact has none: the
// attribute is informational and never stops a dead letter from being sent.
func idempotencyKey(fact json.RawMessage) string {
	var f struct {
		IdempotencyKey string `json:"idempotency_key"`
	}
	if json.Unmarshal(fact, &f) != nil || f.IdempotencyKey == "" || !utf8.ValidString(f.IdempotencyKey) {
		return ""
	}
	return f.IdempotencyKey
}

// NewClient builds an SQS client from cfg. Unless cfg sets RetryMaxAttempts, a call
// makes at most DefaultRetryMaxAttempts attempts with the standard retryer; the
// caller's context bounds them all. A non-empty endpoint overrides the service
// endpoint (a local test server).
func NewClient(cfg aws.Config, endpoint string) *sqs.Client {
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if cfg.RetryMaxAttempts == 0 && cfg.Retryer == nil {
			o.RetryMaxAttempts = DefaultRetryMaxAttempts
		}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// NewRequestClient builds the SQS client of a dead letter sent inside a visitor's
// request: retrypolicy.InRequest, whatever cfg sets, so that a throttled queue is
// never called again within the request. A non-empty endpoint overrides the service
// endpoint (a local test server).
func NewRequestClient(cfg aws.Config, endpoint string) *sqs.Client {
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.Retryer = retrypolicy.InRequest()
		o.RetryMaxAttempts = 0 // else it would replace the retryer's own
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}
