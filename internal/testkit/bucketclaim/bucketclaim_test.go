package bucketclaim

import "testing"

// TestTake checks that a name is cleared when taken and when its test
// ends, that a second test may take it afterwards, and that a test taking
// a name another running test holds fails.
func TestTake(t *testing.T) {
	var c Claims
	clears := 0
	t.Run("first", func(t *testing.T) {
		c.Take(t, "b", func() { clears++ })
		if clears != 1 {
			t.Fatalf("%d clears on taking, want 1", clears)
		}
	})
	if clears != 2 {
		t.Fatalf("%d clears after the test, want 2", clears)
	}
	t.Run("again", func(t *testing.T) {
		c.Take(t, "b", func() {})
	})

	var held Claims
	t.Run("holder", func(t *testing.T) {
		held.Take(t, "x", func() {})
		second := &fakeTB{TB: t}
		func() {
			defer func() { recover() }()
			held.Take(second, "x", func() { t.Error("cleared a bucket another test holds") })
		}()
		if !second.failed {
			t.Error("a second test took a name a running test holds")
		}
	})
}

// fakeTB records Fatalf instead of failing the test it wraps, and stops
// the call as Fatalf does (by panicking, which the caller recovers).
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
