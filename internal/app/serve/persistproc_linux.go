package serve

import "syscall"

// childProcAttr puts local Persist's child in a process group of its own, so that a
// terminal's Ctrl-C reaches serve alone, and has the kernel kill it if serve dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// selfExecutable is the program to start local Persist's child with: this very
// binary, even once an upgrade replaced or removed the file at exe.
func selfExecutable(string) string { return "/proc/self/exe" }
