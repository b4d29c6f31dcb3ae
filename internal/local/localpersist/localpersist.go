// Package localpersist is local Persist: a faithful, self-contained implementation of
// Persist's HTTP contract (POST /persist/ingest, POST /persist/gremlin; docs/architecture.md "The path
// of a request") backed by an embedded, pure-Go SQLite file.
//
// Persist is an identity-hashed graph store. POST /persist/ingest accepts a typed
// GraphSON v3 document, recomputes every element's identity (internal/core/graphson,
// schemas/IDENTITY.md), refuses producer-sent created_at, and stores the elements
// idempotently with a server-managed created_at. It answers 200 only after the
// transaction is durable (WAL, synchronous=FULL); concurrent ingests are
// group-committed by a single writer goroutine, and a batch that fails is retried
// document by document. Errors: 400 invalid document, 405, 413, 415, 500 database
// failure, 503 closed. A file written by an older schema is migrated when opened
// (schema.go, migrate.go).
//
// POST /persist/gremlin answers a parsed subset of Gremlin-Groovy (grammar in
// parser.go; steps hasLabel, has — with a value or a comparison predicate of P,
// has(key, gte(x)) — limit, count, values, outE, inE, id, label, project with one
// by() per key, and group().by(key).by(key)) in the Gremlin Server HTTP shape with
// typed GraphSON v3. Results come in element-id order; created_at reads like any
// other property; a project() key whose by() finds no value is left out of the map.
// Errors use Gremlin Server's codes: a malformed request, or one past local
// Persist's bounds (a script over 64 KB, a list binding over 10,000 values, a
// traversal binding over 32,000, a project() of over 512 keys, an answer over
// 64 MiB), is HTTP 400 / 499, a script that cannot be evaluated (syntax,
// unsupported step, unbound variable, wrong type) HTTP 500 / 597, a storage failure
// HTTP 500 / 500. Nothing outside the subset is guessed at.
//
// With an [Authenticator] (Options.Authenticator; linoone serve always sets one, a
// SigV4 verifier with local Persist's own key pair) every route but GET /healthz
// requires a valid signature: anything else is refused with 403 before it is read
// or written. Without one the store answers unsigned requests, as a Persist behind
// no authorizer would (tests of the contract itself).
//
// The package stands in for a separate service: it imports only internal/core/graphson,
// the standard library and modernc.org/sqlite, never Linoone's domain.
package localpersist

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/linoone/linoone/internal/foundation/logbudget"
)

// Default limits. A body holds up to a whole POST /shorten/batch: 1,000 short_url
// vertices whose 2,048-character targets make about 2.3 MB of GraphSON.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultMaxBatch     = 256
)

// DefaultMaxAnswerBytes bounds the encoding of a Gremlin answer. Persist's client
// reads no more of any answer (its bound for the largest, a link's stats), and
// nothing else bounded it: 2,000 project() keys over 200 vertices with 2 KB
// targets built an 812 MB answer in 46 s, allocating 7 GB.
const DefaultMaxAnswerBytes = 64 << 20

// errClosed reports a request that reached a closed store.
var errClosed = errors.New("local persist is closed")

// Options configures a Store. The zero value is usable.
type Options struct {
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock for server-managed created_at; nil means time.Now.
	Now func() time.Time
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxBatch bounds how many ingest documents one transaction commits;
	// 0 means DefaultMaxBatch.
	MaxBatch int
	// MaxAnswerBytes bounds the encoded result data of a Gremlin answer; a larger
	// answer is refused. 0 means DefaultMaxAnswerBytes.
	MaxAnswerBytes int
	// Authenticator, when set, must verify every request but GET /healthz; nil
	// serves unsigned requests.
	Authenticator Authenticator
	// IdleCheckpoint is how long the writer waits without a write before it
	// checkpoints the WAL into the database and truncates it to zero bytes; 0 means
	// DefaultIdleCheckpoint. A burst leaves its WAL behind otherwise, at its
	// high-water mark (issue 47).
	IdleCheckpoint time.Duration
}

// DefaultIdleCheckpoint: a burst is over when no write came for this long.
const DefaultIdleCheckpoint = 2 * time.Second

// readerMmapBytes is how much of the database file a reader maps (SQLite's
// mmap_size) instead of copying each page it reads into its own page cache with a
// read call. A link's stats scan its clicks' range of edges_out several times (a
// count distinct per day and for the window, clicks by user agent per day), and
// with 100,000 clicks that range is larger than a connection's cache, so every scan
// read it again through the system. Mapped, the pages are the kernel's page cache,
// shared by the readers. Pages still in the WAL are read as before. Only readers
// map: the writer's commits and checkpoints are unchanged.
//
// SQLite drops a reader's map whenever a read transaction finds the database
// changed since the connection's last one (any commit, and the idle checkpoint's
// truncation of the WAL), as it drops its page cache: the first read after a
// write maps the file again and takes a page fault for each 64 KB of the file
// holding a page it reads. A page cache without the map costs more then: it
// frees and allocates its memory again, page by page (docs/performance.md, "The
// current figures", on the first stats request after a burst).
const readerMmapBytes = 1 << 30

