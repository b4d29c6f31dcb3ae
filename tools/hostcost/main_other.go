//go:build !linux

// Command hostcost is a probe of scripts/bench.sh, which runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "hostcost: Linux only (fdatasync, taskset)")
	os.Exit(2)
}
