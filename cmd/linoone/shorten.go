package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/http/sigv4"
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
	api, err := managementClient(getenv, fs, bulk.timeout())
	if err != nil {
		return err
	}
	if *bulk.file != "" {
		return bulk.run(ctx, api, *asJSON, os.Stdin, stdout, stderr)
	}
	call := "POST " + api.base + "/shorten"
	res, err := api.client.ShortenWithResponse(ctx, bulk.params(), management.ShortenJSONRequestBody{TargetURL: pos[0]})
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	created := res.JSON201
	if created == nil {
		created = res.JSON200 // an Idempotency-Key replay: the same body
	}
	return printAnswer(stdout, *asJSON, answer{call, res.StatusCode(), res.Body}, "ShortURL", created, func(u *management.ShortURL) error {
		_, err := fmt.Fprintln(stdout, printable(u.ShortURL))
		return err
	})
}

// answer is a management API answer as a command reads it: the request it answers,
// as messages name it ("GET http://…/links/7BTadEDkJ8"), its status and its body.
type answer struct {
	call   string
	status int
	body   []byte
}

// printAnswer prints a management API answer: its JSON as it came with --json,
// else what text writes of ok; without ok (another status) it is the problem the
// answer carries. An ok answer must hold what openapi.yaml requires of schema: a
// proxy or another service at a wrong URL answers 200 {"foo":1} too, which the
// generated client decodes as an empty answer.
func printAnswer[T any](stdout io.Writer, asJSON bool, a answer, schema string, ok *T, text func(*T) error) error {
	if ok == nil {
		return problemError(a)
	}
	if err := checkShape(schema, a.body); err != nil {
		return fmt.Errorf("unexpected answer from %s: %d %v: %.200q", a.call, a.status, err, a.body)
	}
	if asJSON {
		_, err := stdout.Write(a.body)
		return err
	}
	return text(ok)
}

// shape is what openapi.yaml requires of an object: its required members and, for a
// member that is an array of objects, the schema of its items.
type shape struct {
	members []string
	items   map[string]string
}

// shapes are the schemas of the answers the CLI reads, by their names in
// openapi.yaml (TestShapesAreTheSpecs keeps them in step with it).
var shapes = map[string]shape{
	"ShortURL":      {members: []string{"token", "short_url"}},
	"Link":          {members: []string{"token", "short_url", "target_url"}},
	"LinkStats":     {members: []string{"token", "clicks", "by_day"}, items: map[string]string{"by_day": "DayClicks"}},
	"DayClicks":     {members: []string{"date", "clicks", "previews"}},
	"BatchResponse": {members: []string{"results"}},
}

// checkShape says what body lacks of what schema requires: a JSON object, its
// required members (null counts as missing), and theirs in the items of an array
// member (by_day[2].date).
func checkShape(schema string, body []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return errors.New("is not a JSON object")
	}
	var missing []string
	s := shapes[schema]
	for _, m := range s.members {
		if v, ok := obj[m]; !ok || string(v) == "null" {
			missing = append(missing, m)
		}
	}
	for m, itemSchema := range s.items {
		var items []json.RawMessage
		_ = json.Unmarshal(obj[m], &items) // the generated client decoded it already
		for i, item := range items {
			if err := checkShape(itemSchema, item); err != nil {
				missing = append(missing, fmt.Sprintf("%s[%d] (%v)", m, i, err))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("lacks %s", strings.Join(missing, ", "))
	}
	return nil
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
func problemError(a answer) error {
	var p management.Problem
	if err := json.Unmarshal(a.body, &p); err == nil && p.Detail != "" {
		return errors.New(problemText(a.status, p))
	}
	return fmt.Errorf("unexpected answer from %s: %d: %.200q", a.call, a.status, a.body)
}

// problemText is a problem as a message shows it, each of its strings printable.
func problemText(status int, p management.Problem) string {
	return fmt.Sprintf("%d %s: %s (%s)", status, printable(p.Title), printable(p.Detail), printable(p.Type))
}

// printable is s as it is when it is valid UTF-8 and every character of it prints,
// else quoted with Go's escapes (strconv.Quote): an input line or a server's problem
// echoed raw could hold a carriage return that overwrites the line, or escape
// sequences that the terminal runs.
func printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
