//go:build !linux

package flock

// Holder reports which process holds a flock(2) on the lock file at path. Only Linux
// lists the locks held (/proc/locks); elsewhere known is false.
func Holder(path string) (pid int, known bool, err error) { return 0, false, nil }
