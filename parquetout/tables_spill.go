package parquetout

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// spillFile holds the rows a partitioned table spilled (see partitions):
// an Arrow IPC file of batches, each the rows of one day from one spill,
// and the index of each day's batches in the order they were written.
//
// The file is removed as soon as it is created: it lives as long as its
// descriptor, which close closes, so that neither a failed run nor a
// killed one leaves it behind (and no listing of the directory sees it).
type spillFile struct {
	f *os.File
	// removed tells that f was removed when created.
	removed bool
	bw      *bufio.Writer
	w       *ipc.FileWriter
	r       *ipc.FileReader
	// batches counts the batches written; byDay are each day's.
	batches int
	byDay   map[int64][]int
}

// spillBufferBytes is the size of the spill file's write buffer.
const spillBufferBytes = 256 << 10

// newSpillFile creates the spill file of the table name in dir (the
// system's temporary directory if empty).
func newSpillFile(dir, name string, schema *arrow.Schema) (*spillFile, error) {
	f, err := os.CreateTemp(dir, ".spill-"+name+"-*.arrow")
	if err != nil {
		return nil, fmt.Errorf("spill file: %w", err)
	}
	// Removed now; an error (a system that cannot remove an open file)
	// leaves it to close.
	s := &spillFile{f: f, removed: os.Remove(f.Name()) == nil, bw: bufio.NewWriterSize(f, spillBufferBytes), byDay: map[int64][]int{}}
	if s.w, err = ipc.NewFileWriter(s.bw, ipc.WithSchema(schema)); err != nil {
		s.close()
		return nil, fmt.Errorf("spill file: %w", err)
	}
	return s, nil
}

// write appends rec, the rows of day, which write releases.
func (s *spillFile) write(day int64, rec arrow.RecordBatch) error {
	defer rec.Release()
	if err := s.w.Write(rec); err != nil {
		return err
	}
	s.byDay[day] = append(s.byDay[day], s.batches)
	s.batches++
	return nil
}

// finish ends the writing and opens the file for reading; it returns the
// index, each day's batches in the order written.
func (s *spillFile) finish() (map[int64][]int, error) {
	err := s.w.Close()
	if err == nil {
		err = s.bw.Flush()
	}
	if err == nil {
		s.r, err = ipc.NewFileReader(s.f)
	}
	if err != nil {
		return nil, err
	}
	if n := s.r.NumRecords(); n != s.batches {
		return nil, fmt.Errorf("%d batches read back, %d written", n, s.batches)
	}
	return s.byDay, nil
}

// read returns batch i, which the caller releases.
func (s *spillFile) read(i int) (arrow.RecordBatch, error) {
	if s.r == nil {
		return nil, errors.New("spill file read before it was finished")
	}
	return s.r.RecordBatchAt(i)
}

// close closes the file, which frees it (and removes it by name if it
// could not be removed when created).
func (s *spillFile) close() {
	if s.r != nil {
		s.r.Close()
	}
	s.f.Close()
	if !s.removed {
		os.Remove(s.f.Name())
	}
}
