// Package wiring holds what the composition roots (cmd/linoone, lambdas/*) and the
// adapters they assemble share: the error a constructor returns when a part it needs
// was not given.
package wiring

import "errors"

// ErrMissingComponent reports a constructor called without a part it needs: a
// wiring mistake, found at start-up.
var ErrMissingComponent = errors.New("missing component")
