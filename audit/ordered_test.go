package audit

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestOrdered checks that ordered hands the results over in the items'
// order whatever order they finish in, with at most workers+1 prepared
// and not yet used, and that the first error stops it and is returned.
func TestOrdered(t *testing.T) {
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name             string
		n, workers       int
		failPrep, failAt int // item whose prepare, or use, fails (-1: none)
		want             error
	}{
		{"none", 0, 2, -1, -1, nil},
		{"one worker", 50, 1, -1, -1, nil},
		{"two workers", 200, 2, -1, -1, nil},
		{"eight workers", 200, 8, -1, -1, nil},
		{"prepare fails", 200, 3, 57, -1, errBoom},
		{"use fails", 200, 3, -1, 120, errBoom},
		{"first prepare fails", 20, 2, 0, -1, errBoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := make([]int, tc.n)
			for i := range items {
				items[i] = i
			}
			var ahead, maxAhead atomic.Int64
			var got []int
			err := ordered(items, tc.workers, func(i int) (string, error) {
				if a := ahead.Add(1); a > maxAhead.Load() {
					maxAhead.Store(a)
				}
				// Later items finish first, now and then.
				time.Sleep(time.Duration((i*7919)%5) * 100 * time.Microsecond)
				if i == tc.failPrep {
					return "", errBoom
				}
				return fmt.Sprint(i), nil
			}, func(s string) error {
				ahead.Add(-1)
				var i int
				fmt.Sscan(s, &i)
				if i == tc.failAt {
					return errBoom
				}
				got = append(got, i)
				return nil
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			wantN := tc.n
			if tc.failPrep >= 0 {
				wantN = tc.failPrep
			} else if tc.failAt >= 0 {
				wantN = tc.failAt
			}
			if len(got) != wantN {
				t.Fatalf("used %d items, want %d", len(got), wantN)
			}
			for i, v := range got {
				if v != i {
					t.Fatalf("item %d used at position %d: out of order", v, i)
				}
			}
			// The bound holds while all goes well; after an error the items
			// prepared are never used, so they are not counted down.
			if m := maxAhead.Load(); tc.want == nil && m > int64(tc.workers)+2 {
				t.Errorf("%d items prepared ahead of use, want at most %d", m, tc.workers+2)
			}
		})
	}
}
