//go:build !unix

package nofollow

const (
	oNoFollow = 0
	unixPerms = false
)

func isLinkErr(error) bool { return false }
