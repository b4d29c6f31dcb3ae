//go:build !linux

package localbus

import "os"

// datasync is fsync where fdatasync(2) is not available.
func datasync(f *os.File) error { return f.Sync() }
