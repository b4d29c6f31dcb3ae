package localbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/flock"
)

const (
	defaultDLQMax  = 100_000
	replayLockName = ".replay.lock"
	invalidDirName = "invalid"
	dlqExt         = ".json"
	maxKeyInName   = 128
	staleTempAge   = 10 * time.Minute
	recountEvery   = time.Second
)

var (
	// ErrDLQFull reports a dead letter refused because the DLQ holds its maximum.
	ErrDLQFull = errors.New("dlq is full")
	// ErrReplayRunning reports a replay refused because another one holds the lock.
	ErrReplayRunning = errors.New("another replay is running")
)

// DLQOptions configures a DLQ.
type DLQOptions struct {
	Max    int              // most messages held; default 100,000
	Now    func() time.Time // failed_at of rewritten messages; default time.Now
	Logger *slog.Logger     // default: discard
}

// Entry describes one DLQ message for listing.
type Entry struct {
	Name           string    // file name in the DLQ dir
	IdempotencyKey string    // the fact's idempotency key
	Token          string    // the visited short URL's token; "" when the fact is invalid
	FailedAt       time.Time // last failure
	Attempts       int       // publish attempts so far
	Reason         string    // last failure's reason
	Problem        string    // why the file is not a valid dead letter; "" when it is
}

// ReplayResult counts what a replay did with each message.
type ReplayResult struct {
	Replayed int // published and deleted
	Failed   int // publish failed: rewritten with attempts+1
	Invalid  int // not a dead letter: moved to invalid/
}

// DLQ is the durable local click DLQ: one JSON file per message, written atomically.
// Any number of processes may add messages while one replays.
type DLQ struct {
	dir     string
	invalid string
	opts    DLQOptions
	log     *slog.Logger

	count       atomic.Int64 // messages held, as last counted plus added minus removed here
	mu          sync.Mutex
	lastRecount time.Time
}

var _ shorturl.DeadLetters = (*DLQ)(nil)

// OpenDLQ opens (creating it if needed) the DLQ in dir.
func OpenDLQ(dir string, opts DLQOptions) (*DLQ, error) {
	if opts.Max <= 0 {
		opts.Max = defaultDLQMax
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	q := &DLQ{dir: dir, invalid: filepath.Join(dir, invalidDirName), opts: opts, log: opts.Logger}
	if err := os.MkdirAll(q.invalid, 0o700); err != nil {
		return nil, fmt.Errorf("open dlq: %w", err)
	}
	q.removeStaleTemps()
	names, err := q.names()
	if err != nil {
		return nil, fmt.Errorf("open dlq: %w", err)
	}
	q.count.Store(int64(len(names)))
	return q, nil
}

// DeadLetter stores one message durably: a temporary file, fsync, a link to its name
// (never replacing another message), fsync of the directory.
func (q *DLQ) DeadLetter(ctx context.Context, d clickfact.DeadLetter) error {
	key := factKey(d.GraphFact)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dead-letter %s: %w", key, err)
	}
	if err := q.checkRoom(); err != nil {
		return fmt.Errorf("dead-letter %s: %w", key, err)
	}
	body, err := d.Encode()
	if err != nil {
		return fmt.Errorf("dead-letter %s: encode: %w", key, err)
	}
	if _, err := q.create(fileName(d.FailedAt, key, q.opts.Now), body); err != nil {
		return fmt.Errorf("dead-letter %s: %w", key, err)
	}
	q.count.Add(1)
	return nil
}

func (q *DLQ) checkRoom() error {
	if q.count.Load() < int64(q.opts.Max) {
		return nil
	}
	// The count may be stale: a replay in another process deletes messages.
	q.mu.Lock()
	defer q.mu.Unlock()
	if time.Since(q.lastRecount) >= recountEvery {
		names, err := q.names()
		if err != nil {
			return err
		}
		q.count.Store(int64(len(names)))
		q.lastRecount = time.Now()
	}
	if n := q.count.Load(); n >= int64(q.opts.Max) {
		return fmt.Errorf("%w: %d messages, the maximum is %d", ErrDLQFull, n, q.opts.Max)
	}
	return nil
}

