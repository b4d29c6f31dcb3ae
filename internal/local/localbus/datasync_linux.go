package localbus

import (
	"errors"
	"os"
	"syscall"
)

// datasync flushes f's data, and its metadata only where reading the data needs it
// (fdatasync(2)): overwriting a preallocated segment commits nothing to the file
// system's journal. Its errors are *os.PathError naming the call and the file, and a
// file closed meanwhile is os.ErrClosed, as (*os.File).Sync reports them.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err // already an *os.PathError
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
		// Control fails only on a file that is not valid (os.ErrInvalid) or is
		// closed, which it reports as the internal "use of closed file"; Sync
		// reports the latter as os.ErrClosed, and so does this.
		if !errors.Is(err, os.ErrInvalid) {
			err = os.ErrClosed
		}
		serr = err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
