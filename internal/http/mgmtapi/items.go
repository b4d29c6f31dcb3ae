package mgmtapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/linoone/linoone/internal/http/httpapi"
)

// A batch item fails alone (openapi.yaml, BatchItem), but the schema validator and
// the generated decoder read the whole body at once: an item whose target_url is a
// number would fail the batch (400), and one that names target_url twice would be
// read as the last of them, unseen. badItems finds those items first; the body goes
// on with each of them as {}, and ShortenBatch answers each with its own problem.

type itemFaultsKey struct{}

// itemFaults are the faults badItems found, by item index, in a request's context.
func itemFaults(ctx context.Context) map[int]error {
	f, _ := ctx.Value(itemFaultsKey{}).(map[int]error)
	return f
}

// badItems returns the faults of a batch body's items, by index, and the body with
// each faulty item replaced by {}. A body that is not {"items": [...]} at all is
// returned as it is, with no faults: the validator refuses it whole.
func badItems(b []byte) ([]byte, map[int]error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return b, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(top["items"], &items); err != nil {
		return b, nil
	}
	faults := map[int]error{}
	for i, it := range items {
		if err := itemFault(it); err != nil {
			faults[i] = err
			items[i] = json.RawMessage(`{}`)
		}
	}
	if len(faults) == 0 {
		return b, nil
	}
	rebuilt, err := json.Marshal(items)
	if err != nil {
		return b, nil
	}
	top["items"] = rebuilt
	out, err := json.Marshal(top)
	if err != nil {
		return b, nil
	}
	return out, faults
}

// itemFault is why an item that is an object cannot be read: a member given twice,
// or a target_url that is not a string. An item that is not an object is the
// validator's to refuse.
func itemFault(it json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(it))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if seen[name] {
			return &httpapi.ItemError{Detail: fmt.Sprintf("member %q is given more than once; an item is exactly {\"target_url\": \"…\"}", name)}
		}
		seen[name] = true
		if name == "target_url" && v[0] != '"' {
			return &httpapi.ItemError{Detail: "target_url must be a string, not " + jsonKind(v)}
		}
	}
	return nil
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(v json.RawMessage) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
