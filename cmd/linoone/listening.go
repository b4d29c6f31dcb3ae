package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
)

// listeningFile is where serve records, in its data dir, the addresses it listens
// on, for linoone status: a shell whose LINOONE_*_ADDR differ from serve's, or lack
// them, still finds serve's listeners. Only the serve holding the data dir's lock
// writes it; status trusts it only while the lock's holder is the pid it names, since
// a serve that was killed leaves it behind.
const listeningFile = "serve.json"

// listening is the document of listeningFile. Each address is host:port, one a
// client on this machine dials: a listener on every interface is recorded as on the
// loopback.
type listening struct {
	PID        int    `json:"pid"`
	Resolver   string `json:"resolver"`
	Management string `json:"management"`
	Persist    string `json:"persist,omitempty"` // only where serve starts local Persist
}

// recordListening writes l to the data dir, replacing what an earlier serve left.
// A reader never sees a part of it: it is written beside and renamed into place.
// Nothing is synced: the record describes this process, which a machine crash ends.
func recordListening(dataDir string, l listening) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	path := filepath.Join(dataDir, listeningFile)
	tmp := path + ".tmp" // one serve holds the data dir: no other writer
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// removeListening removes the record of serve pid, at its shutdown.
func removeListening(dataDir string, pid int) {
	if l, ok, err := readListening(dataDir); err == nil && ok && l.PID == pid {
		_ = os.Remove(filepath.Join(dataDir, listeningFile))
	}
}

// readListening reads the record a serve left in the data dir: ok is false when
// there is none.
func readListening(dataDir string) (l listening, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, listeningFile))
	if errors.Is(err, fs.ErrNotExist) {
		return listening{}, false, nil
	}
	if err != nil {
		return listening{}, false, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return listening{}, false, fmt.Errorf("%s: %w", listeningFile, err)
	}
	if l.PID <= 0 || l.Resolver == "" || l.Management == "" {
		return listening{}, false, fmt.Errorf("%s: no pid, resolver or management address", listeningFile)
	}
	return l, true, nil
}

// dialable is the address a client on this machine dials to reach a listener bound
// to addr: the loopback in place of every interface (0.0.0.0 or ::, which Go's
// listeners bind dual-stack, so the IPv4 loopback reaches both).
func dialable(addr net.Addr) string {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ap.Addr().IsUnspecified() {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port()).String()
	}
	return ap.String()
}
