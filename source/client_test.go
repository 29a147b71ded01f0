package source

import (
	"testing"
	"time"
)

// TestClientOptions: the options that set a Client's tries, backoff and
// stall timeout, the defaults they leave, and the values they refuse.
func TestClientOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []Option
		ok      bool
		tries   int
		stall   time.Duration
		backoff time.Duration
	}{
		{"defaults", nil, true, DefaultTries, DefaultStallTimeout, 200 * time.Millisecond},
		{"tries alone", []Option{WithTries(9)}, true, 9, DefaultStallTimeout, 200 * time.Millisecond},
		{"one try", []Option{WithTries(1)}, true, 1, DefaultStallTimeout, 200 * time.Millisecond},
		{"no try", []Option{WithTries(0)}, false, 0, 0, 0},
		{"retry then tries", []Option{WithRetry(3, time.Second, 2*time.Second), WithTries(7)}, true, 7, DefaultStallTimeout, time.Second},
		{"stall", []Option{WithStallTimeout(time.Second)}, true, DefaultTries, time.Second, 200 * time.Millisecond},
		{"no stall", []Option{WithStallTimeout(0)}, false, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.opts...)
			if (err == nil) != tc.ok {
				t.Fatalf("NewClient: %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				return
			}
			defer c.Close()
			if c.opts.tries != tc.tries || c.opts.stall != tc.stall || c.opts.backoff != tc.backoff {
				t.Errorf("tries %d, stall %v, backoff %v; want %d, %v, %v", c.opts.tries, c.opts.stall, c.opts.backoff, tc.tries, tc.stall, tc.backoff)
			}
		})
	}
}
