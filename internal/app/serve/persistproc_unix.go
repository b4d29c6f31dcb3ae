//go:build unix && !linux

package serve

import "syscall"

// childProcAttr puts local Persist's child in a process group of its own, so that a
// terminal's Ctrl-C reaches serve alone. Without Pdeathsig, the child notices that
// serve died when its stdin closes.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// selfExecutable is the program to start local Persist's child with.
func selfExecutable(exe string) string { return exe }
