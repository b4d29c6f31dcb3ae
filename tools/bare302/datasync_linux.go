package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2), as the local bus syncs its journal.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
