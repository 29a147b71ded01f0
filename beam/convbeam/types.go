package convbeam

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// Settings are the job's choices, carried by every DoFn that needs them
// (Beam serializes a DoFn's exported fields as JSON).
type Settings struct {
	// Output is OUT: a local directory, or an OUT on object storage
	// (s3://bucket/prefix, gs://bucket/prefix) that package objout
	// commits to, as convbatch run -o s3://… does.
	Output string
	// Keys is the keyring file, "" for none.
	Keys string
	// Tables are the tables to write (tabledef.Parse).
	Tables []string
	// Archive is the archive write-back format (sink.ArchiveFormat).
	Archive string
	// ShardBytes is the size of a plain JSONL file's byte-range shards.
	ShardBytes int64
	// MaxDocBytes, MaxDepth, ZstdMaxWindow and Strict are convbatch run's
	// limits of the same names.
	MaxDocBytes   int64
	MaxDepth      int
	ZstdMaxWindow uint64
	Strict        bool
	// Tmp is the job's temporary directory under Output, unique per job.
	Tmp string
	// Handlers are the names of the handlers, in order (for the report).
	Handlers []string
	// IDBuckets is the number of buckets the documents' ids are
	// partitioned into for the receipt pass (DefaultIDBuckets when 0).
	IDBuckets int
	// TableFormat lays the tables out as Parquet datasets ("parquet",
	// or "" for the same) or Apache Iceberg tables ("iceberg"), as
	// convbatch run --table-format does (outdir.TableFormat).
	TableFormat string
	// Incremental adds the job's inputs to what the local OUT holds, as
	// convbatch run --incremental does: the inputs OUT holds already are
	// left out of the plan (Plan.Continue), and the receipts are resolved
	// against every document OUT holds.
	Incremental bool
	// CheckpointKeyFile, when set, is the note signer key file that signs
	// the checkpoint of OUT's history at the commit (convbatch run
	// --checkpoint-key); read by the publishing step, never carried.
	CheckpointKeyFile string
	// ScratchDir is, for an OUT on object storage (s3://, gs://), the
	// local directory under which the publishing step makes the scratch
	// OUT of the newest commit and downloads the shards' files (convbatch
	// run --scratch-dir); "" for the system's temporary directory of the
	// machine it runs on.
	ScratchDir string
	// InputTries and InputStallTimeout are the retries of the inputs and
	// of a keyring given by URL (s3://, gs://, https://, http://), as
	// convbatch run --input-tries and --input-stall-timeout: how often a
	// request is tried in a row without a byte of progress before a
	// transient failure is given up, and how long a request may go
	// without a byte before it is abandoned and tried again. 0 is the
	// default (source.DefaultTries, source.DefaultStallTimeout). The
	// plan's listings and every DoFn that reads an input or the keyring
	// go through a client made of them (InputClient); the duration
	// travels to the workers as its nanoseconds.
	InputTries        int
	InputStallTimeout time.Duration
}

// DefaultIDBuckets is the number of id buckets of the receipt pass: each
// shard emits at most this many blobs of index records, and the step that
// joins one bucket holds about 1/DefaultIDBuckets of the distinct ids.
const DefaultIDBuckets = 256

func (s *Settings) buckets() int {
	if s.IDBuckets <= 0 {
		return DefaultIDBuckets
	}
	return s.IDBuckets
}

// docTables are the tables written from documents (every table but those
// of receipts, receipts and receipt_statements, written when receipts are
// resolved).
func (s *Settings) docTables() []string { return tabledef.Select(s.Tables, tabledef.FromDocument) }

