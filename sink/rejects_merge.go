package sink

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// RejectSegment is one input's rejects, written by a RejectWriter into its
// own directory: the paths of its index and data files.
type RejectSegment struct {
	Index, Data string
}

// MergeRejects writes the segments' rejects, in order, as one index and
// one data file (indexRel and dataRel in txn): the data files end to end,
// and every index line with its data_offset moved by the bytes before its
// segment. Segments whose files are missing have no rejects.
func MergeRejects(txn *Txn, indexRel, dataRel string, segs []RejectSegment) error {
	data, err := txn.Create(dataRel)
	if err != nil {
		return err
	}
	var base int64
	err = txn.WriteFile(indexRel, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, s := range segs {
			n, err := appendFile(data, s.Data)
			if err != nil {
				return err
			}
			if err := rebaseIndex(enc, s.Index, base, n); err != nil {
				return err
			}
			base += n
		}
		return nil
	})
	if cerr := data.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("output %s: %w", dataRel, cerr)
	}
	return err
}

// appendFile copies the file at path to w and returns its size; a missing
// file is empty.
func appendFile(w io.Writer, path string) (int64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

// rebaseIndex re-encodes the index at path with base added to every
// data_offset, checking that each line's bytes lie within the segment's
// size bytes of data. A missing index has no rejects.
func rebaseIndex(enc *json.Encoder, path string, base, size int64) error {
	err := eachReject(path, func(line int, r *Reject) error {
		if r.DataOffset < 0 || r.DataOffset > size {
			return fmt.Errorf("%s:%d: data_offset %d outside the segment's %d bytes", path, line, r.DataOffset, size)
		}
		r.DataOffset += base
		return enc.Encode(r)
	})
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// eachReject calls fn for every line of the rejects index at path, with
// its 1-based line number; a line that is not a Reject is an error naming
// the file and line.
func eachReject(path string, fn func(line int, r *Reject) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var r Reject
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if err := fn(line, &r); err != nil {
			return err
		}
	}
	return sc.Err()
}

// FilterRejects writes a copy of a rejects index and data file pair
// (srcIndex, srcData) as indexRel and dataRel in txn, keeping only the
// rejects for which keep returns true: their kept bytes are copied end to
// end and their data_offset moved to match.
func FilterRejects(txn *Txn, indexRel, dataRel, srcIndex, srcData string, keep func(*Reject) bool) error {
	src, err := os.Open(srcData)
	if err != nil {
		return err
	}
	defer src.Close()
	data, err := txn.Create(dataRel)
	if err != nil {
		return err
	}
	dw := bufio.NewWriterSize(data, 1<<20)
	var off int64
	err = txn.WriteFile(indexRel, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		return eachReject(srcIndex, func(line int, r *Reject) error {
			if !keep(r) {
				return nil
			}
			if r.Kept == 0 && r.Rest == nil {
				r.Kept = r.Length // written before kept existed: all of it
			}
			n, err := io.Copy(dw, io.NewSectionReader(src, r.DataOffset, r.Kept))
			if err == nil && n != r.Kept {
				err = fmt.Errorf("%s:%d: %d bytes of %d at data_offset %d", srcIndex, line, n, r.Kept, r.DataOffset)
			}
			if err != nil {
				return err
			}
			r.DataOffset = off
			off += n
			return enc.Encode(r)
		})
	})
	if ferr := dw.Flush(); err == nil {
		err = ferr
	}
	if cerr := data.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", dataRel, err)
	}
	return nil
}
