package localbus

import (
	"errors"
	"os"
	"syscall"
)

// datasync flushes f's data, and its metadata only where reading the data needs it
// (fdatasync(2)): overwriting a preallocated segment commits nothing to the file
// system's journal.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if !errors.Is(serr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
