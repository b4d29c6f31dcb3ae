//go:build !unix

package serve

// openFileLimit is 0 where there is no RLIMIT_NOFILE: the connections are not capped.
func openFileLimit() int { return 0 }
