//go:build !unix

package persist_test

import (
	"testing"
	"time"
)

// processCPU is not measured here: the CPU figure of the benchmark reads 0.
func processCPU(testing.TB) time.Duration { return 0 }
