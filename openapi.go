// Package linoone is the module's root. It holds openapi.yaml, the contract of both
// APIs, so that the binaries serve exactly the file the code was generated from
// (GET /openapi.yaml and the HTML reference at GET /docs on the management API).
package linoone

import _ "embed"

// OpenAPI is openapi.yaml as it was when the binary was built.
//
//go:embed openapi.yaml
var OpenAPI string
