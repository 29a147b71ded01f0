package pipeline

import (
	"fmt"
	"io"
	"slices"

	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
	"github.com/klauspost/compress/zstd"
)

// The per-input stage: read one input (or, in the Beam module, one shard),
// check and process each record, and write it into the input's staging
// segment. convbatch's pool runs its steps on three kinds of goroutine (the
// reader frames with Stage.ReaderOptions, the workers call
// transform.Processor.ProcessBatch, the writer an InputWriter); convbeam's
// read DoFn runs them in sequence with Stage.ReadSegment. Both read a
// damaged zstd input twice through ReadChecked. Neither keeps framing
// options, output wiring or per-record logic of its own.

// Stage is what the per-input stage needs to know of the run: how to frame
// the inputs and which outputs their records go to.
type Stage struct {
	// MaxDocBytes, ZstdMaxWindow and Strict are the framing limits
	// (Config's fields of the same names); BatchBytes the target size of
	// a batch (0: stream's default).
	MaxDocBytes   int64
	ZstdMaxWindow uint64
	Strict        bool
	BatchBytes    int
	// Tables are the tables written per document (every table but
	// receipts), TableOptions their Parquet options.
	Tables       []string
	TableOptions parquetout.TableOptions
	// Archive is the write-back format, ZstdLevel and ZstdWorkers its
	// compression's level and concurrency.
	Archive     sink.ArchiveFormat
	ZstdLevel   zstd.EncoderLevel
	ZstdWorkers int
}

// ReaderOptions are the stream options every reading of an input uses:
// the framing limits, the spool for too-large lines (nil: counted and
// dropped) and a counter of the bytes read (nil: none).
func (s *Stage) ReaderOptions(spool *stream.Spool, count func(int)) []stream.Option {
	opts := []stream.Option{
		stream.WithMaxDocBytes(s.MaxDocBytes),
		stream.WithStrict(s.Strict),
		stream.WithZstdMaxWindow(s.ZstdMaxWindow),
	}
	if s.BatchBytes > 0 {
		opts = append(opts, stream.WithBatch(s.BatchBytes, stream.DefaultBatchRecords))
	}
	if spool != nil {
		opts = append(opts, stream.WithSpool(spool))
	}
	if count != nil {
		opts = append(opts, stream.WithByteCounter(count))
	}
	return opts
}

// OpenOutputs opens an input's outputs in txn, its segment's transaction:
// the rejects, the document tables (without the empty part a table with no
// rows would get: the commit writes a dataset's one empty part when it
// needs one) and, unless the run writes none, the archive as archiveName
// (outdir.ArchiveFile).
func (s *Stage) OpenOutputs(txn *sink.Txn, rejectsIndex, rejectsData, archiveName string) (*SegmentOutputs, error) {
	out := new(SegmentOutputs)
	var err error
	if out.Rejects, err = sink.NewRejectWriter(txn, rejectsIndex, rejectsData); err != nil {
		return nil, err
	}
	if len(s.Tables) > 0 {
		opts := s.TableOptions
		opts.NoEmptyPart = true
		out.Tables = parquetout.NewTables(txn, s.Tables, opts)
	}
	if out.Archive, err = s.OpenArchive(txn, archiveName); err != nil {
		out.Abort()
		return nil, err
	}
	return out, nil
}

// OpenArchive opens an input's archive in txn as archiveName, nil when the
// run writes none: the next input's of a segment that holds several.
func (s *Stage) OpenArchive(txn *sink.Txn, archiveName string) (*sink.ArchiveWriter, error) {
	if s.Archive == sink.ArchiveNone {
		return nil, nil
	}
	return sink.NewArchiveWriter(txn, archiveName, s.Archive, s.ZstdLevel, max(1, s.ZstdWorkers))
}

// InputWriter counts and writes the records of one input (or shard) into
// its segment, after the handlers processed them.
type InputWriter struct {
	// Path is the input's path as named, the file its rows and rejects
	// name.
	Path string
	// Out are the segment's outputs.
	Out *SegmentOutputs
	// AddDoc, if set, takes each document's index record (its id and
	// transcript hash).
	AddDoc func(id string, hash [32]byte, hashed bool) error
	// Counts and Counters are what the records added (Tally); Documents
	// and Hashed count the documents and those with a transcript hash.
	Counts            sink.Counts
	Counters          sink.Counters
	Documents, Hashed int64
}

