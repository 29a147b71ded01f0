package sink

import (
	"bufio"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// ArchiveFormat is how documents are written back.
type ArchiveFormat string

// Archive formats.
const (
	ArchiveZstd  ArchiveFormat = "zst"
	ArchiveJSONL ArchiveFormat = "jsonl"
	ArchiveNone  ArchiveFormat = "none"
)

// ParseArchiveFormat parses the --archive flag's value.
func ParseArchiveFormat(s string) (ArchiveFormat, error) {
	switch ArchiveFormat(s) {
	case ArchiveZstd, "zstd", "jsonl.zst":
		return ArchiveZstd, nil
	case ArchiveJSONL:
		return ArchiveJSONL, nil
	case ArchiveNone:
		return ArchiveNone, nil
	}
	return "", fmt.Errorf("archive format %q: want zst, jsonl or none", s)
}

// Ext returns the file extension of the format.
func (f ArchiveFormat) Ext() string {
	if f == ArchiveJSONL {
		return ".jsonl"
	}
	return ".jsonl.zst"
}

// ArchiveWriter writes documents back, one per line, LF-terminated, exactly
// the bytes given. Errors are sticky.
type ArchiveWriter struct {
	f   *File
	bw  *bufio.Writer
	enc *zstd.Encoder
	err error
}

// NewArchiveWriter starts an input's archive in txn, as the file name
// (outdir.ArchiveFile).
func NewArchiveWriter(txn *Txn, name string, format ArchiveFormat, zstdLevel zstd.EncoderLevel, zstdWorkers int) (*ArchiveWriter, error) {
	f, err := txn.Create(name)
	if err != nil {
		return nil, err
	}
	w := &ArchiveWriter{f: f}
	var dst io.Writer = f
	if format == ArchiveZstd {
		w.enc, err = zstd.NewWriter(f, zstd.WithEncoderLevel(zstdLevel), zstd.WithEncoderConcurrency(max(1, zstdWorkers)))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("archive %s: %w", name, err)
		}
		dst = w.enc
	}
	w.bw = bufio.NewWriterSize(dst, 1<<20)
	return w, nil
}

// Write writes one document and its LF.
func (w *ArchiveWriter) Write(doc []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, err := w.bw.Write(doc); err != nil {
		w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
		return w.err
	}
	if err := w.bw.WriteByte('\n'); err != nil {
		w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
		return w.err
	}
	return nil
}

// Close flushes and closes the archive; it is published when the Txn commits.
func (w *ArchiveWriter) Close() error {
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
		}
	}
	if w.enc != nil {
		if err := w.enc.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
		}
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
	}
	return w.err
}
