package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/producer"
	"github.com/linoone/linoone/internal/foundation/tty"
)

const shortenUsage = `usage: linoone shorten [--json] [--management-url URL] [--idempotency-key KEY] TARGET_URL
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
`

// shortenCmd is the producer CLI: it signs POST /shorten with SigV4 through the
// generated client and prints the short URL; with --file it imports a whole file
// through POST /shorten/batch (producer.API.Import).
func shortenCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("shorten")
	managementURLFlag(fs)
	asJSON := fs.Bool("json", false, `print the answer as JSON: {"short_url","token"} (with --file: one JSON object per line)`)
	file := fs.String("file", "", "import FILE (one URL per line, or CSV with a target_url column; - for stdin) through POST /shorten/batch")
	concurrency := fs.Int("concurrency", 4, "with --file: batches of 1,000 in flight at once (1-32)")
	key := fs.String("idempotency-key", "", "without --file: send this Idempotency-Key, so a retry returns the same short URL")
	pos, err := parse(fs, args, 0, 1)
	if err == nil {
		err = checkShortenFlags(fs, pos, *file, *key, *concurrency)
	}
	if err != nil {
		return err
	}
	timeout := 15 * time.Second // a batch of 1,000 takes longer than one URL
	if *file != "" {
		timeout = 2 * time.Minute
	}
	api, err := managementClient(ctx, getenv, fs, timeout)
	if err != nil {
		return err
	}
	if *file != "" {
		return api.Import(ctx, *file, os.Stdin, producer.ImportOptions{Concurrency: *concurrency, JSON: *asJSON}, stdout, stderr)
	}
	var params *management.ShortenParams
	if *key != "" {
		params = &management.ShortenParams{IdempotencyKey: key}
	}
	call := "POST " + api.Base + "/shorten"
	res, err := api.Client.ShortenWithResponse(ctx, params, management.ShortenJSONRequestBody{TargetURL: pos[0]})
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	created := res.JSON201
	if created == nil {
		created = res.JSON200 // an Idempotency-Key replay: the same body
	}
	return producer.Print(stdout, *asJSON, producer.Answer{Call: call, Status: res.StatusCode(), Body: res.Body}, "ShortURL", created, func(u *management.ShortURL) error {
		_, err := fmt.Fprintln(stdout, tty.Printable(u.ShortURL))
		return err
	})
}

// checkShortenFlags refuses a command line that mixes the two modes, or gives an
// empty --idempotency-key: that is most often an unset shell variable, and sending
// no key would issue a new short URL on every retry the key was meant to make safe.
func checkShortenFlags(fs *flag.FlagSet, pos []string, file, key string, concurrency int) error {
	keyGiven := false
	fs.Visit(func(fl *flag.Flag) { keyGiven = keyGiven || fl.Name == "idempotency-key" })
	switch {
	case file == "" && len(pos) != 1:
		return &usageError{fs: fs, err: errors.New("an argument is missing: give TARGET_URL or --file FILE")}
	case file != "" && len(pos) != 0:
		return &usageError{fs: fs, err: errors.New("give TARGET_URL or --file FILE, not both")}
	case file != "" && keyGiven:
		return &usageError{fs: fs, err: errors.New("--idempotency-key is for one URL: --file derives its keys from the file")}
	case keyGiven && key == "":
		return &usageError{fs: fs, err: errors.New("--idempotency-key is empty (an unset variable?): give a key, or leave the flag out to issue a new short URL")}
	case concurrency < 1 || concurrency > 32:
		return &usageError{fs: fs, err: fmt.Errorf("--concurrency %d: want 1 to 32", concurrency)}
	}
	return nil
}
