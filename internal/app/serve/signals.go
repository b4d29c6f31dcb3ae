package serve

import (
	"os"
	"os/signal"
	"syscall"
)

// StopSignals stop a command as Ctrl-C does: SIGINT, SIGTERM (a service manager's
// stop) and SIGHUP (the terminal or the SSH session closing), so that serve delivers
// what it acknowledged before it ends. SIGHUP is left out when it is ignored, as
// nohup makes it: notifying on it would take it back.
func StopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
