//go:build unix

package denylist

import (
	"time"

	"golang.org/x/sys/unix"
)

// changeTime is the file's change time (ctime), which every write, rename and chmod
// moves and no tool sets back; zero if it cannot be read.
func changeTime(path string) time.Time {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return time.Time{}
	}
	return time.Unix(st.Ctim.Unix())
}
