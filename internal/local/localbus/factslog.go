package localbus

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/linoone/linoone/internal/foundation/nofollow"
	"github.com/linoone/linoone/internal/foundation/rotlog"
)

// Facts log defaults: local mode's data dir stays within its budget (issue 47) with
// these, however many clicks pass.
const (
	DefaultFactsLogMaxSize = 32 << 20
	DefaultFactsLogKeep    = 8
)

// FactsLogOptions bounds the facts log.
type FactsLogOptions struct {
	// MaxSize is the size past which the log is moved aside before the next batch is
	// appended (a batch is never split); 0 never rotates it.
	MaxSize int64
	// Keep is how many logs moved aside are kept, gzip-compressed; the oldest go.
	Keep int
	// Off writes no facts log at all: events are delivered to Persist only.
	Off bool
}

// Steps of a rotation the consumer takes itself, before rotlog's (see atRotate).
const (
	stepMoved    rotlog.Step = "moved"    // the log is renamed aside; no new one yet
	stepReopened rotlog.Step = "reopened" // a new, empty log is open and recorded in the offset
)

// dueRotation reports whether the facts log, as committed, is to be moved aside
// before a batch of n bytes is appended.
func (c *Consumer) dueRotation(n int) bool {
	max := c.opts.FactsLog.MaxSize
	return max > 0 && c.factsSize > 0 && c.factsSize+int64(n) > max
}

// rotateFacts moves the facts log aside and opens a new one, recording its size (0)
// with the offset before any line is appended to it, so that a crash in the next
// batch cuts the new log, never the one moved aside. The log moved aside holds the
// committed lines only (appendFacts cut what a failed attempt left first). A crash
// after the rename and before the new size is recorded finds a log shorter than the
// offset records, which open records as it does one moved aside from outside.
// Compression and pruning are the tidy goroutine's.
func (c *Consumer) rotateFacts() error {
	if _, err := rotlog.Rotate(c.opts.FactsPath, time.Now()); err != nil {
		// The log stays where it is and grows past MaxSize until a later batch
		// rotates it: delivery matters more than the bound.
		c.log.Error("facts log: rotation failed; appending to it meanwhile", "err", err, "facts_path", c.opts.FactsPath)
		return nil
	}
	c.hookRotate(stepMoved)
	f, err := nofollow.OpenFile(c.opts.FactsPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open new facts log: %w", err)
	}
	if err := syncDir(filepath.Dir(c.opts.FactsPath)); err != nil {
		_ = f.Close()
		return err
	}
	if err := c.facts.Close(); err != nil {
		c.log.Warn("close the facts log moved aside", "err", err)
	}
	c.facts = f
	if err := c.recordFactsSize(0); err != nil {
		return err
	}
	c.hookRotate(stepReopened)
	c.tidy.kick()
	return nil
}

func (c *Consumer) hookRotate(s rotlog.Step) {
	if c.opts.atRotate != nil {
		c.opts.atRotate(s)
	}
}

// tidier compresses and prunes the facts logs moved aside, in a goroutine of its
// own, so that a batch's commit never waits for gzip.
type tidier struct {
	wake chan struct{}
	done chan struct{}
	once sync.Once
}

func (t *tidier) kick() {
	if t.wake == nil {
		return
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// startTidy starts the goroutine and has it finish what a crash left: logs moved
// aside but not compressed, temporary files.
func (c *Consumer) startTidy() {
	c.tidy.wake, c.tidy.done = make(chan struct{}, 1), make(chan struct{})
	keep := c.opts.FactsLog.Keep
	if keep <= 0 {
		keep = DefaultFactsLogKeep
	}
	path, hook := c.opts.FactsPath, c.opts.atRotate
	go func() {
		defer close(c.tidy.done)
		for range c.tidy.wake {
			if err := rotlog.Tidy(path, keep, hook); err != nil {
				c.log.Error("facts log: compressing the logs moved aside failed; they stay uncompressed", "err", err)
			}
		}
	}()
	c.tidy.kick()
}

// stopTidy waits for the goroutine to finish its work in hand.
func (c *Consumer) stopTidy() {
	if c.tidy.wake == nil {
		return
	}
	c.tidy.once.Do(func() { close(c.tidy.wake) })
	<-c.tidy.done
}
