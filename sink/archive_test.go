package sink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// pinPools makes the package's pools deterministic for the test: one P
// (a sync.Pool hands a goroutine what was put on its P) and no automatic
// garbage collection (which empties the pools), both restored at the end.
// emptyPools then empties them.
func pinPools(t *testing.T) {
	procs := runtime.GOMAXPROCS(1)
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		runtime.GOMAXPROCS(procs)
	})
}

// emptyPools empties every sync.Pool: the first collection moves their
// objects aside, the second drops them.
func emptyPools() {
	runtime.GC()
	runtime.GC()
}

// archiveDocs returns n documents of about size bytes each.
func archiveDocs(seed, n, size int) [][]byte {
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = archiveDoc(seed*1_000_000+i, size)
	}
	return docs
}

// archiveLines is what an archive of docs holds once decompressed.
func archiveLines(docs [][]byte) []byte {
	var b bytes.Buffer
	for _, d := range docs {
		b.Write(d)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// referenceArchive is an archive of docs as NewArchiveWriter wrote it before
// it reused encoders and buffers: a new zstd encoder (for ArchiveZstd) behind
// a new 1 MiB buffer, both dropped at the end.
func referenceArchive(t *testing.T, format ArchiveFormat, level zstd.EncoderLevel, workers int, docs [][]byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if format == ArchiveJSONL {
		return archiveLines(docs)
	}
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(workers))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(enc, 1<<20)
	bw.Write(archiveLines(docs))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// archiveSettings are the settings of one archive.
type archiveSettings struct {
	format  ArchiveFormat
	level   zstd.EncoderLevel
	workers int
}

func (s archiveSettings) String() string {
	if s.format == ArchiveJSONL {
		return "jsonl"
	}
	return fmt.Sprintf("zst-%s-j%d", s.level, s.workers)
}

// openArchive opens an archive with settings s in a new Txn under dir,
// named name.
func openArchive(t *testing.T, dir, name string, s archiveSettings) (*Txn, *ArchiveWriter) {
	t.Helper()
	txn, err := NewTxn(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewArchiveWriter(txn, "archive/"+name+s.format.Ext(), s.format, s.level, s.workers)
	if err != nil {
		t.Fatal(err)
	}
	return txn, w
}

// writeArchive writes docs through w, closes it, commits txn and returns
// the archive's bytes.
func writeArchive(t *testing.T, txn *Txn, w *ArchiveWriter, docs [][]byte) []byte {
	t.Helper()
	for _, d := range docs {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	files := txn.Files()
	b, err := os.ReadFile(txn.Path(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestArchiveReuseBytes writes the same documents through a writer with a
// new encoder and buffer and through writers that reuse those of an
// archive before, which held other documents, had other settings, failed
// while writing or was aborted: every archive must be byte for byte the
// one NewArchiveWriter wrote before it reused anything.
func TestArchiveReuseBytes(t *testing.T) {
	pinPools(t)
	var settings []archiveSettings
	for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		for _, workers := range []int{1, 2} {
			settings = append(settings, archiveSettings{ArchiveZstd, level, workers})
		}
	}
	settings = append(settings, archiveSettings{ArchiveJSONL, 0, 1})
	contents := []struct {
		name string
		docs [][]byte
	}{
		{"empty", nil},
		{"one-doc", archiveDocs(1, 1, 1024)},
		// 300 KB: several zstd blocks, with history between them.
		{"blocks", archiveDocs(2, 300, 1024)},
		// A document larger than the write buffer, written past it.
		{"over-buffer", append(archiveDocs(3, 3, 1000), archiveDoc(4, 1100<<10))},
	}
	// other is what the archive before held: 400 KB of other documents,
	// several zstd blocks.
	other := archiveDocs(5, 400, 1024)
	// before writes, with settings s, the archive that precedes the one
	// compared, and returns its encoder and buffer.
	befores := []struct {
		name         string
		sameSettings bool // its encoder goes to the compared archive
		before       func(t *testing.T, dir string, s archiveSettings) (*zstd.Encoder, *bufio.Writer)
	}{
		{"after-other-documents", true, func(t *testing.T, dir string, s archiveSettings) (*zstd.Encoder, *bufio.Writer) {
			txn, w := openArchive(t, dir, "before", s)
			enc, bw := w.enc, w.bw
			writeArchive(t, txn, w, other)
			return enc, bw
		}},
		{"after-other-level", false, func(t *testing.T, dir string, s archiveSettings) (*zstd.Encoder, *bufio.Writer) {
			o := archiveSettings{ArchiveZstd, zstd.SpeedBestCompression, s.workers}
			if s.level == zstd.SpeedBestCompression {
				o.level = zstd.SpeedFastest
			}
			txn, w := openArchive(t, dir, "before", o)
			enc, bw := w.enc, w.bw
			writeArchive(t, txn, w, other)
			return enc, bw
		}},
		{"after-other-workers", false, func(t *testing.T, dir string, s archiveSettings) (*zstd.Encoder, *bufio.Writer) {
			txn, w := openArchive(t, dir, "before", archiveSettings{ArchiveZstd, max(s.level, zstd.SpeedFastest), s.workers + 1})
			enc, bw := w.enc, w.bw
			writeArchive(t, txn, w, other)
			return enc, bw
		}},
		{"after-failed-write", true, func(t *testing.T, dir string, s archiveSettings) (*zstd.Encoder, *bufio.Writer) {
			txn, w := openArchive(t, dir, "before", s)
			enc, bw := w.enc, w.bw
			for _, d := range other[:200] {
				w.Write(d)
			}
			// A zstd block reaches the file, then the disk goes away
			// under the writer, in the middle of the frame.
			if err := w.bw.Flush(); err != nil {
				t.Fatal(err)
			}
			w.f.File.Close()
			var err error
			for _, d := range other[200:] {
				if err = w.Write(d); err != nil {
					break
				}
			}
			if cerr := w.Close(); cerr == nil || !errors.Is(cerr, os.ErrClosed) {
				t.Fatalf("closing an archive whose file failed: %v, want os.ErrClosed (write: %v)", cerr, err)
			}
			txn.Abort()
			return enc, bw
		}},
		{"after-abort", true, func(t *testing.T, dir string, s archiveSettings) (*zstd.Encoder, *bufio.Writer) {
			txn, w := openArchive(t, dir, "before", s)
			enc, bw := w.enc, w.bw
			for _, d := range other[:300] {
				if err := w.Write(d); err != nil {
					t.Fatal(err)
				}
			}
			// Aborted in the middle of a frame, with blocks written.
			if err := w.bw.Flush(); err != nil {
				t.Fatal(err)
			}
			txn.Abort()
			// The encoder's last block and checksum find the file closed
			// (a JSONL archive has nothing left to write).
			if err := w.Close(); err == nil && s.format == ArchiveZstd {
				t.Fatal("an archive aborted half written closed without an error")
			}
			return enc, bw
		}},
	}
	for _, s := range settings {
		for _, c := range contents {
			t.Run(s.String()+"/"+c.name, func(t *testing.T) {
				want := referenceArchive(t, s.format, s.level, s.workers, c.docs)
				dir := t.TempDir()
				emptyPools()
				txn, w := openArchive(t, dir, "fresh", s)
				if got := writeArchive(t, txn, w, c.docs); !bytes.Equal(got, want) {
					t.Fatalf("new writer: %d bytes differ from the reference's %d", len(got), len(want))
				}
				for _, b := range befores {
					emptyPools()
					enc, bw := b.before(t, filepath.Join(dir, b.name), s)
					txn, w := openArchive(t, dir, b.name, s)
					if reusedBuffer := w.bw == bw; !reusedBuffer {
						poolMissed(t, b.name+": the write buffer")
					}
					if s.format == ArchiveZstd {
						if b.sameSettings && w.enc != enc {
							poolMissed(t, b.name+": the encoder")
						}
						if !b.sameSettings && w.enc == enc {
							t.Fatalf("%s: got the encoder of an archive of other settings", b.name)
						}
					}
					if got := writeArchive(t, txn, w, c.docs); !bytes.Equal(got, want) {
						t.Fatalf("%s: %d bytes differ from a new writer's %d", b.name, len(got), len(want))
					}
				}
			})
		}
	}
}

// poolMissed fails the test: the pool did not hand back what an archive
// gave it, so the bytes compared are not those of a reused encoder or
// buffer. The race detector's sync.Pool drops objects at random: there it
// only skips.
func poolMissed(t *testing.T, what string) {
	t.Helper()
	if raceEnabled {
		t.Skipf("%s was not reused (the race detector's sync.Pool drops objects at random)", what)
	}
	t.Fatalf("%s was not reused", what)
}

// TestArchiveZstdCommand decodes, with the zstd command, archives written
// one after the other through reused encoders at every level, and compares
// them with the documents.
func TestArchiveZstdCommand(t *testing.T) {
	zstdCmd, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("no zstd command on PATH (Debian package zstd)")
	}
	dir := t.TempDir()
	i := 0
	for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		for _, workers := range []int{1, 2} {
			for _, docs := range [][][]byte{archiveDocs(10+i, 1, 900), nil, archiveDocs(20+i, 600, 1024), archiveDocs(30+i, 2, 700)} {
				i++
				s := archiveSettings{ArchiveZstd, level, workers}
				name := fmt.Sprintf("a%02d", i)
				txn, w := openArchive(t, dir, name, s)
				writeArchive(t, txn, w, docs)
				path := txn.Path(txn.Files()[0])
				var stderr strings.Builder
				cmd := exec.Command(zstdCmd, "-d", "-c", "-q", path)
				cmd.Stderr = &stderr
				got, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s %s: zstd -d: %v: %s", s, name, err, stderr.String())
				}
				if want := archiveLines(docs); !bytes.Equal(got, want) {
					t.Fatalf("%s %s: zstd -d gives %d bytes, want the %d of the documents", s, name, len(got), len(want))
				}
			}
		}
	}
}

// TestArchiveWriterAfterClose: a second Close returns the first one's
// result, and a Write after Close writes nothing (the buffer is another
// archive's by then) and says so.
func TestArchiveWriterAfterClose(t *testing.T) {
	for _, format := range []ArchiveFormat{ArchiveZstd, ArchiveJSONL} {
		dir := t.TempDir()
		txn, w := openArchive(t, dir, "a", archiveSettings{format, zstd.SpeedDefault, 2})
		want := referenceArchive(t, format, zstd.SpeedDefault, 2, [][]byte{[]byte(`{"id":"a"}`)})
		if err := w.Write([]byte(`{"id":"a"}`)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("%s: second Close: %v", format, err)
		}
		if err := w.Write([]byte(`{"id":"b"}`)); !errors.Is(err, os.ErrClosed) {
			t.Errorf("%s: Write after Close: %v, want os.ErrClosed", format, err)
		}
		// The next archive, which may have the buffer and encoder now.
		txn2, w2 := openArchive(t, dir, "b", archiveSettings{format, zstd.SpeedDefault, 2})
		writeArchive(t, txn2, w2, nil)
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(txn.Path(txn.Files()[0]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the archive changed after Close", format)
		}
	}
}
