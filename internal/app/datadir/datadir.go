// Package datadir is local mode's data directory (LINOONE_DATA_DIR): the names of
// what serve keeps there, the lock one serve holds on it, the record of where that
// serve listens, and the secrets it creates on first start. Every command that
// works on a data dir (serve, consume, status, dlq, replay, recover, shorten) finds
// its parts here.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/foundation/flock"
)

// The parts of a data dir.
const (
	PersistDB = "persist.db"  // local Persist's SQLite database
	Bus       = "bus"         // the local bus: journal, consumer offset, refused facts
	DLQ       = "dlq"         // the local click DLQ
	Facts     = "facts.jsonl" // the facts the consumer delivered, one per line
	// ServeLock is the lock file one serve holds for as long as it runs, with its
	// pid in it.
	ServeLock = "serve.lock"
)

// Lock takes the data dir for one serve, before anything in it is opened: a second
// serve would migrate local Persist's file under the first, or write the same
// journal and take the same idempotency keys in another process. The lock file
// holds the pid of the serve that has it, for the message of the next.
func Lock(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, ServeLock)
	l, err := flock.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	held, err := l.TryLock()
	if err == nil && held {
		pid, _ := os.ReadFile(path)
		err = fmt.Errorf("another linoone serve (pid %s) is using the data dir %s: stop it, or give this one its own LINOONE_DATA_DIR",
			strings.TrimSpace(string(pid)), dir)
	}
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	if err := writePid(path); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return func() { _ = l.Close() }, nil // closing releases the lock
}

// CheckServed refuses a data dir that no serve has used, which holds no local bus,
// as shorten and consume refuse one without the credentials serve writes: dlq,
// replay and recover would otherwise create a bus and a DLQ there and report
// success, for facts republished into a journal no serve reads.
func CheckServed(dir string) error {
	_, err := os.Stat(filepath.Join(dir, Bus))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no local bus in %s: %s", dir, StartServeFirst(dir))
	case err != nil:
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}

// StartServeFirst is the advice of a command that finds in its data dir nothing
// serve made there.
func StartServeFirst(dir string) string {
	return fmt.Sprintf("start `linoone serve` with the same LINOONE_DATA_DIR (%s) first", dir)
}
