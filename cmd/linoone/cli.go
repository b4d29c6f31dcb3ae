package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
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

// interruptedError is a command cut short by Ctrl-C (or SIGTERM): its message is
// what was done and how to finish, and it exits 130, as a shell reports a command
// that SIGINT ended.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return e.err.Error() }
func (e *interruptedError) Unwrap() error { return e.err }

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
	var ie *interruptedError
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
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "linoone %s: %v\n", name, err)
		return 130
	default:
		fmt.Fprintf(stderr, "linoone %s: %v\n", name, err)
		return 1
	}
}

// usages are the commands' usages: a synopsis, what each does and an example;
// writeUsage appends the flags. It is read, never written.
var usages = map[string]string{
	"serve": `usage: linoone serve

Runs the resolver, the management API (SigV4) and local Persist on loopback, with
the local bus, its consumer and the local click DLQ, configured by LINOONE_*
variables (README.md). On Unix, local Persist runs in a child process (shown as
linoone persist-child) that lives and ends with serve.

Ctrl-C, SIGTERM or SIGHUP stops it: it waits up to 15 s for requests in flight,
delivers its journal into local Persist for up to 20 s (logging what is left every
5 s), stops Persist and exits 0. What the delivery could not finish in time is
delivered at the next start, and serve exits 1 saying how much; a second signal
stops at once, the same way. README.md, "Stopping serve".

example:
  LINOONE_DATA_DIR=/tmp/linoone LINOONE_RESOLVER_ADDR=127.0.0.1:9080 linoone serve
`,
	persistChildCommand: `usage: linoone persist-child

Not a command to run by hand: linoone serve runs local Persist with it, in a child
process of its own (Unix), on the listener serve passes as file descriptor 3. It
serves until its stdin closes, and ignores SIGINT, SIGTERM and SIGHUP, so that serve can
still deliver its journal into it while serve shuts down.

example:
  linoone serve   # starts it; ps shows it as linoone persist-child
`,
	"shorten": `usage: linoone shorten [--json] [--management-url URL] [--idempotency-key KEY] TARGET_URL
       linoone shorten --file FILE [--json] [--concurrency N] [--management-url URL]

Issues a short URL through the management API, signed with LINOONE_ACCESS_KEY_ID and
LINOONE_SECRET_ACCESS_KEY or the pair serve wrote to the data directory, and prints
it; with --json it prints {"short_url","token"}. With --idempotency-key a retry
returns the same short URL instead of a new one.

With --file it imports FILE (one URL per line, or a CSV with a target_url column;
- for stdin) in batches of 1,000: target_url,short_url CSV (or JSON lines) on
stdout in input order, progress and failed lines on stderr, exit 1 if any failed
(130 if interrupted). Keys derived from the file's content make a re-run mint
nothing twice: run the same file again to finish it.

example:
  url=$(linoone shorten 'https://example.com/landing?message_id=msg_123')
  linoone shorten https://example.com/ --json --idempotency-key order-4711
  linoone shorten --file links.csv > short-links.csv
`,
	"status": `usage: linoone status [--json]

Says whether a serve runs on LINOONE_DATA_DIR and which process delivers its journal
(serve itself or a linoone consume; Linux lists the locks that tell), whether serve's
resolver, management API and local Persist answer GET /healthz (ok, degraded and
what is, or down), how much of the journal waits for its consumer and since when
(the time of the oldest click not yet delivered), and how many click facts wait in
the click DLQ. It asks the listeners where the running serve recorded them in the
data dir, else where LINOONE_RESOLVER_ADDR, LINOONE_MANAGEMENT_ADDR (or _URL) and
LINOONE_PERSIST_ADDR say. It takes no lock and writes nothing, so it runs beside
serve and linoone consume. Exit 1 when a listener is down or degraded.

example:
  linoone status
  linoone status --json | jq .journal
`,
	"dlq": `usage: linoone dlq [--json]

Lists the click facts waiting in the local click DLQ: when each failed, how many
publishes were tried, its short URL's token, its idempotency key and why it failed.

example:
  linoone dlq --json
`,
	"replay": `usage: linoone replay [--quiet]

Republishes every click fact in the local click DLQ onto the local bus and prints how
many were replayed; the ones that fail again stay (exit 1).

example:
  linoone replay && linoone dlq
`,
	"recover": `usage: linoone recover --from-log FILE

Republishes onto the local bus every click fact a serve log holds whole (the
graph_fact of its ERROR lines), each once per run. The consumer keeps the facts
Persist refused in $LINOONE_DATA_DIR/bus/refused.jsonl, in the same shape.

example:
  linoone serve 2>serve.log   # later:
  linoone recover --from-log serve.log
  linoone recover --from-log .linoone/bus/refused.jsonl
`,
	"consume": `usage: linoone consume [--drain [--timeout DURATION]]

Delivers the local bus into Persist apart from serve (LINOONE_CONSUMER=external);
with --drain it delivers what is queued and exits, 1 if Persist refused a fact
(kept in $LINOONE_DATA_DIR/bus/refused.jsonl for linoone recover --from-log).
While Persist fails, a drain retries it; --timeout gives up after DURATION, exit 1,
keeping what it delivered.

example:
  LINOONE_CONSUMER=external linoone serve &
  linoone consume --drain --timeout 5m
`,
	"block": `usage: linoone block RULE

Adds a rule to the deny list (LINOONE_DENYLIST_FILE): a host, '*.domain' (the domain
and its subdomains) or an http(s) URL prefix. A running serve applies it within 2 s.

example:
  linoone block '*.evil.example'
`,
	"unblock": `usage: linoone unblock RULE

Removes a rule from the deny list (LINOONE_DENYLIST_FILE), written as it was added.

example:
  linoone unblock '*.evil.example'
`,
	"blocked": `usage: linoone blocked [--check URL]

Lists the deny list's rules, or says whether URL is blocked and by which rule.

example:
  linoone blocked --check https://login.evil.example/
`,
	"capacity": capacityUsage,
	"inspect":  inspectUsage,
	"stats":    statsUsage,
	"version": `usage: linoone version

Prints the module version, the VCS revision it was built from and the Go version.

example:
  linoone version
`,
}

// usageText is a command's usage (usages), or a bare synopsis.
func usageText(name string) string {
	if u, ok := usages[name]; ok {
		return u
	}
	return "usage: linoone " + name + "\n"
}