// walSizeLimit is SQLite's journal_size_limit: a WAL reset by a checkpoint is cut
// to this size, so that between bursts it keeps no more than it needs.
const walSizeLimit = 64 << 20

// Stats counts the writer's work since Open.
type Stats struct {
	// Transactions is the number of committed write transactions.
	Transactions uint64
	// Documents is the number of ingest documents acknowledged as written.
	Documents uint64
	// LargestBatch is the largest number of documents one transaction committed.
	LargestBatch uint64
}

// Store is an open local Persist database and the HTTP service in front of it.
type Store struct {
	log       *slog.Logger
	now       func() time.Time
	maxBody   int64
	maxBatch  int
	maxAnswer int
	idleCkpt  time.Duration
	auth      Authenticator
	refusals  *logbudget.Budget // of the refused requests, those logged a second

	wdb   *sql.DB // one connection: the group-commit writer
	rdb   *sql.DB // read pool, concurrent with the writer thanks to WAL
	ws    writeStmts
	known *knownVertices // the writer's: vertices known to be stored
	stmts *stmtCache

	scripts scriptCache

	mu         sync.RWMutex // guards closed and sends on queue
	closed     bool
	queue      chan *ingestRequest
	writerDone chan struct{}

	transactions atomic.Uint64
	documents    atomic.Uint64
	largestBatch atomic.Uint64

	freeAbove uint64        // freeHeapAbove; tests lower it
	heapFrees atomic.Uint64 // times freeHeap returned the heap to the OS
}

// Open opens the SQLite file at path, creating it and its schema if needed, and
// starts the group-commit writer. Other processes may open the same file at the same
// time; SQLite's WAL mode and busy timeout arbitrate.
func Open(ctx context.Context, path string, opts Options) (_ *Store, err error) {
	if path == "" {
		return nil, errors.New("open local persist: empty database path")
	}
	if opts.MaxBodyBytes < 0 || opts.MaxBatch < 0 || opts.MaxAnswerBytes < 0 {
		return nil, fmt.Errorf("open local persist: negative limit (max body %d, max batch %d, max answer %d)", opts.MaxBodyBytes, opts.MaxBatch, opts.MaxAnswerBytes)
	}
	s := &Store{log: opts.Logger, now: opts.Now, maxBody: opts.MaxBodyBytes, maxBatch: opts.MaxBatch, maxAnswer: opts.MaxAnswerBytes,
		auth: opts.Authenticator, refusals: logbudget.New(10), known: newKnownVertices(), freeAbove: freeHeapAbove}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody == 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.maxBatch == 0 {
		s.maxBatch = DefaultMaxBatch
	}
	if s.maxAnswer == 0 {
		s.maxAnswer = DefaultMaxAnswerBytes
	}
	if s.idleCkpt = opts.IdleCheckpoint; s.idleCkpt <= 0 {
		s.idleCkpt = DefaultIdleCheckpoint
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open local persist %s: %w", path, err)
	}
	createPrivate(abs)

	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()

	if err = errors.Join(registerRegexp(), registerDistinctInRanges(), registerCountBy(), registerCountInRanges()); err != nil {
		return nil, fmt.Errorf("open local persist %s: %w", abs, err)
	}
	if s.wdb, err = sql.Open("sqlite", dsn(abs, true)); err != nil {
		return nil, fmt.Errorf("open local persist %s: %w", abs, err)
	}
	closers = append(closers, s.wdb.Close)
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxIdleTime(0)
	s.wdb.SetConnMaxLifetime(0)
	if err = migrate(ctx, s.wdb); err != nil {
		return nil, fmt.Errorf("open local persist %s: %w", abs, err)
	}

	if s.rdb, err = sql.Open("sqlite", dsn(abs, false)); err != nil {
		return nil, fmt.Errorf("open local persist %s: read pool: %w", abs, err)
	}
	closers = append(closers, s.rdb.Close)
	readers := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	s.rdb.SetConnMaxIdleTime(0)
	s.rdb.SetConnMaxLifetime(0)
	if err = s.rdb.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("open local persist %s: read pool: %w", abs, err)
	}

	if err = s.ws.prepare(ctx, s.wdb); err != nil {
		return nil, fmt.Errorf("open local persist %s: %w", abs, err)
	}
	closers = append(closers, s.ws.close)
	s.stmts = newStmtCache(s.rdb)

	s.queue = make(chan *ingestRequest, s.maxBatch)
	s.writerDone = make(chan struct{})
	go s.runWriter()
	s.log.Info("local persist open", "path", abs, "max_batch", s.maxBatch, "max_body_bytes", s.maxBody, "read_connections", readers,
		"signed_requests_only", s.auth != nil)
	return s, nil
}

