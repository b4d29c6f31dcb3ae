package yield

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A timer is a non-blocking timerfd registered with the runtime's network poller.
// park arms it to expire at once and waits for it to become readable. The wait
// parks the goroutine in the poller (the timer cannot be seen to expire before
// the runtime polls), so the goroutine runs again after a network poll, which also
// wakes every goroutine whose connection became readable, or after Interval if
// no poll comes first.
type timer struct {
	rc  syscall.RawConn
	f   *os.File
	buf [8]byte
}

// timers keeps a few timers for reuse; park takes one for the length of a yield.
var timers struct {
	sync.Mutex
	free []*timer
}

const maxFreeTimers = 16

// park yields through a timer, or with runtime.Gosched when no timer is to be had
// (reporting false).
func park() bool {
	t := getTimer()
	if t == nil {
		runtime.Gosched()
		return false
	}
	if !t.wait() {
		_ = t.f.Close()
		runtime.Gosched()
		return false
	}
	putTimer(t)
	return true
}

func getTimer() *timer {
	timers.Lock()
	if n := len(timers.free); n > 0 {
		t := timers.free[n-1]
		timers.free = timers.free[:n-1]
		timers.Unlock()
		return t
	}
	timers.Unlock()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "yield-timer")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil
	}
	return &timer{rc: rc, f: f}
}

func putTimer(t *timer) {
	timers.Lock()
	defer timers.Unlock()
	if len(timers.free) < maxFreeTimers {
		timers.free = append(timers.free, t)
		return
	}
	_ = t.f.Close()
}

// wait arms the timer for 1 ns and waits in the poller until it has expired, or
// for Interval at most: the runtime polls the network only when its run queue is
// empty, and while goroutines that are always runnable keep it full (a busy P, a
// loop of runtime.Gosched) only sysmon polls, every 10 ms. The read deadline's
// runtime timer ends the wait instead. The first call of the read function
// consumes an expiration a wait that ended so left behind, arms the timer and
// reports "not ready", which parks the goroutine until the poller sees the timer
// readable; later calls read the expiration count. It reports false on any failure
// of the timer.
func (t *timer) wait() bool {
	if t.f.SetReadDeadline(time.Now().Add(Interval)) != nil {
		return false
	}
	armed, ok := false, true
	err := t.rc.Read(func(fd uintptr) bool {
		if !armed {
			armed = true
			_, _ = unix.Read(int(fd), t.buf[:])
			spec := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
			if err := unix.TimerfdSettime(int(fd), 0, &spec, nil); err != nil {
				ok = false
				return true
			}
			return false
		}
		_, err := unix.Read(int(fd), t.buf[:])
		if err == unix.EAGAIN {
			return false
		}
		ok = err == nil
		return true
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	return ok && err == nil
}
