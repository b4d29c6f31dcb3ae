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
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/local/localbus"
)

// listDLQ prints what waits in the local click DLQ.
func listDLQ(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("dlq")
	asJSON := fs.Bool("json", false, "print the entries as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadDLQ(getenv)
	if err != nil {
		return err
	}
	if err := servedDataDir(cfg.DataDir); err != nil {
		return err
	}
	dir := filepath.Join(cfg.DataDir, dlqDir)
	q, err := localbus.OpenDLQ(dir, localbus.DLQOptions{})
	if err != nil {
		return err
	}
	entries, err := q.List(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if entries == nil {
			entries = []localbus.Entry{}
		}
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAILED_AT\tATTEMPTS\tTOKEN\tIDEMPOTENCY_KEY\tREASON")
	for _, e := range entries {
		reason := e.Reason
		if e.Problem != "" {
			reason = "INVALID: " + e.Problem
		}
		token := e.Token
		if token == "" {
			token = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", e.FailedAt.UTC().Format(time.RFC3339), e.Attempts, oneLine(token, 40), oneLine(e.IdempotencyKey, 80), oneLine(reason, 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%d click facts waiting in %s\n", len(entries), dir)
	return err
}

// replay republishes every fact in the local click DLQ onto the local bus.
func replay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("replay")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadReplay(getenv)
	if err != nil {
		return err
	}
	if err := servedDataDir(cfg.DataDir); err != nil {
		return err
	}
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, busDir), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region})
	if err != nil {
		return err
	}
	defer bus.Close()
	q, err := localbus.OpenDLQ(filepath.Join(cfg.DataDir, dlqDir), localbus.DLQOptions{})
	if err != nil {
		return err
	}
	tty := isTerminal(stderr)
	progress := func(done, total int) {
		switch {
		case *quiet:
		case tty: // one line, rewritten in place
			fmt.Fprintf(stderr, "\rreplaying %d/%d", done, total)
			if done == total {
				fmt.Fprintln(stderr)
			}
		case done == total || done%1000 == 0: // a log: a line now and then
			fmt.Fprintf(stderr, "replaying %d/%d\n", done, total)
		}
	}
	res, err := q.Replay(ctx, bus, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "replayed %d, failed %d, invalid %d\n", res.Replayed, res.Failed, res.Invalid)
	if res.Failed > 0 || res.Invalid > 0 {
		return fmt.Errorf("%d click facts stay in the DLQ (failed) and %d were set aside as invalid", res.Failed, res.Invalid)
	}
	return nil
}

// servedDataDir refuses a data dir that no serve has used, which holds no local
// bus, as shorten and consume refuse one without the credentials serve writes:
// dlq, replay and recover would otherwise create a bus and a DLQ there and report
// success, for facts republished into a journal no serve reads.
func servedDataDir(dataDir string) error {
	_, err := os.Stat(filepath.Join(dataDir, busDir))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no local bus in %s: %s", dataDir, startServeFirst(dataDir))
	case err != nil:
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}

// startServeFirst is the advice of a command that finds in its data dir nothing
// serve made there.
func startServeFirst(dataDir string) string {
	return fmt.Sprintf("start `linoone serve` with the same LINOONE_DATA_DIR (%s) first", dataDir)
}

// oneLine is s for one cell of the listing: whitespace that would break the row as
// a space, and anything a terminal would act on rather than print (an escape
// sequence in an invalid file's key, in a reason quoting what a server answered) as
// its Go escape; cut after n characters. A listing of the DLQ shows what is in
// files anyone who could write the data dir may have made.
func oneLine(s string, n int) string {
	var b strings.Builder
	for count := 0; s != ""; count++ {
		if count == n {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		s = s[size:]
	}
	return b.String()
}

// isTerminal reports whether w is a character device (an interactive terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
