package main

import (
	"context"
	"io"

	"github.com/linoone/linoone/internal/app/console"
)

const consoleUsage = `usage: linoone console [--endpoint URL] [--addr 127.0.0.1:PORT] [--open]

Serves the operator console, a web app on a loopback address only, and prints a
one-time login URL: shorten and copy, look at a link's clicks, block and unblock,
the deny list, and health with the click DLQ's Replay. The console holds the
credentials and signs every management API call; the browser never sees them.
Against the local serve it signs with the pair of LINOONE_DATA_DIR (as shorten does)
and edits that serve's deny list; with --endpoint it signs for a deployed management
API with the AWS default credential chain (LINOONE_ACCESS_KEY_ID and
LINOONE_SECRET_ACCESS_KEY instead when set, as smoke) and prints whose it is. Every
block, unblock, shorten and replay is logged (JSON) on stderr. Ctrl-C stops it.

example:
  linoone console --open
  AWS_PROFILE=ops linoone console --endpoint https://abcdef1234.execute-api.eu-west-1.amazonaws.com
`

// consoleCmd is linoone console: internal/app/console does the work.
func consoleCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("console")
	endpoint := fs.String("endpoint", "", "a deployed management API to sign for with the AWS default credential chain")
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free one)")
	open := fs.Bool("open", false, "open the login URL in the desktop's browser (xdg-open)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := console.CheckAddr(*addr); err != nil {
		return &usageError{fs: fs, err: err}
	}
	return console.Run(ctx, console.Options{Endpoint: *endpoint, Addr: *addr, Open: *open}, getenv, stdout, stderr)
}