// create writes body under name, or name-2, name-3 … if a message has that name.
func (q *DLQ) create(name string, body []byte) (string, error) {
	tmp, err := os.CreateTemp(q.dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create temp: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := writeSyncClose(tmp, body); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(name, dlqExt)
	for i := 1; ; i++ {
		final := name
		if i > 1 {
			final = base + "-" + strconv.Itoa(i) + dlqExt
		}
		err := os.Link(tmp.Name(), filepath.Join(q.dir, final))
		if err == nil {
			return final, syncDir(q.dir)
		}
		if !errors.Is(err, os.ErrExist) || i >= 100 {
			return "", fmt.Errorf("link %s: %w", final, err)
		}
	}
}

// List describes the messages in failed_at order. Files that are not dead letters
// are listed with Problem set.
func (q *DLQ) List(ctx context.Context) ([]Entry, error) {
	names, err := q.names()
	if err != nil {
		return nil, fmt.Errorf("list dlq: %w", err)
	}
	entries := make([]Entry, 0, len(names))
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("list dlq: %w", err)
		}
		body, err := os.ReadFile(filepath.Join(q.dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // replayed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("list dlq: %w", err)
		}
		entries = append(entries, describe(name, body))
	}
	return entries, nil
}

func describe(name string, body []byte) Entry {
	e := Entry{Name: name}
	d, f, err := clickfact.ParseDeadLetter(body)
	if err != nil {
		e.Problem = err.Error()
		_ = json.Unmarshal(body, &d) // show what can be read
		e.IdempotencyKey = factKey(d.GraphFact)
	} else {
		e.IdempotencyKey, e.Token = f.IdempotencyKey, f.Token
	}
	e.FailedAt, _ = time.Parse(time.RFC3339Nano, d.FailedAt)
	e.Attempts, e.Reason = d.Attempts, d.Reason
	return e
}

// Replay publishes every message present when it starts, in failed_at order, with
// shorturl.Replay (same fact, same idempotency key). A published message is deleted;
// one that fails again is rewritten with attempts+1, a new failed_at and the new
// reason; a file that is not a dead letter is moved to invalid/. One replay runs at a
// time across processes (ErrReplayRunning). progress, if not nil, is called after
// each message. Replay stops early only when ctx ends or the DLQ dir fails.
func (q *DLQ) Replay(ctx context.Context, pub shorturl.Publisher, progress func(done, total int)) (ReplayResult, error) {
	var res ReplayResult
	lock, err := flock.Open(filepath.Join(q.dir, replayLockName))
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	defer func() { _ = lock.Close() }() // closing releases the flock
	held, err := lock.TryLock()
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	if held {
		return res, fmt.Errorf("replay %s: %w", q.dir, ErrReplayRunning)
	}
	names, err := q.names()
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	for i, name := range names {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("replay stopped after %d of %d messages: %w", i, len(names), err)
		}
		if err := q.replayOne(ctx, pub, name, &res); err != nil {
			return res, fmt.Errorf("replay stopped after %d of %d messages: %w", i, len(names), err)
		}
		if progress != nil {
			progress(i+1, len(names))
		}
	}
	return res, nil
}

func (q *DLQ) replayOne(ctx context.Context, pub shorturl.Publisher, name string, res *ReplayResult) error {
	path := filepath.Join(q.dir, name)
	body, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if _, _, err := clickfact.ParseDeadLetter(body); err != nil {
		if err := q.setAside(name); err != nil {
			return err
		}
		res.Invalid++
		q.log.Error("dlq file is not a dead letter; moved to invalid/", "file", name, "err", err)
		return nil
	}
	d, f, perr := shorturl.Replay(ctx, pub, body)
	if perr == nil {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("delete replayed %s: %w", name, err)
		}
		q.count.Add(-1)
		res.Replayed++
		return syncDir(q.dir)
	}
	if ctx.Err() != nil {
		// Our own deadline, not the bus: keep the message as it is.
		return perr
	}
	next := clickfact.NewDeadLetter(f, q.opts.Now(), d.Attempts+1, perr)
	if err := q.rewrite(name, f.IdempotencyKey, next); err != nil {
		return err
	}
	res.Failed++
	q.log.Warn("dlq replay failed; message kept", "short_url_token", f.Token, "file", name, "idempotency_key", f.IdempotencyKey,
		"attempts", next.Attempts, "err", perr)
	return nil
}

