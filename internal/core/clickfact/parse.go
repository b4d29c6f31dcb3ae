package clickfact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
)

// envelope is the detail as parsed back from the DLQ.
type envelope struct {
	SchemaVersion  string            `json:"schema_version"`
	GraphSONFormat string            `json:"graphson_format"`
	FactType       string            `json:"fact_type"`
	EntityTypes    []string          `json:"entity_types"`
	IdempotencyKey string            `json:"idempotency_key"`
	GraphSON       graphson.Document `json:"graphson"`
}

// Parse reads a GraphFactProduced detail back (from the DLQ) and checks that it is a
// click fact Linoone could have built: the envelope constants, one short_url vertex
// and one short_url_visited self-loop whose event_identifier matches the idempotency
// key, and ids that are the elements' identities. The detail bytes are kept as they
// are, so a replay publishes exactly what failed.
func Parse(detail []byte) (Fact, error) {
	var env envelope
	if err := decodeStrict(detail, &env); err != nil {
		return Fact{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch {
	case env.SchemaVersion != SchemaVersion, env.GraphSONFormat != GraphSONFormat, env.FactType != FactType,
		len(env.EntityTypes) != 1 || env.EntityTypes[0] != EntityType:
		return Fact{}, fmt.Errorf("%w: envelope is not a %s %s fact", ErrInvalid, FactType, SchemaVersion)
	case len(env.GraphSON.Vertices) != 1 || len(env.GraphSON.Edges) != 1:
		return Fact{}, fmt.Errorf("%w: want one vertex and one edge", ErrInvalid)
	}
	if err := env.GraphSON.Verify(); err != nil {
		return Fact{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	e := env.GraphSON.Edges[0]
	eventID, _ := e.Properties[PropEventID].(string)
	if e.Label != EdgeLabel || env.IdempotencyKey != IdempotencyPrefix+eventID || !isEventID(eventID) {
		return Fact{}, fmt.Errorf("%w: edge and idempotency key do not match", ErrInvalid)
	}
	token, _ := env.GraphSON.Vertices[0].Properties["short_url_token"].(string)
	return Fact{IdempotencyKey: env.IdempotencyKey, EventID: eventID, Token: token, Detail: detail}, nil
}

// decodeStrict decodes exactly one JSON object with no unknown members into v.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return fmt.Errorf("data after the JSON object")
	}
	return nil
}

// DeadLetter is the click DLQ payload: the fact, when and how often publishing it
// failed, and why.
type DeadLetter struct {
	GraphFact json.RawMessage `json:"graph_fact"`
	FailedAt  string          `json:"failed_at"`
	Attempts  int             `json:"attempts"`
	Reason    string          `json:"reason"`
}

// maxReason bounds a dead letter's reason, in bytes.
const maxReason = 1024

// NewDeadLetter wraps a fact whose publication failed.
func NewDeadLetter(f Fact, at time.Time, attempts int, reason error) DeadLetter {
	why := "unknown publish failure"
	if reason != nil && reason.Error() != "" {
		why = reason.Error()
		if len(why) > maxReason {
			why = strings.ToValidUTF8(why[:maxReason], "")
		}
	}
	return DeadLetter{GraphFact: f.Detail, FailedAt: FormatTime(at), Attempts: max(attempts, 1), Reason: why}
}

// Encode is the dead letter's JSON with the graph fact byte for byte as it was built:
// encoding/json would otherwise HTML-escape "&", "<" and ">" inside the raw fact, and a
// replay would publish other bytes than the ones that failed.
func (d DeadLetter) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encode dead letter: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ParseDeadLetter reads a DLQ message body and the fact inside it.
func ParseDeadLetter(body []byte) (DeadLetter, Fact, error) {
	var d DeadLetter
	if err := decodeStrict(body, &d); err != nil {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload: %v", ErrInvalid, err)
	}
	if d.Attempts < 1 {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload attempts %d < 1", ErrInvalid, d.Attempts)
	}
	if _, err := time.Parse(time.RFC3339Nano, d.FailedAt); err != nil {
		return DeadLetter{}, Fact{}, fmt.Errorf("%w: dlq payload failed_at: %v", ErrInvalid, err)
	}
	f, err := Parse(d.GraphFact)
	if err != nil {
		return DeadLetter{}, Fact{}, err
	}
	return d, f, nil
}
