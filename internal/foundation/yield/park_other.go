//go:build !linux

package yield

import "runtime"

// park yields with runtime.Gosched: only Linux has the timer file park_linux.go
// waits on. It reports false.
func park() bool {
	runtime.Gosched()
	return false
}
