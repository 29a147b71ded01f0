package convbeam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// DefaultShardBytes is the size of a plain JSONL input's byte-range shards.
const DefaultShardBytes = 64 << 20

// ErrNoInput is returned when the globs match no input file.
var ErrNoInput = errors.New("no input")

// ErrOutputExists is returned when the output directory already holds a
// report (on object storage: a commit): convbeam writes into a new
// directory, it does not replace one, unless it adds to it
// (NewIncrementalSettings).
var ErrOutputExists = errors.New("output directory holds a report already")

// ErrOutputKind is returned for an output that is neither a local
// directory nor an OUT on object storage (s3://, gs://).
var ErrOutputKind = errors.New("OUT is a local directory, s3://bucket/prefix or gs://bucket/prefix")

// Plan is what the job reads: the inputs, sorted by path, their shards and
// the files the globs matched that are not inputs.
type Plan struct {
	Inputs  []stream.Input
	Skipped []stream.Skipped
	Shards  []Shard
	// Named are every input the globs named, when an incremental job
	// left out those OUT holds (Continue); nil otherwise.
	Named []stream.Input
}

// MakePlan lists the globs, names the inputs as convbatch does and cuts
// each into shards: a plain JSONL file larger than shardBytes into byte
// ranges, any other input whole. A URL (s3://, gs://, https://, http://)
// is listed and stat'ed through c (Settings.InputClient, with the job's
// tries and stall timeout; nil is source.Default()), as convbatch run
// lists it (stream.ExpandURLWith), each object's version recorded in its
// shards; any other glob through Beam's file systems (stream.MatchInput).
// The names are then made unique over all inputs (stream.Disambiguate).
// A local file's size and modification time are taken by one stat and
// recorded in its shards (Shard.ModTimeNanos): every reading of it checks
// them, and OUT records them as its fingerprint.
func MakePlan(ctx context.Context, c *source.Client, globs []string, shardBytes int64) (*Plan, error) {
	if shardBytes <= 0 {
		shardBytes = DefaultShardBytes
	}
	if c == nil {
		c = source.Default()
	}
	p := &Plan{}
	seen := map[string]bool{}
	mtimes := map[string]int64{} // each local input's, by path
	for _, glob := range globs {
		if glob == "" {
			continue
		}
		if source.IsURL(glob) {
			// Objects and web servers' files are listed and read through
			// package source, as convbatch run reads them: a shard reads
			// its own byte range, pinned to the version listed here.
			found, passed, err := stream.ExpandURLWith(ctx, c, glob)
			if err != nil {
				return nil, err
			}
			for _, in := range found {
				if !seen[in.Path] {
					seen[in.Path] = true
					p.Inputs = append(p.Inputs, in)
				}
			}
			p.Skipped = append(p.Skipped, passed...)
			continue
		}
		fsys, err := filesystem.New(ctx, glob)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", glob, err)
		}
		files, err := fsys.List(ctx, glob)
		if err != nil {
			fsys.Close()
			return nil, fmt.Errorf("input %q: %w", glob, err)
		}
		sort.Strings(files)
		n := 0
		for _, f := range files {
			if seen[f] {
				continue
			}
			seen[f] = true
			size, mtime, err := planStat(ctx, fsys, f)
			if err != nil {
				fsys.Close()
				return nil, fmt.Errorf("input %q: %w", f, err)
			}
			in, skipped, ok := stream.MatchInput(f, size)
			if !ok {
				p.Skipped = append(p.Skipped, skipped)
				continue
			}
			p.Inputs = append(p.Inputs, in)
			mtimes[f] = mtime
			n++
		}
		fsys.Close()
		if n == 0 {
			return nil, fmt.Errorf("input %q: %w: the pattern matches no .jsonl, .jsonl.zst, .jsonl.gz or .json file", glob, ErrNoInput)
		}
	}
	sort.Slice(p.Inputs, func(i, j int) bool { return p.Inputs[i].Path < p.Inputs[j].Path })
	if err := stream.Disambiguate(p.Inputs); err != nil {
		return nil, err
	}
	for i, in := range p.Inputs {
		base := Shard{Input: i, Path: in.Path, Rel: in.Rel, Shape: uint8(in.Shape), Count: 1, Size: in.Size, ModTimeNanos: mtimes[in.Path]}
		if in.Object != nil {
			base.Object = objectVersion(in.URL, in.Object)
		}
		if in.Shape != stream.ShapeJSONL || in.Size <= shardBytes {
			p.Shards = append(p.Shards, base)
			continue
		}
		count := int((in.Size + shardBytes - 1) / shardBytes)
		for k := range count {
			s := base
			s.Index, s.Count, s.Split = k, count, true
			s.Start = int64(k) * shardBytes
			s.End = min(s.Start+shardBytes, in.Size)
			p.Shards = append(p.Shards, s)
		}
	}
	return p, nil
}

