package sink

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"

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
//
// An archive's zstd encoder and write buffer are taken from pools kept by
// the package, and given back by Close, so that a run over many small
// inputs does not allocate them anew for each one (about 2 MiB an archive
// at the default level, most of it the encoder's match tables and the
// 1 MiB buffer). A reused encoder is reset (zstd.Encoder.Reset): an
// archive's bytes are those a new encoder writes, whatever the archives
// before it held or however they ended.
type ArchiveWriter struct {
	f   *File
	bw  *bufio.Writer
	enc *zstd.Encoder
	key encoderKey
	err error
}

// archiveBufferSize is the size of an archive's write buffer.
const archiveBufferSize = 1 << 20

// encoderKey is what a zstd encoder is made with, and what two archives
// must share to use the same one (neither option can change on Reset).
type encoderKey struct {
	level   zstd.EncoderLevel
	workers int
}

// The encoders and write buffers of closed archives, for the next ones.
// sync.Pools, not free lists, so that the garbage collector drops those a
// long-lived process (a convbeam worker) no longer uses.
var (
	encoderPools  sync.Map // encoderKey → *sync.Pool of *zstd.Encoder, reset to no writer
	archiveBuffer = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, archiveBufferSize) }}
)

// getEncoder returns an encoder made with k, writing to w: a pooled one
// reset to w, or a new one.
func getEncoder(k encoderKey, w io.Writer) (*zstd.Encoder, error) {
	if p, ok := encoderPools.Load(k); ok {
		if enc, ok := p.(*sync.Pool).Get().(*zstd.Encoder); ok {
			enc.Reset(w)
			return enc, nil
		}
	}
	return zstd.NewWriter(w, zstd.WithEncoderLevel(k.level), zstd.WithEncoderConcurrency(k.workers))
}

// putEncoder gives enc, closed or not, back to the pool of k. Reset waits
// for its goroutines (with more than one worker, a block may still be
// written after a failed Close) and lets go of its writer.
func putEncoder(k encoderKey, enc *zstd.Encoder) {
	enc.Reset(nil)
	p, ok := encoderPools.Load(k)
	if !ok {
		p, _ = encoderPools.LoadOrStore(k, new(sync.Pool))
	}
	p.(*sync.Pool).Put(enc)
}

// NewArchiveWriter starts an input's archive in txn, as the file name
// (outdir.ArchiveFile), compressed at zstdLevel with zstdWorkers
// goroutines (at least 1) if format is ArchiveZstd.
func NewArchiveWriter(txn *Txn, name string, format ArchiveFormat, zstdLevel zstd.EncoderLevel, zstdWorkers int) (*ArchiveWriter, error) {
	f, err := txn.Create(name)
	if err != nil {
		return nil, err
	}
	w := &ArchiveWriter{f: f}
	var dst io.Writer = f
	if format == ArchiveZstd {
		w.key = encoderKey{level: zstdLevel, workers: max(1, zstdWorkers)}
		if w.enc, err = getEncoder(w.key, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("archive %s: %w", name, err)
		}
		dst = w.enc
	}
	w.bw = archiveBuffer.Get().(*bufio.Writer)
	w.bw.Reset(dst)
	return w, nil
}

// Write writes one document and its LF. After Close it writes nothing and
// returns an error wrapping os.ErrClosed.
func (w *ArchiveWriter) Write(doc []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.bw == nil {
		return fmt.Errorf("archive %s: written after Close: %w", w.f.final, os.ErrClosed)
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

// Close flushes and closes the archive; it is published when the Txn
// commits. It gives the encoder and the buffer back to their pools, also
// after an error; a second Close returns the first one's error.
func (w *ArchiveWriter) Close() error {
	if w.bw == nil {
		return w.err
	}
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
		}
	}
	w.bw.Reset(nil)
	archiveBuffer.Put(w.bw)
	w.bw = nil
	if w.enc != nil {
		if err := w.enc.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
		}
		putEncoder(w.key, w.enc)
		w.enc = nil
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("archive %s: %w", w.f.final, err)
	}
	return w.err
}