// Shard is one unit of reading: a whole input, or a byte range of a plain
// JSONL input that frames the lines beginning in it.
type Shard struct {
	// Input is the input's position in the plan (inputs sorted by path).
	Input int
	// Path is the input's path or URL; Rel its name (stream.Input.Rel).
	Path, Rel string
	// Shape is the input's stream.Shape.
	Shape uint8
	// Index is the shard's position within its input, from 0; Count the
	// input's number of shards.
	Index, Count int
	// Start and End are the byte range of a split input; both 0 for an
	// input read whole.
	Start, End int64
	// Size is the input's size as planned (-1 for an object whose server
	// did not say): its digest is of that many bytes, or none.
	Size int64
	// ModTimeNanos is a local input's modification time as planned, in
	// nanoseconds since the Unix epoch (0 for the others: an object's is
	// Object's). With Size it is the version every reading of the file
	// must find (openPlanned) and the fingerprint OUT records of it.
	ModTimeNanos int64
	// Split says the input is read in byte ranges.
	Split bool
	// Object is set for an input by URL (s3://, gs://, https://): the
	// version of the object the plan listed, which every shard's ranged
	// reads are pinned to (package source).
	Object ObjectVersion
}

// ObjectVersion is a source.Info in a form Beam encodes: the URL the
// object is read by (it may hold a signed URL's query and is never
// printed), its size, ETag or generation, and modification time. URL is
// "" for an input on a Beam file system.
type ObjectVersion struct {
	URL        string
	Size       int64
	ETag       string
	Generation int64
	// ModTimeNanos is the modification time in nanoseconds since the Unix
	// epoch, 0 when unknown.
	ModTimeNanos int64
}

// objectVersion is info as an ObjectVersion read by url.
func objectVersion(url string, info *source.Info) ObjectVersion {
	v := ObjectVersion{URL: url, Size: info.Size, ETag: info.ETag, Generation: info.Generation}
	if !info.ModTime.IsZero() {
		v.ModTimeNanos = info.ModTime.UnixNano()
	}
	return v
}

// info is the source.Info that v names.
func (v ObjectVersion) info() (source.Info, error) {
	loc, err := source.Parse(v.URL)
	if err != nil {
		return source.Info{}, err
	}
	info := source.Info{Location: loc, Size: v.Size, ETag: v.ETag, Generation: v.Generation}
	if v.ModTimeNanos != 0 {
		info.ModTime = time.Unix(0, v.ModTimeNanos).UTC()
	}
	return info, nil
}

// key is the shard's name in temporary files, unique within a job.
func (s *Shard) key() string { return fmt.Sprintf("i%06d-s%06d", s.Input, s.Index) }

// LineCount is the number of LF bytes in one byte-range shard, or why
// they could not be counted.
type LineCount struct {
	Input, Index int
	Newlines     int64
	// Start is the shard's first byte.
	Start int64
	// Reason is "" for a shard counted; for one whose bytes could not be
	// opened or read (a store's outage, after the inputs' retries), the
	// input fault code (codes.FaultOpenError, codes.FaultReadError). The
	// input's shards after it cannot number their lines: each reports
	// the input fault (countFault) and reads nothing.
	Reason string
	// Status is the HTTP status of the store's answer that failed the
	// count, 0 if none.
	Status int
}

// countFault is the input fault of a failed count: its reason and
// status, at the shard's first byte.
func (c *LineCount) countFault() *sink.InputFault {
	return &sink.InputFault{Reason: c.Reason, Offset: c.Start, Status: c.Status}
}

// Evidence is verify.Evidence in a form Beam encodes (no arrays).
type Evidence struct {
	Documents, Hashed int64
	Hash              []byte
	Ambiguous         bool
}

func toEvidence(e *verify.Evidence) Evidence {
	return Evidence{Documents: e.Documents, Hashed: e.Hashed, Hash: append([]byte(nil), e.Hash[:]...), Ambiguous: e.Ambiguous}
}

func (e *Evidence) verify() verify.Evidence {
	v := verify.Evidence{Documents: e.Documents, Hashed: e.Hashed, Ambiguous: e.Ambiguous}
	copy(v.Hash[:], e.Hash)
	return v
}

// RefTo is a receipt's reference to an id: the id and the receipt's key.
type RefTo struct {
	ID, Key string
}

