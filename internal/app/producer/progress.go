package producer

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressReporter shows an import's progress on stderr: a bar redrawn in place on
// a terminal, a plain line every interval otherwise (logs, CI), and a summary at the
// end. Lines printed through it (failed records) never tear the bar.
type progressReporter struct {
	w        io.Writer
	tty      bool
	interval time.Duration

	mu      sync.Mutex
	total   int
	done    int
	started time.Time
	stop    chan struct{}
	stopped chan struct{}
}

func newProgress(w io.Writer) *progressReporter {
	p := &progressReporter{w: w, interval: 2 * time.Second}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.interval = true, 100*time.Millisecond
		}
	}
	return p
}

func (p *progressReporter) start(total int) {
	p.total, p.started = total, time.Now()
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
}

func (p *progressReporter) add(n int) {
	p.mu.Lock()
	p.done += n
	p.mu.Unlock()
}

// printf writes a line, clearing the bar first on a terminal.
func (p *progressReporter) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format, args...)
}

// draw writes the current state; the caller holds mu.
func (p *progressReporter) draw() {
	elapsed := time.Since(p.started).Seconds()
	rate := float64(p.done) / max(elapsed, 1e-9)
	pct := 100 * p.done / max(p.total, 1)
	if !p.tty {
		fmt.Fprintf(p.w, "linoone shorten: %d/%d links (%d%%), %.0f/s\n", p.done, p.total, pct, rate)
		return
	}
	const width = 30
	fill := width * p.done / max(p.total, 1)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d %3d%% %.0f/s", strings.Repeat("#", fill), strings.Repeat(" ", width-fill), p.done, p.total, pct, rate)
}

// finish stops the updates and writes the summary: the short URLs the import got,
// and its rate, of those alone (failed lines and lines never sent are no links).
func (p *progressReporter) finish(links int) {
	close(p.stop)
	<-p.stopped
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	elapsed := time.Since(p.started)
	fmt.Fprintf(p.w, "linoone shorten: %d links in %.2fs (%.0f/s)\n", links, elapsed.Seconds(), float64(links)/max(elapsed.Seconds(), 1e-9))
}
