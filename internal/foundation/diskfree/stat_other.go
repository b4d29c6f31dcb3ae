//go:build !unix

package diskfree

// Stat returns ErrUnsupported here.
func Stat(string) (Space, error) { return Space{}, ErrUnsupported }
