package mgmtapi

import (
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/linoone/linoone/api/management"
)

// loadSpec returns the embedded specification, as management.GetSpec does, decoded
// as the JSON it is: kin-openapi's loader reads any input as YAML first, which takes
// about twice as long, and the Issue function pays for it at every cold start. The
// spec holds no external reference, so resolving its local ones is all the loader adds.
func loadSpec() (*openapi3.T, error) {
	raw, err := management.GetSpecJSON()
	if err != nil {
		return nil, err
	}
	var spec openapi3.T
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("decode the embedded openapi spec: %w", err)
	}
	if err := openapi3.NewLoader().ResolveRefsIn(&spec, nil); err != nil {
		return nil, fmt.Errorf("resolve the embedded openapi spec's references: %w", err)
	}
	return &spec, nil
}
