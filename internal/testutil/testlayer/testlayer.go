// Package testlayer names the slow layers of the test suite, so that `make check`
// (go test -short) runs the unit and contract tests in under a minute and says
// what it left to `make test`.
package testlayer

import "testing"

// The layers -short leaves out, as the skip message names them.
const (
	EndToEnd = "end-to-end (a real linoone serve)"
	Emulator = "Lambda runtime interface emulator"
	Browser  = "browser (Chromium)"
	Build    = "cross-compiled Lambda builds"
)

// Skip skips t under -short: it belongs to layer, which make test runs.
func Skip(t testing.TB, layer string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s test: skipped under -short; make test runs it", layer)
	}
}
