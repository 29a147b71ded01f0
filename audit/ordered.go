package audit

import "sync"

// ordered runs prepare on each item with up to workers goroutines and
// hands the results to use in the items' order, one at a time, in the
// caller's goroutine. At most workers items are prepared ahead of the one
// use holds, so its memory is bounded by the batch size, not by len(items).
// The first error (of prepare, in order, or of use) stops the work and is
// returned; the goroutines still running finish their item and exit.
func ordered[T, R any](items []T, workers int, prepare func(T) (R, error), use func(R) error) error {
	type result struct {
		r   R
		err error
	}
	workers = max(workers, 1)
	pending := make(chan chan result, workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		defer close(pending)
		for _, it := range items {
			ch := make(chan result, 1)
			select {
			case <-stop:
				// Stopped: the drain below may make room in pending, and
				// a select picks at random among ready cases.
				return
			default:
			}
			select {
			case pending <- ch:
			case <-stop:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := prepare(it)
				ch <- result{r, err}
			}()
		}
	}()
	var err error
	for ch := range pending {
		res := <-ch
		if err = res.err; err == nil {
			err = use(res.r)
		}
		if err != nil {
			close(stop)
			// Drain, so that the dispatcher is not left blocked.
			for ch := range pending {
				<-ch
			}
			break
		}
	}
	wg.Wait()
	return err
}
