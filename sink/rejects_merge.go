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
// size bytes of data.
func rebaseIndex(enc *json.Encoder, path string, base, size int64) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
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
		if r.DataOffset < 0 || r.DataOffset > size {
			return fmt.Errorf("%s:%d: data_offset %d outside the segment's %d bytes", path, line, r.DataOffset, size)
		}
		r.DataOffset += base
		if err := enc.Encode(&r); err != nil {
			return err
		}
	}
	return sc.Err()
}
