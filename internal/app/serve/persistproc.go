//go:build unix

package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// Why local Persist runs in a child process: with one P, a redirect that arrives
// behind one of its SQLite commits or WAL checkpoints (which cannot yield) waits it
// out, up to Go's 10 ms preemption; in a process of its own, Persist is preempted by
// the kernel as soon as a redirect's packet wakes serve, which roughly halved the
// redirects' p99 (docs/performance.md, "local Persist in a child process").
// Nothing changes for durability: Persist commits (synchronous=FULL) before it
// answers, in either process, and the consumer moves its offset only past what
// Persist acknowledged.

// persistProc runs local Persist as a child of serve on serve's listener, restarts
// it if it dies, and stops it when serve is done with it. The child cannot outlive
// serve: on Linux the kernel kills it when serve dies (Pdeathsig), and everywhere it
// exits when its stdin, a pipe serve holds, closes.
type persistProc struct {
	log    *slog.Logger
	ln     *os.File // serve's listener, which stays bound while a child restarts
	env    []string
	stderr io.Writer

	mu       sync.Mutex
	stdin    io.Closer   // the running child's stdin; nil between children
	proc     *os.Process // the running child; nil between children
	stopping bool
	stop     chan struct{} // closed by Stop: no more restarts
	done     chan struct{} // closed when the supervisor returned
}

// Backoff of restarts after the child died.
const (
	persistMinRestart = 250 * time.Millisecond
	persistMaxRestart = 10 * time.Second
)

// startPersistProc starts local Persist in a child process on ln and returns once
// it answers (after any migration of the database, however long), or with the
// reason it could not start.
func startPersistProc(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, ln net.Listener, stderr io.Writer, log *slog.Logger) (*persistProc, error) {
	if err := ctx.Err(); err != nil { // stopped already: no child to start and stop again
		return nil, fmt.Errorf("local persist: %w", err)
	}
	tcp, ok := ln.(*net.TCPListener)
	if !ok {
		return nil, fmt.Errorf("local persist: listener is a %T, not TCP", ln)
	}
	f, err := tcp.File() // a duplicate: serve's own copy keeps the port bound
	if err != nil {
		return nil, fmt.Errorf("local persist: %w", err)
	}
	exe, err := os.Executable() // what ps shows
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("local persist: find this program: %w", err)
	}
	p := &persistProc{log: log, ln: f, stderr: stderr, stop: make(chan struct{}), done: make(chan struct{})}
	// The child reads its configuration as serve did, from the environment; what
	// serve resolved is passed explicitly, so that both agree whatever the files say.
	p.env = append(os.Environ(),
		"LINOONE_DATA_DIR="+cfg.DataDir,
		"LINOONE_REGION="+cfg.Region,
		sigv4.PersistPair.EnvAccessKeyID+"="+creds.AccessKeyID,
		sigv4.PersistPair.EnvSecretAccessKey+"="+creds.SecretAccessKey,
	)
	ready := make(chan error, 1)
	go p.supervise(exe, ready)
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		p.Stop(context.Background())
		return nil, fmt.Errorf("local persist: %w", err)
	}
	return p, nil
}

