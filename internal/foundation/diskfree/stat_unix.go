//go:build unix

package diskfree

import "golang.org/x/sys/unix"

// Stat returns the space of the file system that holds path.
func Stat(path string) (Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Space{}, err
	}
	bs := uint64(st.Bsize) //nolint:unconvert // int64 on Linux, uint32 elsewhere
	return Space{Total: uint64(st.Blocks) * bs, Avail: uint64(st.Bavail) * bs}, nil
}
