package pipeline

import (
	"context"
	"testing"
)

// TestQueueBoundsBytesInFlight: whatever the number of jobs the free list
// allows, the reader holds no more batches than the byte budget admits
// (one batch alone may pass it), makes no more jobs than that, and gets
// every charge back as the writer returns the jobs.
func TestQueueBoundsBytesInFlight(t *testing.T) {
	const njobs, batch = 130, 1 << 20
	free := make(chan *job, njobs)
	written := make(chan *job, njobs)
	q := &queue{ctx: context.Background(), free: free, jobs: njobs, budget: 5 * batch, batchBytes: batch}
	// The writer: returns each job once the reader has queued the next
	// few, so that the budget, not the writer, is what stops the reader.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for j := range written {
			free <- j
		}
	}()
	var most int64
	for i := range 1000 {
		j, err := q.take()
		if err != nil {
			t.Fatal(err)
		}
		if cap(j.batch.Buf) == 0 {
			j.batch.Buf = make([]byte, 0, batch)
		}
		if i%100 == 99 {
			// A long line: the buffer grew past twice the batch size.
			j.batch.Buf = make([]byte, 0, 3*batch)
		}
		if err := q.acquire(j); err != nil {
			t.Fatal(err)
		}
		most = max(most, q.inUse)
		written <- j
	}
	close(written)
	<-done
	if most > q.budget {
		t.Errorf("%d bytes in flight, budget %d", most, q.budget)
	}
	if q.made > 6 {
		t.Errorf("%d jobs made for a budget of 5 batches", q.made)
	}
	for len(free) > 0 {
		j := <-free
		q.giveBack(j)
		q.spare = append(q.spare, j)
	}
	for _, j := range q.spare {
		if cap(j.batch.Buf) > 2*batch {
			t.Error("a job kept a buffer grown past twice the batch size")
		}
	}
	if q.inUse != 0 {
		t.Errorf("%d bytes still charged after every job came back", q.inUse)
	}
}

// TestPoolBytes pins the budget: a batch per worker and two more, capped
// by DefaultPoolBytes and by a quarter of the memory limit.
func TestPoolBytes(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		workers, batch int
		limit, want    int64
	}{
		{2, 4 * mb, 0, 16 * mb},
		{2, 4 * mb, 200 * mb, 16 * mb},
		{1, 4 * mb, 0, 12 * mb},
		{6, 4 * mb, 0, 32 * mb},
		{64, 4 * mb, 0, DefaultPoolBytes},
		{2, 4 * mb, 40 * mb, 10 * mb},
		{2, 64 << 10, 0, 256 << 10},
	} {
		cfg := &Config{Workers: tc.workers, BatchBytes: tc.batch, MemoryLimit: tc.limit}
		if got := poolBytes(cfg); got != tc.want {
			t.Errorf("workers %d, batch %d, limit %d: %d, want %d", tc.workers, tc.batch, tc.limit, got, tc.want)
		}
	}
}