// supervise runs children until Stop: the first one's start is reported on ready;
// a child that dies while not stopping is logged and started again after a backoff.
// It holds its OS thread while a child runs, since Linux sends Pdeathsig when the
// thread that started the child exits, not only the process.
func (p *persistProc) supervise(exe string, ready chan<- error) {
	defer close(p.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	backoff := persistMinRestart
	for first := true; ; first = false {
		began := time.Now()
		served, err := p.runChild(exe, func(err error) {
			if first {
				ready <- err
			} else if err == nil {
				p.log.Info("local persist restarted")
			}
		})
		if (first && !served) || p.isStopping() {
			return // a first start that failed was reported on ready
		}
		if time.Since(began) > time.Minute {
			backoff = persistMinRestart
		}
		p.log.Error("local persist exited; restarting it", "err", err, "restart_in", backoff)
		select {
		case <-p.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, persistMaxRestart)
	}
}

// runChild starts one child, calls started once it serves (or with why it did
// not), and returns when it exited: whether it had served, and how it ended.
func (p *persistProc) runChild(exe string, started func(error)) (served bool, err error) {
	cmd := exec.Command(selfExecutable(exe), ChildCommand)
	cmd.Args[0] = exe
	cmd.Env = p.env
	cmd.ExtraFiles = []*os.File{p.ln} // fd 3
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = childProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		started(err)
		return false, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		started(err)
		return false, err
	}
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		started(errors.New("stopped"))
		return false, nil
	}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		started(err)
		return false, err
	}
	p.stdin, p.proc = stdin, cmd.Process
	p.mu.Unlock()

	line, readErr := bufio.NewReader(stdout).ReadString('\n')
	served = readErr == nil && strings.TrimSpace(line) == persistReady
	if served {
		started(nil)
		_, _ = io.Copy(io.Discard, stdout) // until the child exits
	}
	err = cmd.Wait()
	p.mu.Lock()
	p.stdin, p.proc = nil, nil
	p.mu.Unlock()
	if err == nil {
		err = errors.New("exited")
	}
	if !served {
		err = fmt.Errorf("did not start: %w", err)
		started(err)
	}
	return served, err
}

func (p *persistProc) isStopping() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// Stop closes the child's stdin, which makes it finish the ingests it took and
// exit, and waits until it did, or kills it when ctx ends (or after
// persistStopGrace). It is safe to call twice.
func (p *persistProc) Stop(ctx context.Context) {
	p.mu.Lock()
	if !p.stopping {
		p.stopping = true
		close(p.stop)
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
	}
	p.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, persistStopGrace)
	defer cancel()
	select {
	case <-p.done:
	case <-wait.Done():
		p.log.Error("local persist did not stop in time; killing it")
		p.kill()
	}
	<-p.done
	_ = p.ln.Close()
}

func (p *persistProc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		_ = p.proc.Kill()
	}
}

// persistReady is the line the child writes on its stdout once it serves.
const persistReady = "ready"

// PersistChild is the child's side (ChildCommand): local Persist on the listener at
// fd 3, until stdin closes. Its life is serve's, so it ignores the signals a
// terminal or a service manager sends the whole group: serve still delivers its
// journal into it while it shuts down, and closes the pipe once it has.
func PersistChild(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	cfg, err := config.LoadServe(getenv)
	if err != nil {
		return err
	}
	log := cfg.Logger(stderr).With("process", ChildCommand)
	creds, err := datadir.PersistCredentials(cfg.DataDir, cfg.Persist.Credentials, false, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	ln, err := inheritedListener()
	if err != nil {
		return err
	}
	defer ln.Close()
	ctx := context.Background()
	lp, err := openLocalPersist(ctx, cfg, creds, log)
	if err != nil {
		return err
	}
	srv := newServer(lp.Handler(), log)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, persistReady); err != nil {
		_ = srv.Close()
		_ = lp.Close()
		return fmt.Errorf("tell serve: %w", err)
	}
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(gone)
	}()
	select {
	case <-gone:
	case err = <-served:
		err = fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, persistStopGrace)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return errors.Join(err, lp.Close())
}

// inheritedListener is the listener serve passed as file descriptor 3.
func inheritedListener() (net.Listener, error) {
	f := os.NewFile(3, "local persist listener")
	defer f.Close() // FileListener holds a duplicate
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listener from serve (fd 3): %w", err)
	}
	return capConns(ln, connCap(openFileLimit(), persistConnShare)), nil
}

// startPersist starts local Persist in a child process on the listener listen bound
// (persistProc), and stops it when the stack closes.
func (s *stack) startPersist(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, stderr io.Writer) error {
	p, err := startPersistProc(ctx, cfg, creds, s.pLn, stderr, s.log)
	if err != nil {
		return err
	}
	s.persistProc = p
	s.closers = append(s.closers, func() error { p.Stop(context.Background()); return nil })
	return nil
}

// stopPersist stops local Persist once serve delivered its journal into it.
func (s *stack) stopPersist(ctx context.Context) {
	if s.persistProc != nil {
		s.persistProc.Stop(ctx)
	}
}
