package datadir

import (
	"path/filepath"

	"github.com/linoone/linoone/internal/foundation/flock"
)

// Serving says whether a serve runs on the data dir dir, and where it listens:
// state is "running" (l is its record), "stopped", or "unknown" where the system
// does not list the locks' holders (only Linux does; l is then the record a serve
// left, if any, which a serve that was killed leaves behind). It takes no lock and
// writes nothing.
func Serving(dir string) (l Listening, state string, err error) {
	pid, known, err := flock.Holder(filepath.Join(dir, ServeLock))
	if err != nil {
		return Listening{}, "", err
	}
	l, ok, rerr := ReadListening(dir)
	switch {
	case !known:
		if rerr != nil || !ok {
			return Listening{}, "unknown", nil
		}
		return l, "unknown", nil
	case pid == 0:
		return Listening{}, "stopped", nil
	case rerr != nil || !ok || l.PID != pid:
		// Running, but its record is missing or another's: only the pid is known.
		return Listening{PID: pid}, "running", nil
	}
	return l, "running", nil
}
