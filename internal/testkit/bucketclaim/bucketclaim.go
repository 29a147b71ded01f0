// Package bucketclaim lends the bucket names of a fake object store that
// lives for the whole test process (package s3test's, package gcstest's)
// to one running test at a time, and clears each bucket before and after
// the test that holds it: so that the next test, or the next round of
// go test -count=N, finds the name free and the bucket empty, while two
// tests that picked the same name by mistake still fail loudly.
package bucketclaim

import (
	"sync"
	"testing"
)

// Claims are the names held by the tests running. The zero value holds
// none and is ready to use.
type Claims struct {
	mu   sync.Mutex
	held map[string]bool
}

// Take claims name for t, or fails t if another running test holds it.
// It calls clear at once (a bucket of that name that no test holds is a
// leftover whose removal failed) and again when t and its subtests end,
// then frees the name. clear removes the bucket with its objects and
// anything the server recorded about them.
func (c *Claims) Take(t testing.TB, name string, clear func()) {
	t.Helper()
	c.mu.Lock()
	if c.held == nil {
		c.held = map[string]bool{}
	}
	taken := c.held[name]
	c.held[name] = true
	c.mu.Unlock()
	if taken {
		t.Fatalf("bucket %s is another running test's", name)
	}
	t.Cleanup(func() {
		clear()
		c.mu.Lock()
		delete(c.held, name)
		c.mu.Unlock()
	})
	clear()
}
