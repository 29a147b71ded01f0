package convbeam

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
	"github.com/klauspost/compress/zstd"
)

// countFn counts the LF bytes of a byte-range shard.
type countFn struct {
	// S are the job's settings (the inputs' retries, InputTries and
	// InputStallTimeout).
	S Settings

	src     *source.Client
	release func()
}

// Setup makes the worker's client of the inputs given by URL.
func (f *countFn) Setup() error {
	var err error
	f.src, f.release, err = f.S.InputClient()
	return err
}

// Teardown closes the worker's client.
func (f *countFn) Teardown() {
	if f.release != nil {
		f.release()
		f.src, f.release = nil, nil
	}
}

// ProcessElement emits the shard's LineCount; a whole-input shard has none.
func (f *countFn) ProcessElement(ctx context.Context, sh Shard, emit func(LineCount)) error {
	if !sh.Split {
		return nil
	}
	rc, err := openShard(ctx, f.src, sh, sh.Start, sh.End-sh.Start)
	if err != nil {
		return f.failed(ctx, sh, codes.FaultOpenError, fmt.Errorf("%s: %w", sh.Path, err), emit)
	}
	defer rc.Close()
	n, err := stream.CountNewlines(io.LimitReader(rc, sh.End-sh.Start))
	if err == nil {
		// A local file written since the plan: its lines may be of
		// neither version (source.ErrChanged, the job fails).
		err = rc.ended()
	}
	if err != nil {
		return f.failed(ctx, sh, codes.FaultReadError, fmt.Errorf("%s: bytes %d to %d: %w", sh.Path, sh.Start, sh.End, err), emit)
	}
	emit(LineCount{Input: sh.Input, Index: sh.Index, Newlines: n, Start: sh.Start})
	return nil
}

// failed handles a count that failed with err: an input fault of reason
// (the store's outage, after the inputs' retries) is emitted as the
// shard's failed LineCount, as convbatch run reports an input it cannot
// read and goes on with the others; the context's end, or an input no
// longer the version planned (an object, a local file written since the
// plan: source.ErrChanged, as readFn.frame), is returned and fails the
// job.
func (f *countFn) failed(ctx context.Context, sh Shard, reason codes.InputFault, err error, emit func(LineCount)) error {
	if ctx.Err() != nil || errors.Is(err, source.ErrChanged) {
		return err
	}
	c := LineCount{Input: sh.Input, Index: sh.Index, Start: sh.Start, Reason: reason.String(), Status: faultStatus(err)}
	log.Warnf(ctx, "convbeam: counting lines: %v: the input's shards after it report %s", err, reason)
	emit(c)
	return nil
}

