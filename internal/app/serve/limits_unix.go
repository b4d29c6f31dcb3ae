//go:build unix

package serve

import "syscall"

// openFileLimit is the number of files the process may have open (RLIMIT_NOFILE's
// soft limit, which Go raises to the hard one at start); 0 when it cannot be read.
func openFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
