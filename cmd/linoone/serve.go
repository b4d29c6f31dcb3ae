package main

import (
	"context"
	"io"
	"os"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/serve"
)

const serveUsage = `usage: linoone serve

Runs the resolver, the management API (SigV4) and local Persist on loopback, with
the local bus, its consumer and the local click DLQ, configured by LINOONE_*
variables (README.md). On Unix, local Persist runs in a child process (shown as
linoone persist-child) that lives and ends with serve.

It logs on stderr, text on a terminal and JSON lines otherwise
(LINOONE_LOG_FORMAT=text|json forces one), from the line that says where it
listens to the one that says it stopped; LINOONE_EMF=on adds CloudWatch EMF lines.

Ctrl-C, SIGTERM or SIGHUP stops it: it waits up to 15 s for requests in flight,
delivers its journal into local Persist for up to 20 s (logging what is left every
5 s), stops Persist and exits 0. What the delivery could not finish in time is
delivered at the next start, and serve exits 1 saying how much; a second signal
stops at once, the same way. docs/architecture.md, "Stopping serve".

example:
  LINOONE_DATA_DIR=/tmp/linoone LINOONE_RESOLVER_ADDR=127.0.0.1:9080 linoone serve
`

// serveCmd is linoone serve: the whole service on loopback until ctx ends.
func serveCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	if _, err := parse(newFlags("serve"), args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadServe(getenv)
	if err != nil {
		return err
	}
	return serve.Run(ctx, cfg, stderr)
}

const persistChildUsage = `usage: linoone persist-child

Not a command to run by hand: linoone serve runs local Persist with it, in a child
process of its own (Unix), on the listener serve passes as file descriptor 3. It
serves until its stdin closes, and ignores SIGINT, SIGTERM and SIGHUP, so that serve can
still deliver its journal into it while serve shuts down.

example:
  linoone serve   # starts it; ps shows it as linoone persist-child
`

// persistChildCmd is local Persist in serve's child process (serve.ChildCommand).
func persistChildCmd(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if _, err := parse(newFlags(serve.ChildCommand), args, 0, 0); err != nil {
		return err
	}
	return serve.PersistChild(getenv, os.Stdin, stdout, stderr)
}