// createPrivate creates a missing database file 0600: the graph holds every
// visitor's address (SQLite gives its -wal and -shm files the database file's mode).
func createPrivate(abs string) {
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_ = f.Close()
	}
}

// dsn is the modernc.org/sqlite data source name for the file at abs. The writer
// takes its lock when a transaction begins (_txlock=immediate), so a transaction
// never fails half-way on a lock upgrade, and checkpoints the WAL every 40000 pages
// (160 MB, the WAL file's size on disk from then on) rather than every 1000: a click
// batch dirties hundreds of index pages, and a page written again before the
// checkpoint is copied into the database once. A checkpoint holds the commit that
// runs it, and every ingest waiting behind it, for tens of milliseconds while it
// copies and syncs; at 10000 pages issuance under load met one every 1.3 s, often
// enough to set its p99. A WAL reset by a checkpoint is cut to walSizeLimit, and the
// writer truncates it once idle (runWriter). Readers are query_only, and map the
// file (readerMmapBytes).
func dsn(abs string, writer bool) string {
	q := "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_pragma=cache_size(-32768)"
	if writer {
		q += "&_txlock=immediate&_pragma=wal_autocheckpoint(40000)&_pragma=journal_size_limit(" + strconv.Itoa(walSizeLimit) + ")"
	} else {
		q += "&_pragma=query_only(1)&_pragma=mmap_size(" + strconv.Itoa(readerMmapBytes) + ")"
	}
	return "file:" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath() + "?" + q
}

// Close stops accepting ingests, lets the writer finish (and acknowledge) every
// document already handed to it, and closes the database. It is safe to call twice.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.queue)
	s.mu.Unlock()
	<-s.writerDone
	err := errors.Join(s.stmts.close(), s.ws.close(), s.rdb.Close(), s.wdb.Close())
	if err != nil {
		return fmt.Errorf("close local persist: %w", err)
	}
	return nil
}

// Stats reports the writer's counters.
func (s *Store) Stats() Stats {
	return Stats{
		Transactions: s.transactions.Load(),
		Documents:    s.documents.Load(),
		LargestBatch: s.largestBatch.Load(),
	}
}

// Handler serves Persist's HTTP contract: POST /persist/ingest, POST /persist/gremlin
// and GET /healthz, the first two behind the Authenticator when there is one.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/persist/ingest", s.handleIngest)
	mux.HandleFunc("/persist/gremlin", s.handleGremlin)
	mux.HandleFunc("/healthz", s.handleHealth)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	})
	return s.authenticate(s.auth, mux)
}

func (s *Store) handleHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSONError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: use GET")
		return
	}
	var one int
	if err := s.rdb.QueryRowContext(r.Context(), `SELECT 1`).Scan(&one); err != nil {
		s.log.ErrorContext(r.Context(), "health check failed", "error", err)
		writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"unavailable"}`))
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

func closeStmts(stmts ...*sql.Stmt) error {
	var errs []error
	for _, st := range stmts {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// stmtCache holds prepared statements keyed by their SQL text. The text depends only
// on a traversal's shape (how many labels, which filters), never on values, so the
// set stays small; past maxCachedStmts a statement is prepared for one use.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

const maxCachedStmts = 256

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: make(map[string]*sql.Stmt)}
}

// query runs the statement with the given SQL text, inside the evaluation's read
// transaction when ctx carries one (evaluate).
func (c *stmtCache) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	var tx *sql.Tx
	if rt, _ := ctx.Value(readTxKey{}).(*readTx); rt != nil {
		var err error
		if tx, err = rt.begin(ctx); err != nil {
			return nil, err
		}
	}
	st, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st != nil && tx != nil:
		// Prepared once per connection: database/sql keeps it with st.
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	case st != nil:
		return st.QueryContext(ctx, args...)
	case tx != nil:
		// Not cached: prepared for this use, in the transaction, which closes it.
		return tx.QueryContext(ctx, query, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

// stmt is the cached statement with the given SQL text, prepared on first use; nil
// once the cache holds maxCachedStmts others.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts
	c.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		_ = st.Close()
		return prev, nil
	}
	if len(c.m) >= maxCachedStmts {
		_ = st.Close()
		return nil, nil
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, k)
	}
	return errors.Join(errs...)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