// faultStatus is the HTTP status of the store's answer that ended an
// input's reading, as err carries it (a source.Error's Status, as
// convbatch run reports it in sink.InputFault), 0 if none.
func faultStatus(err error) int {
	var se *source.Error
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// abandoned counts the attempts the Fault hook abandoned.
var abandoned = beam.NewCounter("convbeam", "abandoned_attempts")

// readFn reads one shard: it frames the shard's lines, runs the handlers,
// counts and writes each record as convbatch run does (pipeline.Tally,
// pipeline.SegmentOutputs) into a local staging directory, uploads the
// files under the job's temporary directory with a name no other attempt
// uses, and emits what the rest of the job needs.
type readFn struct {
	S Settings
	// Fault is a test hook for the exactly-once output: "orphan:KEY" makes
	// the first read of the shard whose key (Shard.key) is KEY upload a
	// set of temporary files that it then abandons, as a bundle attempt
	// that failed after writing would; "fail:KEY" makes the read of that
	// shard fail after uploading its files, which fails the job.
	Fault string

	proc  *transform.Processor
	cache *verify.SignatureCache
	tried map[string]bool
	// src reads the inputs and the keyring given by URL, with the job's
	// retries (Settings.InputClient); release closes it.
	src     *source.Client
	release func()
}

// Setup makes the worker's client of the inputs given by URL, loads the
// keyring and makes the worker's handlers.
func (f *readFn) Setup(ctx context.Context) error {
	var err error
	if f.src, f.release, err = f.S.InputClient(); err != nil {
		return err
	}
	var kr *verify.Keyring
	if f.S.Keys != "" {
		if kr, err = loadKeyring(ctx, f.src, f.S.Keys); err != nil {
			f.Teardown()
			return err
		}
	}
	f.cache = verify.NewSignatureCache(verify.DefaultSignatureCacheEntries)
	handlers, err := transform.Standard(f.S.transformOptions(transform.ReceiptOptions{Keyring: kr, SignatureCache: f.cache, JudgeAtResolution: true})).Resolve()
	if err != nil {
		f.Teardown()
		return err
	}
	f.proc = transform.NewProcessor(handlers)
	f.tried = map[string]bool{}
	return nil
}

// Teardown closes the worker's client of the inputs.
func (f *readFn) Teardown() {
	if f.release != nil {
		f.release()
		f.src, f.release = nil, nil
	}
}

// shardRead is one read of a shard into a local staging directory.
type shardRead struct {
	res      ShardResult
	txn      *sink.Txn
	out      *pipeline.SegmentOutputs
	docs     *os.File
	docsBuf  *bufio.Writer
	receipts []*verify.PendingReceipt
	// reading is what the stage's reading of the shard found.
	reading *pipeline.Reading
}

// ProcessElement reads the shard, uploads its files, and emits, in this
// order: its documents' index records in blobs keyed by id bucket, each
// receipt keyed by its position with its references keyed by the
// referenced id's bucket, and the shard's result. Nothing is emitted
// before the read is complete, so a zstd input read again (a frame that
// failed its checksum) emits only the second read.
func (f *readFn) ProcessElement(ctx context.Context, sh Shard, counts func(*LineCount) bool,
	emitDocs func(int, []byte), emitRef func(int, RefTo), emitReceipt func(string, []byte), emitResult func(ShardResult)) error {
	before, fault := linesBefore(sh, counts)
	local, err := os.MkdirTemp("", "convbeam-shard-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(local)
	spool, err := stream.NewSpool(local)
	if err != nil {
		return err
	}
	defer spool.Close()

	// A zstd frame that failed its checksum: read again, its records
	// rejected (as convbatch run does).
	var r *shardRead
	_, err = pipeline.ReadChecked(sh.Path, true, func(damaged []stream.Range) (*pipeline.Reading, error) {
		var err error
		r, err = f.read(ctx, sh, before, fault, local, spool, damaged)
		if err != nil {
			return nil, err
		}
		return r.reading, nil
	}, func() error { return nil })
	if err != nil {
		return err
	}
	if f.Fault == "orphan:"+sh.key() && !f.tried[sh.key()] {
		f.tried[sh.key()] = true
		if _, err := f.uploadFiles(ctx, sh, r); err != nil {
			return err
		}
		abandoned.Inc(ctx, 1)
	}
	files, err := f.uploadFiles(ctx, sh, r)
	if err != nil {
		return err
	}
	if f.Fault == "fail:"+sh.key() {
		return fmt.Errorf("%s: failing on purpose after writing its files (test hook)", sh.key())
	}
	r.res.Files = files

	if err := emitBuckets(filepath.Join(local, "docs.idx"), f.S.buckets(), bucketBudget, emitDocs); err != nil {
		return fmt.Errorf("%s: %w", sh.Path, err)
	}
	for _, p := range r.receipts {
		key := receiptKey(sh.Input, p.Line)
		b, err := p.MarshalJSON()
		if err != nil {
			return err
		}
		emitReceipt(key, b)
		want := map[string]*verify.Evidence{}
		p.AddReferences(want)
		for id := range want {
			emitRef(docindex.Partition([]byte(id), f.S.buckets()), RefTo{ID: id, Key: key})
		}
	}
	r.res.Receipts = int64(len(r.receipts))
	emitResult(r.res)
	return nil
}

// linesBefore is the number of lines of sh's input before the split
// shard sh, from the counts of its shards before it; or, when one of
// those could not be counted, the input fault of the first that failed
// (sh cannot number its lines).
func linesBefore(sh Shard, counts func(*LineCount) bool) (int64, *sink.InputFault) {
	if !sh.Split {
		return 0, nil
	}
	var before int64
	var failed *LineCount
	var c LineCount
	for counts(&c) {
		if c.Input != sh.Input || c.Index >= sh.Index {
			continue
		}
		before += c.Newlines
		if c.Reason != "" && (failed == nil || c.Index < failed.Index) {
			first := c
			failed = &first
		}
	}
	if failed != nil {
		return 0, failed.countFault()
	}
	return before, nil
}

// receiptKey orders receipts as convbatch run lists them: by input, then
// line.
func receiptKey(input int, line int64) string { return fmt.Sprintf("%06d:%015d", input, line) }

// stage is the per-input stage the shards are read with, as convbatch
// run reads its inputs.
func (f *readFn) stage() *pipeline.Stage {
	return &pipeline.Stage{MaxDocBytes: f.S.MaxDocBytes, ZstdMaxWindow: f.S.ZstdMaxWindow, Strict: f.S.Strict,
		Tables: f.S.docTables(), TableOptions: parquetout.TableOptions{Version: pipeline.Version},
		Archive: sink.ArchiveFormat(f.S.Archive), ZstdLevel: zstd.SpeedDefault, ZstdWorkers: 1}
}

// read reads the shard into a fresh local segment, with damaged as
// stream.WithDamaged when not nil; with fault not nil (linesBefore), it
// reads nothing and reports the fault.
func (f *readFn) read(ctx context.Context, sh Shard, before int64, fault *sink.InputFault, local string, spool *stream.Spool, damaged []stream.Range) (*shardRead, error) {
	seg := filepath.Join(local, "seg")
	if err := os.RemoveAll(seg); err != nil {
		return nil, err
	}
	txn, err := sink.NewFlatTxn(seg)
	if err != nil {
		return nil, err
	}
	r := &shardRead{txn: txn, res: ShardResult{Input: sh.Input, Index: sh.Index, Path: sh.Path}}
	if r.docs, err = os.Create(filepath.Join(local, "docs.idx")); err != nil {
		return nil, err
	}
	defer r.docs.Close()
	r.docsBuf = bufio.NewWriterSize(r.docs, 256<<10)
	r.docsBuf.WriteString(docindex.Magic)
	stage := f.stage()
	// The archive piece's name within the shard's flat scratch only (its
	// published name is chosen by the publishing step, PlanArchiveNames).
	archive := ""
	if stage.Archive != sink.ArchiveNone {
		archive = outdir.ArchiveFile(sh.Rel, stage.Archive.Ext())
	}
	if r.out, err = stage.OpenOutputs(txn, outdir.RejectsIndexFile, outdir.RejectsDataFile, archive); err != nil {
		txn.Abort()
		return nil, err
	}
	w := pipeline.NewInputWriter(sh.Path, r.out)
	w.AddDoc = func(id string, hash [32]byte, hashed bool) error {
		_, err := r.docsBuf.Write(docindex.AppendRecord(nil, id, hash, hashed))
		return err
	}
	if err := f.frame(ctx, sh, before, fault, spool, damaged, r, w); err != nil {
		r.out.Abort()
		txn.Abort()
		return nil, err
	}
	err = r.out.Close()
	if err == nil {
		err = r.docsBuf.Flush()
	}
	if err == nil {
		err = txn.Commit()
	}
	if err != nil {
		txn.Abort()
		return nil, fmt.Errorf("%s: %w", sh.Path, err)
	}
	return r, nil
}

// frame reads the shard's records through the per-input stage into r;
// with fault not nil, none: the shard reports the fault.
func (f *readFn) frame(ctx context.Context, sh Shard, before int64, fault *sink.InputFault, spool *stream.Spool, damaged []stream.Range, r *shardRead, w *pipeline.InputWriter) error {
	var bytesRead int64
	stage := f.stage()
	opts := append(stage.ReaderOptions(spool, func(n int) { bytesRead += int64(n) }), stream.WithContext(ctx))
	if damaged != nil {
		opts = append(opts, stream.WithDamaged(damaged))
	}
	from, own := int64(0), int64(-1)
	if sh.Split {
		opts = append(opts, stream.WithShard(sh.Start, sh.End, before))
		from = max(sh.Start-1, 0)
		own = sh.End - from
	}
	r.res.Counters = w.Counters
	if fault != nil {
		// A shard before this one could not be counted: its lines cannot
		// be numbered. An input fault, as an input that cannot be opened.
		r.res.Fault = fault
		r.reading = &pipeline.Reading{First: -1}
		return nil
	}
	src, err := openShard(ctx, f.src, sh, from, own)
	if errors.Is(err, source.ErrChanged) {
		// A local file written since the plan (openPlanned): as an
		// object no longer the version planned, below.
		return fmt.Errorf("%s: %w", sh.Path, err)
	}
	if err != nil {
		// The input cannot be opened: an input fault, as in convbatch run.
		r.res.Fault = &sink.InputFault{Reason: codes.FaultOpenError.String(), Status: faultStatus(err)}
		r.reading = &pipeline.Reading{First: -1}
		return nil
	}
	defer src.Close()
	// An input read whole is hashed as it is read, as convbatch run hashes
	// it, for its fingerprint (a split input's digest step hashes it).
	var in io.Reader = src
	var digest *pipeline.InputDigest
	if !sh.Split {
		digest = pipeline.NewInputDigest(src)
		in = digest
	}
	rd, err := stage.ReadSegment(in, sh.Path, stream.Shape(sh.Shape), opts, f.proc, w, func(p *verify.PendingReceipt) {
		r.receipts = append(r.receipts, p)
	})
	if err != nil {
		return err
	}
	// An input read whole is hashed to its end (Sum reads what the
	// stage left of it), unless a fault ended its reading.
	var sum string
	var sumErr error
	if digest != nil && rd.Fault == nil {
		sum, sumErr = digest.Sum(sh.Size)
	}
	if err := src.ended(); err != nil {
		// A local file written while read: what was read may be of
		// neither version, and its planned fingerprint names neither.
		// The job fails, as for an object changed (below).
		return fmt.Errorf("%s: %w", sh.Path, err)
	}
	r.reading = rd
	r.res.Counts, r.res.Counters, r.res.Documents, r.res.Hashed = w.Counts, w.Counters, w.Documents, w.Hashed
	if rd.First >= 0 {
		r.res.Counts.BytesIn = rd.End - rd.First
	}
	r.res.BytesRead = bytesRead
	if sh.Split {
		// A shard reads a little of its neighbours' bytes to find its first
		// line and end its last: the file's bytes are counted once, by the
		// shard whose lines hold them.
		r.res.BytesRead = r.res.Counts.BytesIn
	}
	if e := rd.Fault; e != nil {
		if errors.Is(e, source.ErrChanged) {
			// The object is no longer the version planned: the job's
			// shards of it would mix two versions, or one input would be
			// read in part. The job fails; a rerun plans the new version.
			return fmt.Errorf("%s: %w", sh.Path, e)
		}
		r.res.Fault = &sink.InputFault{Reason: e.Reason.String(), Offset: e.Offset, Status: faultStatus(e.Err)}
		// Its digest would be of the bytes read, not of the input, and
		// no digest is recorded of an input faulted (outdir's Seal): the
		// rest is not asked of a store that just failed.
		return nil
	}
	if errors.Is(sumErr, source.ErrChanged) {
		return fmt.Errorf("%s: %w", sh.Path, sumErr)
	}
	r.res.SHA256 = sum
	return nil
}

// uploadFiles copies the shard's staged files to a directory of the job's
// temporary directory that no other attempt uses (each file at
// tmp/<job>/<shard attempt>/file-NNNN), and lists them with their places
// in OUT.
func (f *readFn) uploadFiles(ctx context.Context, sh Shard, r *shardRead) ([]TempFile, error) {
	var id [8]byte
	rand.Read(id[:])
	dir := join(f.S.Tmp, sh.key()+"-"+hex.EncodeToString(id[:]))
	rows := map[string]int64{}
	table := map[string]string{}
	if r.out.Tables != nil {
		for name, c := range r.out.Tables.Counts() {
			for _, p := range c.Parts {
				rows[p.Path], table[p.Path] = p.Rows, name
			}
		}
	}
	var files []TempFile
	for i, rel := range r.txn.Files() {
		if _, ok := table[rel]; ok && rows[rel] == 0 {
			// A part without rows: a dataset's one empty part, when it
			// needs one, is written when the job's files are published.
			continue
		}
		// A name of its own, never rel's: a cloud file system takes the
		// path as a URL, so a "%2F" of sink.FlatName would come back a
		// "/" and the file lie deeper than removeTemporary looks.
		tmp := join(dir, fmt.Sprintf("file-%04d", i))
		if err := upload(ctx, r.txn.Path(rel), tmp); err != nil {
			return nil, err
		}
		files = append(files, TempFile{Rel: rel, Temp: tmp, Table: table[rel], Rows: rows[rel]})
	}
	// The segment of the input holds them in OUT's staging (commit.go).
	pending := filepath.Join(filepath.Dir(r.docs.Name()), "receipts.jsonl")
	if err := writePending(pending, r.receipts); err != nil {
		return nil, err
	}
	for i, tf := range []TempFile{{Rel: shardDocsRel, Temp: r.docs.Name()}, {Rel: shardReceiptsRel, Temp: pending}} {
		tmp := join(dir, fmt.Sprintf("state-%04d", i))
		if err := upload(ctx, tf.Temp, tmp); err != nil {
			return nil, err
		}
		tf.Temp = tmp
		files = append(files, tf)
	}
	return files, nil
}

// bucketBudget is how many bytes of index records a shard holds per
// bucket set before it emits them: a shard of millions of tiny documents
// emits several blobs per bucket rather than holding them all.
const bucketBudget = 32 << 20

// emitBuckets emits the records of the shard's index file partitioned by
// id (docindex.Partition over n buckets), each blob a docindex partition
// file: one element per bucket and shard, not one per document, or more
// when the shard's records pass budget bytes.
func emitBuckets(path string, n, budget int, emit func(int, []byte)) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd := docindex.NewReader(bufio.NewReaderSize(fh, 256<<10))
	bufs := make([][]byte, n)
	held := 0
	flush := func() {
		for i, b := range bufs {
			if len(b) > len(docindex.Magic) {
				emit(i, b)
			}
			bufs[i] = nil
		}
		held = 0
	}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			flush()
			return nil
		}
		if err != nil {
			return err
		}
		i := docindex.Partition(rec.ID, n)
		if bufs[i] == nil {
			bufs[i] = append(make([]byte, 0, 4<<10), docindex.Magic...)
		}
		before := len(bufs[i])
		bufs[i] = docindex.AppendRecord(bufs[i], string(rec.ID), rec.Hash, rec.Hashable)
		if held += len(bufs[i]) - before; held >= budget {
			flush()
		}
	}
}
