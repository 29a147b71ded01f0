package audit

import "testing"

// SetCommitBatch sets how many changed receipts Commit hands to the
// commit at a time (0: all at once, the commit as it was) until t ends.
func SetCommitBatch(t testing.TB, n int) {
	old := commitBatch
	commitBatch = n
	t.Cleanup(func() { commitBatch = old })
}

// Inflate makes res's changes n, its own repeated at lines past every
// real one (each reading back its own one's state line): a
// commit of many changed receipts from a small OUT.
func Inflate(res *Result, n int) {
	real := res.Changes
	if len(real) == 0 {
		return
	}
	for i := len(real); i < n; i++ {
		c := *real[i%len(real)]
		c.Line = int64(1_000_000 + i)
		res.Changes = append(res.Changes, &c)
	}
}
