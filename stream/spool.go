package stream

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Spool is an append-only temporary file that holds the bytes of lines too
// large to keep in memory, until the rejects sink copies them out. Writes
// come from the reading goroutine and reads from the writing one; both are
// safe at once.
type Spool struct {
	mu   sync.Mutex
	f    *os.File
	size int64
}

// SpoolRef locates a span of a Spool. A zero SpoolRef with Len 0 and a nil
// spool means the bytes were not kept.
type SpoolRef struct {
	Spool *Spool
	Off   int64
	Len   int64
}

// NewSpool creates a spool file in dir; Close removes it.
func NewSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, ".convbatch-spool-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return &Spool{f: f}, nil
}

func (s *Spool) write(p []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := s.size
	n, err := s.f.WriteAt(p, off)
	s.size += int64(n)
	if err != nil {
		return off, fmt.Errorf("spool: %w", err)
	}
	return off, nil
}

// truncate takes back the spool's bytes from off to its end, when no
// other write came after: a reader that spilled a line it then held
// whole gives its bytes back (the reading goroutine is the only writer).
// Failing to is harmless: the bytes stay unused. It reports whether the
// spool now ends at off.
func (s *Spool) truncate(off int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off < s.size && s.f.Truncate(off) == nil {
		s.size = off
	}
	return s.size == off
}

// Reader returns the bytes of ref.
func (r SpoolRef) Reader() io.Reader {
	if r.Spool == nil {
		return io.LimitReader(nil, 0)
	}
	return io.NewSectionReader(r.Spool.f, r.Off, r.Len)
}

// Close removes the spool file.
func (s *Spool) Close() error {
	name := s.f.Name()
	err := s.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}
