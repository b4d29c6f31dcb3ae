package yield

import (
	"testing"
	"time"
)

// TestMaybeWaitsForInterval: a Point's first call starts its interval without
// yielding; later calls yield, and restart the interval, once Interval has passed.
func TestMaybeWaitsForInterval(t *testing.T) {
	var p Point
	p.Maybe()
	if p.since.IsZero() {
		t.Fatal("the first Maybe did not start the interval")
	}
	// An interval that starts in an hour has not passed, however slow the machine.
	later := time.Now().Add(time.Hour)
	p.since = later
	p.Maybe()
	if p.since != later {
		t.Fatal("Maybe yielded before the interval had passed")
	}
	since := time.Now().Add(-Interval)
	p.since = since
	p.Maybe()
	if !p.since.After(since.Add(Interval)) {
		t.Fatal("Maybe did not restart the interval once Interval had passed")
	}
}

// TestMaybeNeverYieldsByDefault: with no When, as in any process but `serve`,
// Maybe restarts its interval without yielding.
func TestMaybeNeverYieldsByDefault(t *testing.T) {
	When(nil)
	var p Point
	maybeWithoutYield(t, &p, "with no When")
}

// maybeWithoutYield calls Maybe on p once its interval has passed, and fails unless
// it restarted the interval without yielding (why names the case). It returns
// Yielded from before the call.
func maybeWithoutYield(t *testing.T, p *Point, why string) time.Duration {
	t.Helper()
	stale := time.Now().Add(-Interval)
	p.since = stale
	before := Yielded()
	p.Maybe()
	if got := Yielded(); got != before {
		t.Fatalf("Maybe yielded (%v in Now) %s", got-before, why)
	}
	if !p.since.After(stale) {
		t.Fatal("Maybe did not restart the interval")
	}
	return before
}

// TestWhenGatesMaybe: with When reporting false, Maybe restarts its interval
// without yielding; Now still yields, and Yielded counts the time spent in it.
func TestWhenGatesMaybe(t *testing.T) {
	defer When(nil)
	active := false
	When(func() bool { return active })
	var p Point
	before := maybeWithoutYield(t, &p, "while When reported false")
	active = true
	p.since = time.Now().Add(-Interval)
	p.Maybe()
	if Yielded() == before {
		t.Fatal("Maybe did not yield while When reported true")
	}
}

// BenchmarkNow is what one yield costs with nothing else to run: the reason
// Interval is long beside it and When turns yields off when nothing waits.
func BenchmarkNow(b *testing.B) {
	for b.Loop() {
		Now()
	}
}
