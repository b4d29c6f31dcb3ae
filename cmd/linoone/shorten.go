package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/config"
	"github.com/linoone/linoone/internal/sigv4"
)

// shorten is the producer CLI: it signs POST /shorten with SigV4 through the
// generated client and prints the short URL; with --file it imports a whole file
// through POST /shorten/batch (bulk.go).
func shorten(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("shorten")
	managementURLFlag(fs)
	asJSON := fs.Bool("json", false, `print the answer as JSON: {"short_url","token"} (with --file: one JSON object per line)`)
	bulk := bulkFlags(fs)
	pos, err := parse(fs, args, 0, 1)
	if err == nil {
		err = bulk.check(fs, pos)
	}
	if err != nil {
		return err
	}
	client, base, err := managementClient(getenv, fs, bulk.timeout())
	if err != nil {
		return err
	}
	if *bulk.file != "" {
		return bulk.run(ctx, client, base, *asJSON, os.Stdin, stdout, stderr)
	}
	res, err := client.ShortenWithResponse(ctx, bulk.params(), management.ShortenJSONRequestBody{TargetURL: pos[0]})
	if err != nil {
		return fmt.Errorf("POST %s/shorten: %w", base, err)
	}
	created := res.JSON201
	if created == nil {
		created = res.JSON200 // an Idempotency-Key replay: the same body
	}
	return printAnswer(stdout, *asJSON, res.StatusCode(), res.Body, created, func(u *management.ShortURL) error {
		_, err := fmt.Fprintln(stdout, u.ShortURL)
		return err
	})
}

// printAnswer prints a management API answer: its JSON as it came with --json,
// else what text writes of ok; without ok (another status) it is the problem the
// answer carries.
func printAnswer[T any](stdout io.Writer, asJSON bool, status int, body []byte, ok *T, text func(*T) error) error {
	if ok == nil {
		return problemError(status, body)
	}
	if asJSON {
		_, err := stdout.Write(body)
		return err
	}
	return text(ok)
}

// producerCredentials are the SigV4 credentials of the producer CLI: the environment
// pair, or the pair `linoone serve` wrote into the data directory. Unlike serve, it
// never creates one — a new random pair would not match the server's.
func producerCredentials(cfg config.Shorten) (sigv4.Credentials, error) {
	if cfg.Credentials == (sigv4.Credentials{}) {
		path := filepath.Join(cfg.DataDir, sigv4.CredentialsFile)
		if _, err := os.Stat(path); err != nil {
			return sigv4.Credentials{}, fmt.Errorf("no credentials: set %s and %s, or %s",
				sigv4.EnvAccessKeyID, sigv4.EnvSecretAccessKey, startServeFirst(cfg.DataDir))
		}
	}
	creds, _, _, err := sigv4.LoadOrCreate(cfg.DataDir, cfg.Credentials)
	return creds, err
}

// problemError turns a problem+json answer into a one-line error.
func problemError(status int, body []byte) error {
	var p management.Problem
	if err := json.Unmarshal(body, &p); err == nil && p.Detail != "" {
		return fmt.Errorf("%d %s: %s (%s)", status, p.Title, p.Detail, p.Type)
	}
	return fmt.Errorf("unexpected answer %d: %.200s", status, body)
}
