//go:build !unix

package cputime

import "time"

func process() (time.Duration, error) { return 0, nil }

func minorFaults() (int64, error) { return 0, nil }