// rewrite replaces the message in name with d, then renames it after d's failed_at.
// Both steps are renames, so at every moment exactly one file holds the message.
func (q *DLQ) rewrite(name, key string, d clickfact.DeadLetter) error {
	body, err := d.Encode()
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	path := filepath.Join(q.dir, name)
	if err := writeFileAtomic(path, body); err != nil {
		return fmt.Errorf("rewrite %s: %w", name, err)
	}
	next, err := q.freeName(q.dir, fileName(d.FailedAt, key, q.opts.Now), name)
	if err != nil || next == name {
		return err
	}
	if err := os.Rename(path, filepath.Join(q.dir, next)); err != nil {
		return fmt.Errorf("rename %s to %s: %w", name, next, err)
	}
	return syncDir(q.dir)
}

// setAside moves a file that is not a dead letter to invalid/.
func (q *DLQ) setAside(name string) error {
	to, err := q.freeName(q.invalid, name, "")
	if err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(q.dir, name), filepath.Join(q.invalid, to)); err != nil {
		return fmt.Errorf("move %s to invalid/: %w", name, err)
	}
	q.count.Add(-1)
	if err := syncDir(q.invalid); err != nil {
		return err
	}
	return syncDir(q.dir)
}

// freeName returns name, or name-2, name-3 … whichever does not exist in dir (own
// is the caller's current name there, which counts as free).
func (q *DLQ) freeName(dir, name, own string) (string, error) {
	base := strings.TrimSuffix(name, dlqExt)
	for i := 1; i <= 100; i++ {
		cand := name
		if i > 1 {
			cand = base + "-" + strconv.Itoa(i) + dlqExt
		}
		if cand == own {
			return cand, nil
		}
		taken, err := exists(filepath.Join(dir, cand))
		if err != nil {
			return "", err
		}
		if !taken {
			return cand, nil
		}
	}
	return "", fmt.Errorf("no free name for %s in %s", name, dir)
}

// WaitingInDLQ counts the messages in the DLQ in dir without opening it: it creates
// nothing and removes nothing, so it may run beside serve. A DLQ never created holds
// none.
func WaitingInDLQ(dir string) (int, error) {
	names, err := messageNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return len(names), err
}

// names returns the message files, sorted: by failed_at, since names start with it.
func (q *DLQ) names() ([]string, error) { return messageNames(q.dir) }

// messageNames returns the message files of the DLQ in dir, sorted.
func messageNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read dlq dir: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, dlqExt) {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// removeStaleTemps deletes temporary files left by a crash. Young ones may belong to
// a writer at work in another process.
func (q *DLQ) removeStaleTemps() {
	entries, err := os.ReadDir(q.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTempAge {
			_ = os.Remove(filepath.Join(q.dir, e.Name()))
		}
	}
}

// fileName is "<failed_at as 20261129T101112345Z>-<key with [^A-Za-z0-9_-] as _>.json".
func fileName(failedAt, key string, now func() time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, failedAt)
	if err != nil {
		t = now()
	}
	t = t.UTC()
	b := make([]byte, 0, 24+len(key)+len(dlqExt))
	b = t.AppendFormat(b, "20060102T150405")
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '-')
	if key == "" {
		key = "unknown"
	}
	for i := 0; i < len(key) && i < maxKeyInName; i++ {
		c := key[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(append(b, dlqExt...))
}

// factKey reads the idempotency key of a fact without judging the rest of it.
func factKey(fact []byte) string {
	var f struct {
		Key string `json:"idempotency_key"`
	}
	_ = json.Unmarshal(fact, &f)
	return f.Key
}
