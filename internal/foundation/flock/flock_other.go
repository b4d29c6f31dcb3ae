//go:build !unix

package flock

import "errors"

// ErrUnsupported reports a platform without flock(2): the local bus, its consumer,
// the local DLQ's replay and the deny list's editors coordinate processes with it, so
// local mode runs on Unix systems (Linux, macOS, the BSDs) only. The module still
// builds everywhere.
var ErrUnsupported = errors.New("flock(2) is unavailable: local mode runs on Unix systems only")

// File stands for a lock file where there is no flock(2).
type File struct{}

func Open(string) (*File, error)              { return nil, ErrUnsupported }
func (*File) Lock() error                     { return ErrUnsupported }
func (*File) TryLock() (held bool, err error) { return false, ErrUnsupported }
func (*File) Unlock() error                   { return ErrUnsupported }
func (*File) Close() error                    { return nil }
