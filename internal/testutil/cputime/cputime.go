// Package cputime reads the CPU time a test process has used, for benchmarks that
// report CPU per operation and tests that bound work by the time the process
// could run rather than by wall time alone.
package cputime

import (
	"testing"
	"time"
)

// Process is the CPU time the process has used, user and system; 0 where it is not
// measured (not Unix), so a CPU figure reads 0 there.
func Process(tb testing.TB) time.Duration {
	tb.Helper()
	d, err := process()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
