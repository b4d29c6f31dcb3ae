package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/linoone/linoone/internal/app/producer"
	"github.com/linoone/linoone/internal/app/serve"
)

// usageError is a command line a command cannot run: bad or missing arguments
// (err set: usage on stderr, exit 2) or -h/--help (err nil: usage on stdout, exit 0).
type usageError struct {
	fs  *flag.FlagSet
	err error
}

func (e *usageError) Error() string {
	if e.err == nil {
		return "help requested"
	}
	return e.err.Error()
}

// newFlags is a command's flag set; parse reports its errors, so it prints nothing.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags placed anywhere among the positional arguments
// (linoone shorten URL --json); everything after "--" is positional. It returns the
// positional arguments, or a *usageError when there are not between min and max of
// them (max < 0: no limit), a flag is unknown or help was asked for.
func parse(fs *flag.FlagSet, args []string, minArgs, maxArgs int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &usageError{fs: fs}
			}
			return nil, &usageError{fs: fs, err: err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	switch {
	case len(pos) < minArgs && minArgs == 1:
		return nil, &usageError{fs: fs, err: errors.New("an argument is missing")}
	case len(pos) < minArgs:
		return nil, &usageError{fs: fs, err: fmt.Errorf("%d arguments are required", minArgs)}
	case maxArgs >= 0 && len(pos) > maxArgs:
		return nil, &usageError{fs: fs, err: fmt.Errorf("unexpected argument %q", pos[maxArgs])}
	}
	return pos, nil
}

// writeUsage writes the command's usage text and its flags.
func writeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usageText(fs.Name()))
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", b.String())
	}
}

// commandResult turns what a command returned into its exit code, printing usage
// or the error: 0 done or help, 2 usage, 130 interrupted, 1 any other error.
func commandResult(name string, err error, stdout, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue) && ue.err == nil:
		writeUsage(stdout, ue.fs)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "linoone %s: %v\n\n", name, ue.err)
		writeUsage(stderr, ue.fs)
		return 2
	case errors.Is(err, producer.ErrInterrupted): // cut short by Ctrl-C, as a shell reports it
		fmt.Fprintf(stderr, "linoone %s: %v\n", name, err)
		return 130
	default:
		fmt.Fprintf(stderr, "linoone %s: %v\n", name, err)
		return 1
	}
}

// usages are the commands' usages, each beside its command: a synopsis, what it
// does and an example; writeUsage appends the flags. It is read, never written.
var usages = map[string]string{
	"serve":            serveUsage,
	serve.ChildCommand: persistChildUsage,
	"shorten":          shortenUsage,
	"status":           statusUsage,
	"dlq":              dlqUsage,
	"replay":           replayUsage,
	"recover":          recoverUsage,
	"consume":          consumeUsage,
	"block":            blockUsage,
	"unblock":          unblockUsage,
	"blocked":          blockedUsage,
	"capacity":         capacityUsage,
	"inspect":          inspectUsage,
	"stats":            statsUsage,
	"version":          versionUsage,
}

// usageText is a command's usage (usages), or a bare synopsis.
func usageText(name string) string {
	if u, ok := usages[name]; ok {
		return u
	}
	return "usage: linoone " + name + "\n"
}
