//go:build !unix

package localbus

import (
	"errors"
	"os"
)

// errNoFlock reports a platform without flock(2): the local bus, its consumer and
// the local DLQ's replay coordinate processes with it, so local mode runs on Unix
// systems (Linux, macOS, the BSDs) only. The module still builds everywhere.
var errNoFlock = errors.New("the local bus needs flock(2): local mode runs on Unix systems only")

type fileLock struct{}

func openLock(string) (*fileLock, error)          { return nil, errNoFlock }
func (*fileLock) lock() error                     { return errNoFlock }
func (*fileLock) tryLock() (held bool, err error) { return false, errNoFlock }
func (*fileLock) unlock() error                   { return errNoFlock }
func (*fileLock) close() error                    { return nil }

func unlinked(os.FileInfo) bool { return false }
