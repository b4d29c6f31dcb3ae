//go:build linux

// Command hostcost is a probe of scripts/bench.sh: what the host charges for the two
// things a durable redirect pays for beyond a bare one, so that scenario B can be read
// against the host it ran on.
//
//   - The journal's sync: a batch (-batch bytes, B's are ~60 KiB) written over a
//     preallocated file in DIR, as the journal overwrites its segments, then
//     fdatasync'ed. Prints the median wall time of a write and its sync, and the
//     process's CPU time (user + system) a sync: a redirect in a batch of N pays 1/N.
//   - A thread switch: two threads of the process handing a byte back and forth
//     through pipes, each blocking in read(2) until the other wakes it. Each has a P
//     of its own, so no goroutine waits for the other's: what is measured is the
//     kernel's switch and the runtime's bookkeeping around a blocking system call.
//     Prints the CPU time a switch (a round trip is two, with four system calls).
//
// Run it pinned the way the servers are (GOMAXPROCS=1 taskset -c 0). It prints one
// line: sync_ms=… sync_cpu_us=… switch_cpu_us=…
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp): // the flag package printed the usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "hostcost:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("hostcost", flag.ContinueOnError)
	batch := fs.Int("batch", 60<<10, "bytes written before each fdatasync")
	syncs := fs.Int("syncs", 300, "batches written and synced")
	switches := fs.Int("switches", 20000, "round trips between the two threads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *batch <= 0 || *syncs <= 0 || *switches <= 0 {
		return errors.New("usage: hostcost [-batch BYTES] [-syncs N] [-switches N] DIR")
	}
	wall, syncCPU, err := syncCost(fs.Arg(0), *batch, *syncs)
	if err != nil {
		return err
	}
	switchCPU, err := switchCost(*switches)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "sync_ms=%.3f sync_cpu_us=%.1f switch_cpu_us=%.1f\n",
		wall.Seconds()*1e3, micros(syncCPU), micros(switchCPU))
	return err
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// syncCost writes n batches of size bytes over a preallocated file in dir, each
// followed by fdatasync, and returns the median wall time of a write and its sync and
// the mean CPU time of the process a sync. The file is removed.
func syncCost(dir string, size, n int) (median, cpu time.Duration, err error) {
	f, err := os.CreateTemp(dir, "hostcost-*.dat")
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		err = errors.Join(err, f.Close(), os.Remove(f.Name()))
	}()
	const span = 8 << 20 // the batches cycle through it, as a journal segment's do
	if size > span {
		return 0, 0, fmt.Errorf("a batch of %d bytes is more than the file's %d", size, span)
	}
	if _, err := f.Write(make([]byte, span)); err != nil {
		return 0, 0, err
	}
	if err := fdatasync(f); err != nil {
		return 0, 0, err
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	took := make([]time.Duration, n)
	var off int64
	before := processCPU()
	for i := range n {
		start := time.Now()
		if _, err := f.WriteAt(buf, off); err != nil {
			return 0, 0, err
		}
		if err := fdatasync(f); err != nil {
			return 0, 0, err
		}
		took[i] = time.Since(start)
		if off += int64(size); off+int64(size) > span {
			off = 0
		}
	}
	cpu = (processCPU() - before) / time.Duration(n)
	slices.Sort(took)
	return took[(n-1)/2], cpu, nil
}

func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// switchCost hands a byte between two threads n times each way and returns the CPU
// time of the process a switch. With two Ps, neither thread waits for the other to
// give up a P, only for its byte.
func switchCost(n int) (time.Duration, error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var p [2][2]int // p[0]: to the echoing thread, p[1]: back
	for i := range p {
		if err := syscall.Pipe(p[i][:]); err != nil {
			return 0, err
		}
		defer syscall.Close(p[i][0])
		defer syscall.Close(p[i][1])
	}
	echoed := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		echoed <- relay(p[0][0], p[1][1], n)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := processCPU()
	b := []byte{0}
	for range n {
		if err := byteIO(syscall.SYS_WRITE, p[0][1], b); err != nil {
			return 0, err
		}
		if err := byteIO(syscall.SYS_READ, p[1][0], b); err != nil {
			return 0, err
		}
	}
	cpu := processCPU() - before
	if err := <-echoed; err != nil {
		return 0, err
	}
	return cpu / time.Duration(2*n), nil
}

// relay reads n bytes from in, writing each back to out.
func relay(in, out, n int) error {
	b := []byte{0}
	for range n {
		if err := byteIO(syscall.SYS_READ, in, b); err != nil {
			return err
		}
		if err := byteIO(syscall.SYS_WRITE, out, b); err != nil {
			return err
		}
	}
	return nil
}

// byteIO reads or writes the one byte of b on fd: the system call itself, as a
// thread of a Go program makes it, without os.File's poller.
func byteIO(trap uintptr, fd int, b []byte) error {
	for {
		n, _, errno := syscall.Syscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return errno
		case n != 1:
			return io.ErrUnexpectedEOF
		}
		return nil
	}
}

// processCPU is the user and system CPU time of the whole process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
