package sink

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Reject is one line of the rejects index (RejectsIndexFile). It holds
// positions and codes only, never content; the line's bytes are in
// RejectsDataFile at DataOffset.
type Reject struct {
	// File is the input as named on the command line.
	File string `json:"file"`
	// Line is the 1-based line number.
	Line int64 `json:"line"`
	// Offset is the line's byte offset in the decompressed input.
	Offset int64 `json:"offset"`
	// Reason is the reject reason code (docs/FORMAT.md).
	Reason string `json:"reason"`
	// Column is the 1-based byte in the line where the fault was found, 0
	// when it concerns the whole line.
	Column int `json:"column"`
	// Length is the line's length in bytes, CR included, LF not.
	Length int64 `json:"length"`
	// DataOffset locates the line's exact bytes in rejects.bin.
	DataOffset int64 `json:"data_offset"`
}

// RejectWriter writes the rejects index and the exact bytes of each reject.
// Errors are sticky.
type RejectWriter struct {
	index, data *File
	iw, dw      *bufio.Writer
	enc         *json.Encoder
	off         int64
	err         error
}

// NewRejectWriter starts RejectsIndexFile and RejectsDataFile in txn.
func NewRejectWriter(txn *Txn) (*RejectWriter, error) {
	index, err := txn.Create(RejectsIndexFile)
	if err != nil {
		return nil, err
	}
	data, err := txn.Create(RejectsDataFile)
	if err != nil {
		index.Close()
		return nil, err
	}
	w := &RejectWriter{index: index, data: data, iw: bufio.NewWriterSize(index, 64<<10), dw: bufio.NewWriterSize(data, 1<<20)}
	w.enc = json.NewEncoder(w.iw)
	return w, nil
}

// Write records r, whose exact bytes are read from body (r.Length of them).
func (w *RejectWriter) Write(r Reject, body io.Reader) error {
	if w.err != nil {
		return w.err
	}
	r.DataOffset = w.off
	n, err := io.Copy(w.dw, body)
	w.off += n
	if err == nil && n != r.Length {
		err = fmt.Errorf("line %d: %d bytes kept of %d", r.Line, n, r.Length)
	}
	if err != nil {
		w.err = fmt.Errorf("rejects: %s: %w", r.File, err)
		return w.err
	}
	if err := w.enc.Encode(r); err != nil {
		w.err = fmt.Errorf("rejects: %w", err)
		return w.err
	}
	return nil
}

// Close flushes and closes both files.
func (w *RejectWriter) Close() error {
	for _, step := range []func() error{w.iw.Flush, w.dw.Flush, w.index.Sync, w.data.Sync, w.index.Close, w.data.Close} {
		if err := step(); err != nil && w.err == nil {
			w.err = fmt.Errorf("rejects: %w", err)
		}
	}
	return w.err
}
