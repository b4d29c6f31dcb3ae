// Package yield lets long CPU-bound work give way to the goroutines the network has
// woken, on a process with one P (GOMAXPROCS=1) as on any other.
//
// runtime.Gosched does not do that. It puts the goroutine back on the run queue,
// and the scheduler polls the network only when the run queue is empty, or when
// sysmon finds it has not been polled for 10 ms. So a goroutine that works for
// seconds and calls Gosched every few hundred microseconds still keeps every
// redirect whose request has arrived waiting up to 10 ms for its turn. Now parks the
// goroutine until the runtime has polled the network (or Interval has passed), then
// queues it behind what that poll woke.
package yield

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Interval is how long a Point lets work run between yields: short beside a
// redirect's latency under load, long beside what a yield costs (BenchmarkNow).
const Interval = 500 * time.Microsecond

// Point is where a loop may yield. The zero value is ready to use; a Point belongs
// to one goroutine at a time.
type Point struct {
	since time.Time // when the work it paces started or last yielded
}

// Maybe yields (Now) if Interval has passed since the Point's first call or its
// last yield, and When allows it; otherwise it returns at once.
func (p *Point) Maybe() {
	now := time.Now()
	switch {
	case p.since.IsZero():
		p.since = now
	case now.Sub(p.since) >= Interval:
		if f := when.Load(); f != nil && (*f)() {
			Now()
		}
		p.since = time.Now()
	}
}

// when is what When set.
var when atomic.Pointer[func() bool]

// When makes Maybe yield only while active reports true; for `serve`, while it
// serves redirects, so that catching up once they stop runs at full speed (a
// yield costs its park even with nothing else to run). nil, the default, makes
// Maybe never yield: a process with no redirects to make way for (`linoone
// consume`, the CLI, a Lambda) has nothing to gain from it. Now is not affected.
func When(active func() bool) {
	if active == nil {
		when.Store(nil)
		return
	}
	when.Store(&active)
}

// Now yields: it returns once the network has been polled and the goroutines that
// poll made runnable have had their turn (after Interval at most, if no poll
// comes), or, where that is not available (not Linux, or no timer file), after
// runtime.Gosched.
func Now() {
	start := time.Now()
	yields.Add(1)
	defer func() { yielded.Add(int64(time.Since(start))) }()
	if !park() {
		return
	}
	// The poll that woke this goroutine may have woken redirects too, queued
	// behind or beside it: let them go first.
	runtime.Gosched()
}

// yielded is the time spent in Now, by all goroutines together.
var yielded atomic.Int64

// yields counts the calls of Now.
var yields atomic.Int64

// Yields is how many times goroutines have yielded (called Now) since the process
// started.
func Yields() int64 { return yields.Load() }

// Yielded is the time goroutines have spent in Now since the process started,
// added together: with one P, about the time their work left to others. Pacing
// that measures work by the clock subtracts it.
func Yielded() time.Duration { return time.Duration(yielded.Load()) }
