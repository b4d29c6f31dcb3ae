package flock

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Holder reports which process holds a flock(2) on the lock file at path, as
// /proc/locks lists it: without taking the lock, so that asking never makes a serve
// or a consumer that starts at that moment find its lock held. pid is 0 when no
// process holds it, or the file does not exist; known is false where the system does
// not say.
func Holder(path string) (pid int, known bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("lock holder: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false, nil
	}
	f, err := os.Open("/proc/locks")
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil // no procfs mounted
	}
	if err != nil {
		return 0, false, fmt.Errorf("lock holder: %w", err)
	}
	defer f.Close()
	pid, err = flockHolder(f, uint64(st.Dev), st.Ino)
	if err != nil {
		return 0, false, fmt.Errorf("lock holder: /proc/locks: %w", err)
	}
	return pid, true, nil
}

// flockHolder finds, in the /proc/locks listing r, the process holding a flock lock on
// the file dev and ino name; 0 if none does. A line reads
//
//	1: FLOCK  ADVISORY  WRITE 9310 fe:00:10010710 0 EOF
//
// (the device's major and minor numbers in hex); a process waiting for a lock is a
// line of its own with "->" after the number, and holds nothing.
func flockHolder(r io.Reader, dev uint64, ino uint64) (int, error) {
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil {
			return 0, fmt.Errorf("pid %q: %w", f[4], err)
		}
		return pid, nil
	}
	return 0, sc.Err()
}
