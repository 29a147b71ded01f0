package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

const testChunk = 64 << 10

// readAllBuf reads r to its end through a buffer of an odd size, so that
// reads straddle chunk ends.
func readAllBuf(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	_, err := io.CopyBuffer(onlyWriter{&out}, onlyReader{r}, make([]byte, 7777))
	return out.Bytes(), err
}

type onlyReader struct{ io.Reader }
type onlyWriter struct{ io.Writer }

func TestParallelReader(t *testing.T) {
	sizes := []int{0, 1, testChunk - 1, testChunk, testChunk + 1, 3 * testChunk, 3*testChunk + 1, 7*testChunk - 1}
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		for _, n := range sizes {
			data := randomBytes(n, uint64(n)+10)
			key := fmt.Sprintf("p/%d.jsonl", n)
			s.put(key, data)
			s.faults.set(func(f *faults) { f.reset() })
			p, err := c.NewParallelReader(context.Background(), mustParse(t, s.url(key)), WithConcurrency(3), WithChunkSize(testChunk))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAllBuf(p)
			p.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%d bytes: read %d, equal %v, err %v", n, len(got), bytes.Equal(got, data), err)
			}
			s.faults.set(func(f *faults) {
				if want := (n + testChunk - 1) / testChunk; f.gets != want {
					t.Errorf("%d bytes: %d ranged reads, want %d", n, f.gets, want)
				}
				if f.peak > 3 {
					t.Errorf("%d bytes: %d reads in flight at once, want at most 3", n, f.peak)
				}
			})
		}
	})
}

func TestParallelReaderResumes(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		data := randomBytes(5*testChunk+123, 20)
		s.put("pr.jsonl", data)
		// Cut three responses, in whichever chunks they fall.
		s.faults.set(func(f *faults) { f.reset(); f.drops, f.dropAfter = 3, testChunk/3 })
		p, err := testClient(t).NewParallelReader(context.Background(), mustParse(t, s.url("pr.jsonl")), WithConcurrency(4), WithChunkSize(testChunk))
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAllBuf(p)
		p.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("read %d of %d bytes, equal %v, err %v", len(got), len(data), bytes.Equal(got, data), err)
		}
	})
}

func TestParallelReaderChanged(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		s.put("pc.jsonl", randomBytes(6*testChunk, 30))
		s.faults.set(func(f *faults) {
			f.reset()
			f.drops, f.dropAfter = 1, testChunk/2
			f.onDrop = func() { s.put("pc.jsonl", randomBytes(6*testChunk, 31)) }
		})
		p, err := testClient(t).NewParallelReader(context.Background(), mustParse(t, s.url("pc.jsonl")), WithConcurrency(2), WithChunkSize(testChunk))
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAllBuf(p)
		p.Close()
		if !errors.Is(err, ErrChanged) {
			t.Errorf("err %v, want ErrChanged", err)
		}
	})
}

// TestParallelReaderVersion reads the version WithVersion names: the
// bytes of that version while it is there, ErrChanged once it is not.
func TestParallelReaderVersion(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		ctx := context.Background()
		data := randomBytes(4*testChunk+5, 32)
		s.put("pv.jsonl", data)
		loc := mustParse(t, s.url("pv.jsonl"))
		info, err := c.Stat(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []error{nil, ErrChanged} {
			p, err := c.NewParallelReader(ctx, loc, WithVersion(info), WithConcurrency(2), WithChunkSize(testChunk))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAllBuf(p)
			p.Close()
			if want == nil && (err != nil || !bytes.Equal(got, data)) {
				t.Errorf("read %d bytes of %d, equal %v, err %v", len(got), len(data), bytes.Equal(got, data), err)
			}
			if want != nil && !errors.Is(err, want) {
				t.Errorf("read of an overwritten version: err %v, want %v", err, want)
			}
			s.put("pv.jsonl", randomBytes(4*testChunk+5, 33))
		}
	})
}

func TestParallelReaderOptions(t *testing.T) {
	s := newStore(t, "s3")
	s.put("o.jsonl", randomBytes(10*testChunk, 40))
	loc := mustParse(t, s.url("o.jsonl"))
	c := testClient(t)
	for _, tc := range []struct {
		opts  []ParallelOption
		slots int
		bad   bool
	}{
		{opts: nil, slots: 1}, // 8 MiB default chunk: one chunk holds the object
		{opts: []ParallelOption{WithChunkSize(testChunk)}, slots: 4},
		{opts: []ParallelOption{WithChunkSize(testChunk), WithConcurrency(16)}, slots: 10},
		{opts: []ParallelOption{WithChunkSize(testChunk), WithConcurrency(8), WithMaxInFlight(3 * testChunk)}, slots: 3},
		{opts: []ParallelOption{WithChunkSize(testChunk), WithMaxInFlight(1)}, slots: 1},
		{opts: []ParallelOption{WithConcurrency(0)}, bad: true},
		{opts: []ParallelOption{WithChunkSize(0)}, bad: true},
		{opts: []ParallelOption{WithMaxInFlight(-1)}, bad: true},
	} {
		p, err := c.NewParallelReader(context.Background(), loc, tc.opts...)
		if tc.bad {
			if err == nil {
				t.Errorf("options %d: accepted", len(tc.opts))
				p.Close()
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(p.slots) != tc.slots {
			t.Errorf("%d slots, want %d", len(p.slots), tc.slots)
		}
		p.Close()
	}
	if _, err := c.NewParallelReader(context.Background(), mustParse(t, s.url("none.jsonl"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing object: %v, want ErrNotFound", err)
	}
}

// TestParallelReaderClose closes a reader in the middle: its workers stop.
func TestParallelReaderClose(t *testing.T) {
	s := newStore(t, "http")
	s.put("x.jsonl", randomBytes(20*testChunk, 50))
	p, err := testClient(t).NewParallelReader(context.Background(), mustParse(t, s.url("x.jsonl")), WithChunkSize(testChunk))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(p, make([]byte, testChunk+5)); err != nil {
		t.Fatal(err)
	}
	p.Close() // waits for the workers; a leak would hang here
	if _, err := p.Read(make([]byte, 1)); err == nil {
		t.Error("Read after Close succeeded")
	}
}
