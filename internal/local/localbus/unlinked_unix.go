//go:build unix

package localbus

import (
	"os"
	"syscall"
)

// unlinked reports whether the file fi describes was removed from its directory.
func unlinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
