// Command capacitydoc writes docs/capacity.md from the capacity model (make generate).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/linoone/linoone/internal/ops/capacity"
)

func main() {
	out := flag.String("out", "docs/capacity.md", "file to write")
	flag.Parse()
	var b bytes.Buffer
	err := capacity.WriteDoc(&b)
	if err == nil {
		err = os.WriteFile(*out, b.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "capacitydoc:", err)
		os.Exit(1)
	}
}
