package source

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStallBoundsListAndStat: a listing or a stat that gets no answer is
// abandoned after the stall timeout and tried again, as a stalled GET is;
// one that never answers is given up after the tries (a transient error,
// naming the stall), not waited on forever.
func TestStallBoundsListAndStat(t *testing.T) {
	for _, tc := range []struct {
		store, op string
		stalls    int // requests that get no answer; testClient tries 4 times
		giveUp    bool
	}{
		{"s3", "list", 2, false},
		{"s3", "list", 1000, true},
		{"s3", "stat", 3, false},
		{"s3", "stat", 1000, true},
		{"gs", "list", 2, false},
		{"gs", "list", 1000, true},
		{"gs", "stat", 3, false},
		{"gs", "stat", 1000, true},
		{"http", "stat", 2, false},
		{"http", "stat", 1000, true},
	} {
		t.Run(tc.store+"/"+tc.op, func(t *testing.T) {
			s := newStore(t, tc.store)
			s.put("d/a.jsonl", []byte("{}\n"))
			s.put("d/b.jsonl", []byte("{}\n{}\n"))
			c := testClient(t)
			if tc.giveUp {
				// A store that never answers is given up after the tries
				// whatever the timeout: a short one waits less.
				c = stallClient(t, 100*time.Millisecond)
			}
			s.faults.set(func(f *faults) {
				if tc.op == "list" {
					f.listStalls = tc.stalls
				} else {
					f.statStalls = tc.stalls
				}
			})
			done := make(chan error, 1)
			var n int
			go func() {
				var err error
				if tc.op == "list" {
					var infos []Info
					infos, err = c.Glob(context.Background(), s.url("d/*.jsonl"))
					n = len(infos)
				} else {
					var info Info
					info, err = c.Stat(context.Background(), mustParse(t, s.url("d/b.jsonl")))
					n = int(info.Size)
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				// Not a speed check: with a stall timeout of 300ms or less and 4
				// tries, a bounded request has long returned.
				t.Fatalf("%s still waiting on a silent store after 10s", tc.op)
			}
			if !tc.giveUp {
				want := 2 // objects listed; bytes of d/b.jsonl for a stat
				if tc.op == "stat" {
					want = 6
				}
				if err != nil || n != want {
					t.Fatalf("%s after %d stalls: %d, %v; want %d and no error", tc.op, tc.stalls, n, err, want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Tries != 4 || !errors.Is(err, errStalled) || !Temporary(err) {
				t.Fatalf("%s of a store that never answers: %v; want an *Error that gave up after 4 tries, a stall, Temporary", tc.op, err)
			}
		})
	}
}
