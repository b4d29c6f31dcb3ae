//go:build unix

package nofollow

import (
	"errors"
	"syscall"
)

const (
	oNoFollow = syscall.O_NOFOLLOW
	unixPerms = true
)

// isLinkErr: open(2) with O_NOFOLLOW fails with ELOOP on a link (EMLINK on some BSDs).
func isLinkErr(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}
