package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/linoone/linoone/internal/app/producer"
	"github.com/linoone/linoone/internal/app/serve"
	"github.com/linoone/linoone/internal/ops/discovery/discoverycli"
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

// silentError is a command's exit 1 that it has explained on stdout already (a
// verdict such as blocked --check's), so nothing more is printed.
type silentError struct{ error }

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
	case len(pos) < minArgs && positional[fs.Name()] != "":
		return nil, &usageError{fs: fs, err: fmt.Errorf("%s is missing", positional[fs.Name()])}
	case len(pos) < minArgs && minArgs == 1:
		return nil, &usageError{fs: fs, err: errors.New("an argument is missing")}
	case len(pos) < minArgs:
		return nil, &usageError{fs: fs, err: fmt.Errorf("%d arguments are required", minArgs)}
	case maxArgs >= 0 && len(pos) > maxArgs:
		return nil, &usageError{fs: fs, err: fmt.Errorf("unexpected argument %q", pos[maxArgs])}
	}
	return pos, nil
}

// positional names each command's positional argument, for the message that says
// it is missing.
var positional = map[string]string{
	"shorten": "TARGET_URL", "inspect": "TOKEN|SHORT_URL", "stats": "TOKEN|SHORT_URL", "qr": "TOKEN|SHORT_URL",
	"block": "RULE", "unblock": "RULE",
}

// writeUsage writes the command's usage text and its flags.
func writeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usageText(fs.Name()))
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) { writeFlag(&b, f) })
	if b.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", b.String())
	}
}

// writeFlag describes one flag as the usage lines write it, --name: the flag's
// usage, and its default where the usage does not give it already and it is not
// the zero value.
func writeFlag(b *strings.Builder, f *flag.Flag) {
	arg, usage := flag.UnquoteUsage(f)
	fmt.Fprintf(b, "  --%s", f.Name)
	if arg != "" {
		fmt.Fprintf(b, " %s", arg)
	}
	fmt.Fprintf(b, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
	if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "0s" && d != "[]" && !strings.Contains(usage, "(default") {
		if g, ok := f.Value.(flag.Getter); ok {
			if _, isString := g.Get().(string); isString {
				d = strconv.Quote(d)
			}
		}
		fmt.Fprintf(b, " (default %s)", d)
	}
	b.WriteByte('\n')
}

// synopsis is the usage lines of a command's usage text: up to its first blank
// line.
func synopsis(name string) string {
	text, _, _ := strings.Cut(usageText(name), "\n\n")
	return text + "\n"
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
		fmt.Fprintf(stderr, "linoone %s: %v\n%sRun 'linoone %s -h' for help.\n", name, ue.err, synopsis(ue.fs.Name()), ue.fs.Name())
		return 2
	case errors.As(err, new(silentError)): // the command said why on stdout
		return 1
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
	"dlq redrive":      redriveUsage,
	"replay":           replayUsage,
	"recover":          recoverUsage,
	"consume":          consumeUsage,
	"block":            blockUsage,
	"unblock":          unblockUsage,
	"blocked":          blockedUsage,
	"console":          consoleUsage,
	"capacity":         capacityUsage,
	"smoke":            smokeUsage,
	"inspect":          inspectUsage,
	"links":            linksUsage,
	"qr":               qrUsage,
	"stats":            statsUsage,
	"version":          versionUsage,
	"discover":         discoverycli.Usage,
	"linoone":          usage,
}

// suggest is ": did you mean X?" for the command nearest to name (at most two
// edits away), or "".
func suggest(name string) string {
	best, bestD := "", 3
	for c := range usages {
		if c == serve.ChildCommand || c == "linoone" {
			continue
		}
		if d := editDistance(strings.ToLower(name), c); d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(": did you mean %q?", best)
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// usageText is a command's usage (usages), or a bare synopsis.
func usageText(name string) string {
	if u, ok := usages[name]; ok {
		return u
	}
	return "usage: linoone " + name + "\n"
}
