// Command bare302 is the yardstick of scripts/bench.sh: the least a resolver can
// do, in three forms a redirect of Linoone is measured against.
//
//	bare      a bare net/http handler answering 302 from an in-memory map
//	durable   the same, answering only once the click's record (~300 bytes: token,
//	          visitor, user agent, time, event id) is appended to a file and
//	          fdatasync'ed by a group commit: what `LINOONE_BUS_SYNC=each` promises
//	interval  the same with one write(2) of the record before the 302 and an
//	          fdatasync every 20 ms: what `LINOONE_BUS_SYNC=interval` promises
//
// The file is zero-filled ahead and overwritten in a ring, as a write-ahead log
// is, so that a sync commits data and not the file's growing size.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	mode := flag.String("mode", "bare", "bare, durable or interval")
	dir := flag.String("dir", os.TempDir(), "where durable and interval write their log (the data dir's disk)")
	flag.Parse()
	if flag.NArg() != 2 || (*mode != "bare" && *mode != "durable" && *mode != "interval") {
		fmt.Fprintln(os.Stderr, "usage: bare302 [-mode bare|durable|interval] [-dir DIR] ADDR TOKENS_FILE (lines: token target)")
		os.Exit(2)
	}
	if err := run(*mode, *dir, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "bare302:", err)
		os.Exit(1)
	}
}

func run(mode, dir, addr, tokensFile string) error {
	targets, err := readTargets(tokensFile)
	if err != nil {
		return err
	}
	var keep func(rec []byte) error // nil: bare
	if mode != "bare" {
		l, err := openLog(filepath.Join(dir, "bare302-"+mode+".log"))
		if err != nil {
			return err
		}
		defer os.Remove(l.f.Name())
		if mode == "durable" {
			go l.commitLoop()
			keep = l.appendDurable
		} else {
			go l.syncEvery(20 * time.Millisecond)
			keep = l.appendWritten
		}
	}
	var seq uint64
	var seqMu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, ok := targets[r.URL.Path[1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if keep != nil {
			seqMu.Lock()
			seq++
			n := seq
			seqMu.Unlock()
			if err := keep(record(r, n)); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		w.Header().Set("Location", target)
		w.Header().Set("Cache-Control", "private, max-age=0")
		w.WriteHeader(http.StatusFound)
	})
	return http.ListenAndServe(addr, h)
}

func readTargets(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	targets := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if tok, target, ok := strings.Cut(sc.Text(), " "); ok {
			targets[tok] = target
		}
	}
	return targets, sc.Err()
}

// record is a click's record as a line of JSON, about 300 bytes with a browser's
// user agent.
func record(r *http.Request, n uint64) []byte {
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	b := make([]byte, 0, 384)
	b = append(b, `{"event_identifier":"ev_`...)
	b = strconv.AppendUint(b, n, 10)
	b = append(b, `","token":`...)
	b = strconv.AppendQuote(b, r.URL.Path[1:])
	b = append(b, `,"visitor_ip_address":`...)
	b = strconv.AppendQuote(b, ip)
	b = append(b, `,"user_agent":`...)
	b = strconv.AppendQuote(b, r.UserAgent())
	b = append(b, `,"effective_at":"`...)
	b = time.Now().UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, "\"}\n"...)
}

// ringSize is how much of the log is zero-filled ahead and reused in a ring.
const ringSize = 64 << 20

// clickLog is the file the floors keep their records in.
type clickLog struct {
	f *os.File

	mu      sync.Mutex
	cond    *sync.Cond
	off     int64
	pending []byte       // durable: records waiting for the next commit
	waiters []chan error // durable: their handlers
}

func openLog(path string) (*clickLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	zeros := make([]byte, 1<<20)
	for off := 0; off < ringSize; off += len(zeros) {
		if _, err := f.Write(zeros); err != nil {
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	l := &clickLog{f: f}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// write writes b at the ring's next offset; the caller holds mu (durable: the
// commit loop alone writes).
func (l *clickLog) write(b []byte) error {
	if l.off+int64(len(b)) > ringSize {
		l.off = 0
	}
	_, err := l.f.WriteAt(b, l.off)
	l.off += int64(len(b))
	return err
}

// appendDurable queues rec for the next group commit and waits for it.
func (l *clickLog) appendDurable(rec []byte) error {
	done := make(chan error, 1)
	l.mu.Lock()
	l.pending = append(l.pending, rec...)
	l.waiters = append(l.waiters, done)
	l.cond.Signal()
	l.mu.Unlock()
	return <-done
}

// commitLoop writes what is pending in one write(2), fdatasyncs it, and answers
// every handler that waited for it; what arrives meanwhile joins the next commit.
func (l *clickLog) commitLoop() {
	var spare []byte
	for {
		l.mu.Lock()
		for len(l.waiters) == 0 {
			l.cond.Wait()
		}
		batch, waiters := l.pending, l.waiters
		l.pending, l.waiters = spare[:0], nil
		l.mu.Unlock()
		err := l.write(batch)
		if err == nil {
			err = datasync(l.f)
		}
		for _, w := range waiters {
			w <- err
		}
		spare = batch
	}
}

// appendWritten writes rec with one write(2) and returns; syncEvery makes it
// durable within its interval.
func (l *clickLog) appendWritten(rec []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write(rec)
}

func (l *clickLog) syncEvery(d time.Duration) {
	for range time.Tick(d) {
		if err := datasync(l.f); err != nil {
			fmt.Fprintln(os.Stderr, "bare302: fdatasync:", err)
		}
	}
}