// NewInputWriter returns the writer of input path's records into out.
func NewInputWriter(path string, out *SegmentOutputs) *InputWriter {
	return &InputWriter{Path: path, Out: out, Counters: sink.NewCounters()}
}

// Write counts one processed record and writes it: a reject to the
// rejects, a document to the tables and the archive, with its index
// record. It returns the record's class and, for a document with a
// receipt, its pending receipt (resolved at the end of the run). A handler
// that panicked is an error naming the input.
func (w *InputWriter) Write(rec *stream.Record, res *transform.Result) (Class, *verify.PendingReceipt, error) {
	if res.Panic != nil {
		return 0, nil, fmt.Errorf("%s: %w", w.Path, res.Panic)
	}
	class := Tally(&w.Counts, &w.Counters, rec, res)
	switch class {
	case ClassReject:
		return class, nil, w.Out.WriteReject(w.Path, rec, res)
	case ClassDocument:
		w.Documents++
		if res.Hashed {
			w.Hashed++
		}
		if w.AddDoc != nil {
			if err := w.AddDoc(res.ID, res.Hash, res.Hashed); err != nil {
				return class, nil, err
			}
		}
		var p *verify.PendingReceipt
		if res.Receipt != nil {
			p = &verify.PendingReceipt{File: w.Path, Line: rec.Line, Check: res.Receipt}
		}
		return class, p, w.Out.WriteDocument(w.Path, rec, res)
	}
	return class, nil, nil
}

// Reading is what one reading of an input found besides its records: the
// framing's accounting and fault, and the zstd frames or gzip members
// whose checksum failed.
type Reading struct {
	// Lines are the lines framed; End is the reader's offset at the end,
	// First the offset of the first record (-1 when there is none): a
	// shard's lines span End-First bytes.
	Lines, First, End int64
	// Fault is the input's fault, nil when it was read to its end.
	Fault *stream.InputError
	// Damaged are the ranges of the zstd frames or gzip members whose
	// checksum failed (stream.Reader.DamagedRanges).
	Damaged []stream.Range
}

// ReadSegment frames the input src (named path, of the given shape) with
// the stage's options and opts, processes each batch with proc and writes
// every record through w; receipt, if set, takes each pending receipt. It
// is the whole stage run in sequence, as convbeam's read DoFn runs it.
func (s *Stage) ReadSegment(src io.Reader, path string, shape stream.Shape, opts []stream.Option, proc *transform.Processor, w *InputWriter, receipt func(*verify.PendingReceipt)) (*Reading, error) {
	rd, err := stream.NewReader(src, path, shape, opts...)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var batch stream.Batch
	var results []transform.Result
	first := int64(-1)
	for {
		err := rd.ReadBatch(&batch)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		results = proc.ProcessBatch(batch.Recs, results)
		if first < 0 && len(batch.Recs) > 0 {
			first = batch.Recs[0].Offset
		}
		for i := range batch.Recs {
			_, p, err := w.Write(&batch.Recs[i], &results[i])
			if err != nil {
				return nil, err
			}
			if p != nil && receipt != nil {
				receipt(p)
			}
		}
	}
	return &Reading{Lines: rd.Lines(), First: first, End: rd.Offset(), Fault: rd.InputErr(), Damaged: rd.DamagedRanges()}, nil
}

// ReadChecked reads an input with read, and when a zstd frame or gzip
// member failed its checksum and again (the input can be read again: not
// standard input), forgets that reading (forget) and reads the input a
// second time with the damaged frames' or members' ranges
// (stream.WithDamaged), so that every line of a damaged frame or member is
// a reject (input-checksum) and nothing derived from its bytes is
// published. The second reading must find the same frames or members
// damaged, or the input changed while it was read. It returns the last
// reading.
func ReadChecked(path string, again bool, read func(damaged []stream.Range) (*Reading, error), forget func() error) (*Reading, error) {
	r, err := read(nil)
	if err != nil || len(r.Damaged) == 0 || !again {
		return r, err
	}
	damaged := r.Damaged
	if err := forget(); err != nil {
		return nil, err
	}
	if r, err = read(damaged); err != nil {
		return nil, err
	}
	if !slices.Equal(r.Damaged, damaged) {
		return nil, fmt.Errorf("%s: the input changed while it was read (its damaged frames or members differ between two readings)", path)
	}
	return r, nil
}