// IDEvidence is what the documents say about one id a receipt references.
type IDEvidence struct {
	ID       string
	Evidence Evidence
}

// TempFile is one file a shard wrote, at a temporary path, with its final
// place: Rel is its path relative to the output directory as the shard's
// sink.Txn named it (tables/<name>/part-NNNNN.parquet, the archive,
// rejects/rejects.jsonl or .bin), Table the table of a part.
type TempFile struct {
	Rel   string
	Temp  string
	Table string
	Rows  int64
}

// ShardResult is what one shard's read produced: its counts and counters,
// its files, and for the last shard of an input the input's fault, if any.
// It goes to the publishing step as JSON (its maps and nested structs).
type ShardResult struct {
	Input, Index int
	Path         string
	Counts       sink.Counts
	Counters     sink.Counters
	// BytesRead is the bytes read from the file (compressed, for .zst).
	BytesRead int64
	// Documents and Hashed count the shard's documents and those with a
	// transcript hash.
	Documents, Hashed int64
	// Receipts counts the shard's receipts.
	Receipts int64
	// SHA256 is the digest of the input's bytes, lowercase hex, read by a
	// shard that reads the whole input (not Split), as convbatch run
	// hashes an input (pipeline.InputDigest); "" for a split input's shard
	// (the job's digest step hashes it) or when the input was not read
	// whole, as planned and without a fault.
	SHA256 string `json:",omitempty"`
	Fault  *sink.InputFault
	Files  []TempFile
}

// Resolved is a receipt's verdict, keyed for ordering by its position.
type Resolved struct {
	Key    string
	Result verify.ReceiptResult
	// SignedAtMicros, EnvelopeKeyFingerprint and Statements are
	// Result's, which its JSON leaves out.
	SignedAtMicros         int64
	EnvelopeKeyFingerprint string
	Statements             []verify.StatementKey
}

// IDStats counts the documents and distinct ids of the whole input, for
// the duplicate-id warning.
type IDStats struct {
	Documents, Distinct int64
}

func init() {
	beam.RegisterCoder(reflect.TypeFor[ShardResult](), encodeShardResult, decodeShardResult)
	beam.RegisterCoder(reflect.TypeFor[Resolved](), encodeResolved, decodeResolved)
	beam.RegisterType(reflect.TypeFor[Shard]())
	beam.RegisterType(reflect.TypeFor[ObjectVersion]())
	beam.RegisterType(reflect.TypeFor[LineCount]())
	beam.RegisterType(reflect.TypeFor[Evidence]())
	beam.RegisterType(reflect.TypeFor[IDEvidence]())
	beam.RegisterType(reflect.TypeFor[RefTo]())
	beam.RegisterType(reflect.TypeFor[IDStats]())
	beam.RegisterType(reflect.TypeFor[Digest]())
}

// ShardResult and Resolved go as JSON: Beam's schema coder does not take
// their maps of counters and the root module's nested structs. They are
// few (one per shard, one per receipt). Each coder is a named function:
// Beam finds coders by name on the workers.

func encodeShardResult(v ShardResult) ([]byte, error) { return json.Marshal(v) }

func decodeShardResult(b []byte) (ShardResult, error) {
	var v ShardResult
	err := json.Unmarshal(b, &v)
	return v, err
}

func encodeResolved(v Resolved) ([]byte, error) {
	v.SignedAtMicros = v.Result.SignedAtMicros
	v.EnvelopeKeyFingerprint, v.Statements = v.Result.EnvelopeKeyFingerprint, v.Result.Statements
	return json.Marshal(v)
}

func decodeResolved(b []byte) (Resolved, error) {
	var v Resolved
	err := json.Unmarshal(b, &v)
	v.Result.SignedAtMicros = v.SignedAtMicros
	v.Result.EnvelopeKeyFingerprint, v.Result.Statements = v.EnvelopeKeyFingerprint, v.Statements
	return v, err
}
