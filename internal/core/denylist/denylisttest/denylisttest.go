// Package denylisttest makes deny lists for tests and benchmarks.
package denylisttest

import (
	"fmt"
	"strings"
)

// Rules is a deny list file of n rules, hosts, domains and prefixes in turn, none of
// them matching a target under example.com.
func Rules(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "host%d.example\n", i)
		case 1:
			fmt.Fprintf(&b, "*.domain%d.example\n", i)
		default:
			fmt.Fprintf(&b, "https://prefix%d.example/p/\n", i)
		}
	}
	return b.String()
}
