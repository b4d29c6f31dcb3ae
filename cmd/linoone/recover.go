package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/rotlog"
	"github.com/linoone/linoone/internal/local/localbus"
)

const recoverUsage = `usage: linoone recover --from-log FILE

Republishes onto the local bus every click fact a log holds whole, each once per
run: the graph_fact of a serve log's ERROR lines, or the events of the facts log.
The consumer keeps the facts Persist refused in $LINOONE_DATA_DIR/bus/refused.jsonl,
in the shape of the serve log's lines. When FILE has rotated files beside it
(FILE.<UTC time>[.gz], as facts.jsonl and refused.jsonl have), they are read
first, oldest first, then FILE; a rotated file named alone is read alone. A
compressed file that is not whole is refused before anything is republished.

example:
  linoone serve 2>serve.log   # later:
  linoone recover --from-log serve.log
  linoone recover --from-log .linoone/bus/refused.jsonl
  LINOONE_DATA_DIR=.new linoone recover --from-log .linoone/facts.jsonl   # a new Persist
`

// refusedFile is the name of the file in which the bus's consumer keeps the click
// facts Persist refused (localbus.Consumer.RefusedPath).
const refusedFile = "refused.jsonl"

// recoverCmd republishes onto the local bus every click fact a log and its rotated
// files hold whole (shorturl.Republisher).
func recoverCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("recover")
	from := fs.String("from-log", "", "a log (JSON lines) whose click facts to republish, after its rotated files")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *from == "" {
		return &usageError{fs: fs, err: errors.New("--from-log FILE is required")}
	}
	cfg, err := config.LoadReplay(getenv)
	if err != nil {
		return err
	}
	if err := datadir.CheckServed(cfg.DataDir); err != nil {
		return err
	}
	files, err := rotlog.Chain(*from)
	if errors.Is(err, os.ErrNotExist) && filepath.Base(*from) == refusedFile {
		// The consumer makes refused.jsonl on Persist's first refusal only: its
		// absence means there is no refused fact, which the help's example meets
		// on every fresh data dir.
		_, err = fmt.Fprintf(stdout, "nothing to recover: %s does not exist (Persist has refused no click fact)\n", *from)
		return err
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := rotlog.Verify(f); err != nil {
			return fmt.Errorf("%w: nothing was republished; move it aside to recover the other files, or name one with --from-log", err)
		}
	}
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, datadir.Bus), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region})
	if err != nil {
		return err
	}
	defer bus.Close()
	// The publishers' warnings and the progress lines share stderr.
	warn := &lockedWriter{w: stderr}
	rep := shorturl.NewRepublisher(bus, warn)
	if err := republishChain(ctx, rep, files, warn); err != nil {
		return err
	}
	res := rep.Result()
	fmt.Fprintf(stdout, "republished %d, skipped %d, failed %d, invalid %d\n", res.Republished, res.Skipped, res.Failed, res.Invalid)
	if res.Failed > 0 || res.Invalid > 0 {
		return fmt.Errorf("%d click facts were not republished (run recover again) and %d lines held a fact that cannot be read", res.Failed, res.Invalid)
	}
	return nil
}

// progressEvery is how often recover says how far it got in a long chain.
const progressEvery = 2 * time.Second

// republishChain reads the files of a chain in order, the last one as the live log,
// and says on w which file it reads and, every progressEvery, how far it got.
func republishChain(ctx context.Context, rep *shorturl.Republisher, files []rotlog.File, w io.Writer) error {
	stop := make(chan struct{})
	defer close(stop)
	current := make(chan string, 1)
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		name := ""
		for {
			select {
			case <-stop:
				return
			case name = <-current:
			case <-t.C:
				res := rep.Result()
				fmt.Fprintf(w, "recover: reading %s: %d lines read, %d facts republished\n", name, res.Lines, res.Republished)
			}
		}
	}()
	for i, f := range files {
		if len(files) > 1 {
			fmt.Fprintf(w, "recover: file %d of %d: %s (%d bytes)\n", i+1, len(files), f.Path, f.Size)
		}
		current <- f.Path
		r, err := rotlog.Open(f)
		if err != nil {
			return err
		}
		err = rep.Read(ctx, f.Path, r, i == len(files)-1 && !f.Compressed)
		cerr := r.Close()
		if err != nil {
			return err
		}
		if cerr != nil {
			return fmt.Errorf("%s: %w", f.Path, cerr)
		}
	}
	return nil
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
