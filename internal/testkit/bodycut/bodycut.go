// Package bodycut is what the test object stores (s3test, gcstest) share
// in front of their servers: it watches the GETs of object bodies,
// counting them and recording their Range headers by object, and cuts
// those a test asks for in the middle of the body, as a server that drops
// a connection does; tamper.go answers a ranged GET with the whole object
// or changes a byte of a body, as a store that ignores Range or a network
// that alters bytes does.
package bodycut

import (
	"net/http"
	"strings"
	"sync"
)

// Watch watches the GETs of object bodies through Handler. A store
// embeds it, so that its CutNextGets, Gets and Ranges are the store's.
type Watch struct {
	mu sync.Mutex
	// cuts are the GETs of object bodies still to cut, each after the
	// number of body bytes given.
	cuts []int64
	// gets counts the GETs of object bodies served.
	gets int
	// ranges are the Range headers of the GETs of each object's body
	// ("" for none), by "bucket/key".
	ranges map[string][]string
	// tamper holds the faults of tamper.go.
	tamper tamper
	// statuses are the objects whose body GETs answer a status (status.go).
	statuses map[string]int
}

// CutNextGets makes the next GETs of object bodies end the connection
// after n body bytes each, as a server that drops a connection in the
// middle of an object does. A body of n bytes or fewer is not cut, and
// its cut is spent.
func (w *Watch) CutNextGets(n int64, times int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for range times {
		w.cuts = append(w.cuts, n)
	}
}

// Gets returns the GETs of object bodies served so far.
func (w *Watch) Gets() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gets
}

// Ranges returns the Range headers of the GETs of the body of
// bucket/key served so far (since the store last forgot bucket), in
// order, "" for a GET of the whole object.
func (w *Watch) Ranges(bucket, key string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.ranges[bucket+"/"+key]...)
}

// Forget drops the Range headers recorded for the objects of bucket, as a
// store does when it removes the bucket: a later bucket of that name
// starts with none.
func (w *Watch) Forget(bucket string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for obj := range w.ranges {
		if strings.HasPrefix(obj, bucket+"/") {
			delete(w.ranges, obj)
		}
	}
}

// Handler serves next, watching the requests that body says are GETs of
// an object's body (returning its "bucket/key").
func (w *Watch) Handler(next http.Handler, body func(*http.Request) (object string, ok bool)) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		limit := int64(-1)
		if _, ok := body(r); ok {
			rw = w.tamper.apply(rw, r) // before the Range is recorded: it may drop it
		}
		if obj, ok := body(r); ok {
			w.mu.Lock()
			w.gets++
			if w.ranges == nil {
				w.ranges = map[string][]string{}
			}
			w.ranges[obj] = append(w.ranges[obj], r.Header.Get("Range"))
			if len(w.cuts) > 0 {
				limit, w.cuts = w.cuts[0], w.cuts[1:]
			}
			status := w.statuses[obj]
			w.mu.Unlock()
			if status != 0 {
				http.Error(rw, http.StatusText(status), status)
				return
			}
		}
		if limit < 0 {
			next.ServeHTTP(rw, r)
			return
		}
		next.ServeHTTP(&cutWriter{ResponseWriter: rw, left: limit}, r)
	})
}

// cutWriter passes left body bytes, then aborts the response, which
// closes the connection in the middle of the body.
type cutWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}
