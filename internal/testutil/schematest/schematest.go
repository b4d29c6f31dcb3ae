// Package schematest validates JSON documents against the JSON Schemas in schemas/.
// Tests of every package that builds an artifact, a fact or a DLQ message use it, so
// what the code writes and what the schemas promise cannot drift apart.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schemas, by file name.
const (
	Graph         = "graph.schema.json"
	Artifact      = "short-url-artifact.schema.json"
	GraphFact     = "graph-fact.schema.json"
	ClickDLQ      = "click-dlq-message.schema.json"
	schemaBaseURL = "https://schemas.linoone.dev/"
)

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	loadErr  error
)

// Dir is the repository's schemas/ directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "schemas")
}

func load() {
	c := jsonschema.NewCompiler()
	names := []string{Graph, Artifact, GraphFact, ClickDLQ}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(Dir(), n))
		if err != nil {
			loadErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			loadErr = fmt.Errorf("%s: %w", n, err)
			return
		}
		if err := c.AddResource(schemaBaseURL+n, doc); err != nil {
			loadErr = fmt.Errorf("%s: %w", n, err)
			return
		}
	}
	compiled = map[string]*jsonschema.Schema{}
	for _, n := range names {
		s, err := c.Compile(schemaBaseURL + n)
		if err != nil {
			loadErr = fmt.Errorf("compile %s: %w", n, err)
			return
		}
		compiled[n] = s
	}
}

// Validate checks doc (JSON bytes) against the named schema.
func Validate(schema string, doc []byte) error {
	once.Do(load)
	if loadErr != nil {
		return loadErr
	}
	s, ok := compiled[schema]
	if !ok {
		return fmt.Errorf("unknown schema %s", schema)
	}
	if !json.Valid(doc) {
		return fmt.Errorf("not JSON: %.80s", doc)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// MustValidate fails the test when doc does not validate.
func MustValidate(t testing.TB, schema string, doc []byte) {
	t.Helper()
	if err := Validate(schema, doc); err != nil {
		t.Fatalf("%s does not validate against %s: %v", doc, schema, err)
	}
}
