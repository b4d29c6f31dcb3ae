package logbudget

import (
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	now := time.Unix(1_000, 0)
	b := New(3)
	b.now = func() time.Time { return now }
	for i := range 3 {
		if ok, left := b.Take(); !ok || left != 0 {
			t.Fatalf("line %d of the first second: %v, %d left out", i, ok, left)
		}
	}
	for range 5 {
		if ok, _ := b.Take(); ok {
			t.Fatal("a line past the budget was let through")
		}
	}
	now = now.Add(time.Second)
	if ok, left := b.Take(); !ok || left != 5 {
		t.Fatalf("the next second's first line: %v, %d left out; want true, 5", ok, left)
	}
	if ok, left := b.Take(); !ok || left != 0 {
		t.Fatalf("then: %v, %d left out; want true, 0", ok, left)
	}
}
