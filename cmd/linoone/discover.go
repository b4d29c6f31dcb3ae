package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/linoone/linoone/internal/ops/discovery/discoverycli"
)

// discoverCmd is linoone discover: its exit codes are its own (2: a person must
// act), so a command line it cannot run exits 1, not 2.
func discoverCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := newFlags("discover")
	o := discoverycli.Flags(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		var ue *usageError
		if errors.As(err, &ue) && ue.err != nil {
			fmt.Fprintf(stderr, "linoone discover: %v\n%sRun 'linoone discover -h' for help.\n", ue.err, synopsis("discover"))
			return discoverycli.ExitError
		}
		return commandResult("discover", err, stdout, stderr)
	}
	return o.Run(ctx, getenv, stdout, stderr)
}
