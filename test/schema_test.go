package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The service's JSON Schemas (../schemas) that the suite checks what it observes
// against: every click fact, and every click DLQ message it reads.
const (
	graphFactSchema = "graph-fact.schema.json"
	clickDLQSchema  = "click-dlq-message.schema.json"
	schemaBaseURL   = "https://schemas.linoone.dev/" // the schemas' own $id base
)

var loadSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	files, err := filepath.Glob(filepath.Join("..", "schemas", "*.schema.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no schemas in ../schemas (%v)", err)
	}
	c := jsonschema.NewCompiler()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := c.AddResource(schemaBaseURL+filepath.Base(f), doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, name := range []string{graphFactSchema, clickDLQSchema} {
		s, err := c.Compile(schemaBaseURL + name)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
})

// validateSchema reports (t.Errorf) where doc breaks the named schema.
func validateSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	schemas, err := loadSchemas()
	if err != nil {
		t.Fatalf("schemas: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Errorf("%s: not JSON: %v: %.300s", name, err, doc)
		return
	}
	if err := schemas[name].Validate(v); err != nil {
		t.Errorf("document breaks %s: %v\n%.1000s", name, err, doc)
	}
}
