// Package cputime reads the CPU time a test process has used, for benchmarks that
// report CPU per operation and tests that bound work by the time the process
// could run rather than by wall time alone, and the page faults that time may
// have gone to.
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

// MinorFaults is how many page faults the process has taken that needed no read
// from disk: mostly pages of a file mapped again, or memory touched for the first
// time. 0 where it is not measured (not Unix).
func MinorFaults(tb testing.TB) int64 {
	tb.Helper()
	n, err := minorFaults()
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
