package bodycut

import (
	"net/http"
	"sync"
)

// tamper is the faults that leave a GET of an object's body whole but
// wrong: a store that ignores the Range header, and a byte changed in
// transit. Watch holds one; Handler applies it to each GET of a body.
type tamper struct {
	mu      sync.Mutex
	ignores int     // GETs with a Range header still to answer as if it were absent
	flips   []int64 // GETs still to alter, each at the body offset given
}

// IgnoreNextRanges makes the next times GETs of object bodies that carry
// a Range header be answered as if they had none: 200 and the whole
// object, as a store that ignores Range does.
func (w *Watch) IgnoreNextRanges(times int) {
	w.tamper.mu.Lock()
	defer w.tamper.mu.Unlock()
	w.tamper.ignores += times
}

// FlipNextGets changes one byte, at body offset at, of each of the next
// times GETs of object bodies, leaving the length and the headers as
// they are, as a byte changed in transit. A body of at bytes or fewer is
// passed unchanged, and its flip is spent.
func (w *Watch) FlipNextGets(at int64, times int) {
	w.tamper.mu.Lock()
	defer w.tamper.mu.Unlock()
	for range times {
		w.tamper.flips = append(w.tamper.flips, at)
	}
}

// apply tampers with one GET of a body, if a fault is due.
func (t *tamper) apply(rw http.ResponseWriter, r *http.Request) http.ResponseWriter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ignores > 0 && r.Header.Get("Range") != "" {
		t.ignores--
		r.Header.Del("Range")
	}
	if len(t.flips) > 0 {
		at := t.flips[0]
		t.flips = t.flips[1:]
		return &flipWriter{ResponseWriter: rw, at: at}
	}
	return rw
}

// flipWriter changes the body byte at offset at.
type flipWriter struct {
	http.ResponseWriter
	at   int64
	seen int64
}

func (f *flipWriter) Write(p []byte) (int, error) {
	if f.at >= f.seen && f.at < f.seen+int64(len(p)) {
		q := append([]byte(nil), p...)
		q[f.at-f.seen] ^= 0x20
		p = q
	}
	f.seen += int64(len(p))
	return f.ResponseWriter.Write(p)
}

// Flush passes a flush on, as the server's own writer does.
func (f *flipWriter) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}
