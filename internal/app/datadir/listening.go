package datadir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/linoone/linoone/internal/foundation/atomicfile"
)

// ListeningFile is where serve records, in its data dir, the addresses it listens
// on, for linoone status: a shell whose LINOONE_*_ADDR differ from serve's, or lack
// them, still finds serve's listeners. Only the serve holding the data dir's lock
// writes it; status trusts it only while the lock's holder is the pid it names,
// since a serve that was killed leaves it behind.
const ListeningFile = "serve.json"

// Listening is the document of ListeningFile. Each address is host:port, one a
// client on this machine dials: a listener on every interface is recorded as on the
// loopback.
type Listening struct {
	PID        int    `json:"pid"`
	Resolver   string `json:"resolver"`
	Management string `json:"management"`
	Persist    string `json:"persist,omitempty"` // only where serve starts local Persist
	// DenyList is the absolute path of the deny list file the serve polls, so that
	// linoone block can tell whether an edit reaches a serve.
	DenyList string `json:"deny_list,omitempty"`
}

// RecordListening writes l to the data dir, replacing what an earlier serve left.
func RecordListening(dir string, l Listening) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return atomicfile.Replace(filepath.Join(dir, ListeningFile), append(b, '\n'), atomicfile.Options{})
}

// RemoveListening removes the record of serve pid, at its shutdown.
func RemoveListening(dir string, pid int) {
	if l, ok, err := ReadListening(dir); err == nil && ok && l.PID == pid {
		_ = os.Remove(filepath.Join(dir, ListeningFile))
	}
}

// ReadListening reads the record a serve left in the data dir: ok is false when
// there is none.
func ReadListening(dir string) (l Listening, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, ListeningFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Listening{}, false, nil
	}
	if err != nil {
		return Listening{}, false, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return Listening{}, false, fmt.Errorf("%s: %w", ListeningFile, err)
	}
	if l.PID <= 0 || l.Resolver == "" || l.Management == "" {
		return Listening{}, false, fmt.Errorf("%s: no pid, resolver or management address", ListeningFile)
	}
	return l, true, nil
}

// Dialable is the address a client on this machine dials to reach a listener bound
// to addr: the loopback in place of every interface (0.0.0.0 or ::, which Go's
// listeners bind dual-stack, so the IPv4 loopback reaches both).
func Dialable(addr net.Addr) string {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ap.Addr().IsUnspecified() {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port()).String()
	}
	return ap.String()
}
