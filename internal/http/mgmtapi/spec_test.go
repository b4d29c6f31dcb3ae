package mgmtapi

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/linoone/linoone/api/management"
)

// loadSpec must give the validator the document management.GetSpec would: the same content,
// every reference resolved, and a spec that validates.
func TestLoadSpecIsGetSpec(t *testing.T) {
	fast, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	slow, err := management.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	a, err := json.Marshal(fast)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(slow)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("loadSpec and GetSpec differ:\n%s\n%s", a, b)
	}
	if err := fast.Validate(context.Background()); err != nil {
		t.Fatalf("loadSpec's document does not validate: %v", err)
	}
	// A resolved reference carries its schema; an unresolved one only its $ref.
	op := fast.Paths.Find("/shorten").Post
	body := op.RequestBody.Value.Content.Get("application/json")
	if body.Schema.Ref == "" || body.Schema.Value == nil || len(body.Schema.Value.Properties) == 0 {
		t.Fatalf("POST /shorten's body schema is not resolved: ref %q, value %+v", body.Schema.Ref, body.Schema.Value)
	}
}