// planStat returns the size of the file f on fsys, and for a local file
// its modification time too, from the same stat (0 on another file
// system).
func planStat(ctx context.Context, fsys filesystem.Interface, f string) (size, mtime int64, err error) {
	if !isLocal(f) {
		size, err = fsys.Size(ctx, f)
		return size, 0, err
	}
	st, err := os.Stat(f)
	if err != nil {
		return 0, 0, err
	}
	return st.Size(), st.ModTime().UnixNano(), nil
}

// NewSettings checks the choices of a job writing to output and returns
// its Settings, with a new temporary directory name and the handlers'
// names, the limits and the inputs' retries at their defaults. It refuses
// an output directory that holds a report.
func NewSettings(ctx context.Context, output, keys, tables, archive string) (*Settings, error) {
	return newSettings(ctx, output, keys, tables, archive, false)
}

// NewIncrementalSettings is NewSettings for a job that adds to OUT, local
// or on object storage (Settings.Incremental, convbatch run
// --incremental's meaning): OUT may hold a report.
func NewIncrementalSettings(ctx context.Context, output, keys, tables, archive string) (*Settings, error) {
	return newSettings(ctx, output, keys, tables, archive, true)
}

func newSettings(ctx context.Context, output, keys, tables, archive string, incremental bool) (*Settings, error) {
	if output == "" {
		return nil, errors.New("--output is required")
	}
	names, err := tabledef.Parse(tables)
	if err != nil {
		return nil, err
	}
	format, err := sink.ParseArchiveFormat(archive)
	if err != nil {
		return nil, err
	}
	output = strings.TrimSuffix(output, "/")
	exists := false
	switch {
	case isLocal(output):
		// A path that cannot hold a report (below a file) is refused by
		// the command's check of OUT, which names the file.
		_, err := os.Stat(filepath.Join(output, outdir.ReportFile))
		exists = err == nil
	case objout.IsURL(output):
		// An OUT on object storage holds a report once it holds a
		// commit (objout): the newest commit names it.
		t, err := objout.Open(ctx, output)
		if err != nil {
			return nil, fmt.Errorf("--output: %w", err)
		}
		c, err := t.Latest(ctx)
		if err != nil {
			return nil, err
		}
		exists = c != nil
	default:
		return nil, fmt.Errorf("--output %s: %w", source.RedactURL(output), ErrOutputKind)
	}
	if exists && !incremental {
		return nil, fmt.Errorf("%s: %w", source.RedactURL(output), ErrOutputExists)
	}
	var id [8]byte
	rand.Read(id[:])
	s := &Settings{Output: output, Keys: keys, Tables: names, Archive: string(format),
		MaxDocBytes: stream.DefaultMaxDocBytes, MaxDepth: 0, ZstdMaxWindow: stream.DefaultZstdMaxWindow,
		ShardBytes: DefaultShardBytes, Tmp: join(tmpRoot(output), hex.EncodeToString(id[:])), Incremental: incremental,
		InputTries: source.DefaultTries, InputStallTimeout: source.DefaultStallTimeout}
	reg := transform.Standard(s.transformOptions(transform.ReceiptOptions{}))
	handlers, err := reg.Resolve()
	if err != nil {
		return nil, err
	}
	for _, h := range handlers {
		s.Handlers = append(s.Handlers, h.Manifest().Name)
	}
	return s, nil
}

// transformOptions are the handlers' options: every check, as convbatch run
// does, and the rows of the document tables asked for.
func (s *Settings) transformOptions(rec transform.ReceiptOptions) transform.Options {
	return transform.Options{Receipts: rec, Extract: len(s.Tables) > 0, MaxDepth: s.MaxDepth, Tables: s.Tables}
}
