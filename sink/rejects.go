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
	// Kept is how many of the line's bytes rejects.bin holds at
	// DataOffset: its first Kept bytes. It is Length unless the line was
	// longer than the keep cap (a too-large line); set by Write.
	Kept int64 `json:"kept"`
	// Rest locates the line's bytes not kept, when Kept < Length, in the
	// decompressed input named by File; nil when the whole line is kept.
	// Set by Write.
	Rest *Span `json:"rest,omitempty"`
}

// Span is a run of bytes of an input: Length bytes from the decompressed
// byte Offset.
type Span struct {
	// Offset is the byte offset of the span's first byte.
	Offset int64 `json:"offset"`
	// Length is the span's length in bytes.
	Length int64 `json:"length"`
}

// sizer is a body that knows how many bytes it holds (a *bytes.Reader, an
// *io.SectionReader): Write checks that all of them were copied.
type sizer interface{ Size() int64 }

// RejectWriter writes the rejects index and the exact bytes of each reject.
// Errors are sticky.
type RejectWriter struct {
	txn *Txn
	// indexName and dataName are the files' names in txn.
	indexName, dataName string
	index, data         *File
	iw, dw              *bufio.Writer
	enc                 *json.Encoder
	off                 int64
	err                 error
}

// NewRejectWriter returns a writer of the rejects index and data files
// named index and data in txn (outdir.RejectsIndexFile and
// outdir.RejectsDataFile); it creates them at the first reject (an input
// without rejects has neither).
func NewRejectWriter(txn *Txn, index, data string) (*RejectWriter, error) {
	return &RejectWriter{txn: txn, indexName: index, dataName: data}, nil
}

// open creates both files.
func (w *RejectWriter) open() error {
	index, err := w.txn.Create(w.indexName)
	if err != nil {
		return err
	}
	data, err := w.txn.Create(w.dataName)
	if err != nil {
		index.Close()
		return err
	}
	w.index, w.data = index, data
	w.iw, w.dw = bufio.NewWriterSize(index, 64<<10), bufio.NewWriterSize(data, 1<<20)
	w.enc = json.NewEncoder(w.iw)
	return nil
}

// Write records r, whose kept bytes are read from body: the line's first
// bytes, all r.Length of them unless the reader kept fewer (a too-large
// line past the keep cap). Write sets DataOffset, Kept and, when bytes
// were not kept, Rest: where they are in the input (r.Offset + Kept, the
// remaining Length - Kept bytes).
func (w *RejectWriter) Write(r Reject, body io.Reader) error {
	if w.err != nil {
		return w.err
	}
	if w.index == nil {
		if w.err = w.open(); w.err != nil {
			return w.err
		}
	}
	r.DataOffset = w.off
	n, err := io.Copy(w.dw, body)
	w.off += n
	switch {
	case err != nil:
	case n > r.Length:
		err = fmt.Errorf("line %d (byte %d): %d bytes kept of a %d-byte line", r.Line, r.Offset, n, r.Length)
	default:
		if s, ok := body.(sizer); ok && s.Size() != n {
			err = fmt.Errorf("line %d (byte %d): %d bytes copied of %d kept", r.Line, r.Offset, n, s.Size())
		}
	}
	r.Kept, r.Rest = n, nil
	if n < r.Length {
		r.Rest = &Span{Offset: r.Offset + n, Length: r.Length - n}
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

// Close flushes and closes both files, if a reject created them.
func (w *RejectWriter) Close() error {
	if w.index == nil {
		return w.err
	}
	for _, step := range []func() error{w.iw.Flush, w.dw.Flush, w.index.Close, w.data.Close} {
		if err := step(); err != nil && w.err == nil {
			w.err = fmt.Errorf("rejects: %w", err)
		}
	}
	return w.err
}
