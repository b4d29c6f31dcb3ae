// Command bare302 is the baseline of scripts/bench.sh: a bare net/http
// handler answering 302 from an in-memory map, the least a resolver can do.
package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: bare302 ADDR TOKENS_FILE (lines: token target)")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	targets := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if tok, target, ok := strings.Cut(sc.Text(), " "); ok {
			targets[tok] = target
		}
	}
	f.Close()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, ok := targets[r.URL.Path[1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Location", target)
		w.Header().Set("Cache-Control", "private, max-age=0")
		w.WriteHeader(http.StatusFound)
	})
	if err := http.ListenAndServe(os.Args[1], h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
