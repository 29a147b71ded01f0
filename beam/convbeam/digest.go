package convbeam

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/source"
)

// An input's SHA-256 goes into OUT's state (outdir.Fingerprint), as
// convbatch run records it, so that a later incremental run can hold an
// input by its digest (convbatch run --incremental --checksum; the same
// bytes under another path). A shard that reads the whole input hashes
// it as it reads (readFn.frame). A SHA-256 cannot be combined from the
// digests of byte ranges, so an input read in byte-range shards is read
// once more, whole, by the job's digest step (digestFn), one element per
// split input, which runs beside the counts and reads of its shards: the
// job's wall grows only when one input's sequential hashing outlasts the
// reading of all shards (docs/SCALE-OUT.md gives the measured cost).

// Digest is the SHA-256 of a split input's bytes, lowercase hex, from the
// digest step; "" when they could not all be read.
type Digest struct {
	Input  int
	SHA256 string
}

// digestFn hashes the whole input of a split input's first shard: the
// same reader as convbatch run's (pipeline.InputDigest), an input by URL
// through the job's client (Settings.InputClient) and pinned to the
// version the plan listed.
type digestFn struct {
	// S are the job's settings (the inputs' retries).
	S Settings

	src     *source.Client
	release func()
}

// Setup makes the worker's client of the inputs given by URL.
func (f *digestFn) Setup() error {
	var err error
	f.src, f.release, err = f.S.InputClient()
	return err
}

// Teardown closes the worker's client.
func (f *digestFn) Teardown() {
	if f.release != nil {
		f.release()
		f.src, f.release = nil, nil
	}
}

// ProcessElement emits the Digest of sh's input. An object no longer the
// version planned, or a local file written since the plan (its size or
// time at open or at the end of its reading not the plan's), fails the
// job, as a shard's reading of it does (readFn.frame); an input that cannot be read whole (an outage that
// outlasts the inputs' retries) has no digest: it is committed without
// one, as after convbatch extract, and a warning says so.
func (f *digestFn) ProcessElement(ctx context.Context, sh Shard, emit func(Digest)) error {
	sum, err := f.digest(ctx, sh)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, source.ErrChanged) {
			return err
		}
		log.Warnf(ctx, "convbeam: %v: its SHA-256 is not recorded", err)
	}
	emit(Digest{Input: sh.Input, SHA256: sum})
	return nil
}

// digest reads sh's whole input and returns its digest ("" when its
// bytes are not sh.Size).
func (f *digestFn) digest(ctx context.Context, sh Shard) (string, error) {
	rc, err := openShard(ctx, f.src, sh, 0, sh.Size)
	if err != nil {
		return "", fmt.Errorf("%s: %w", sh.Path, err)
	}
	defer rc.Close()
	sum, err := pipeline.NewInputDigest(ctxReader{ctx, rc}).Sum(sh.Size)
	if cerr := rc.ended(); cerr != nil {
		// A local file written while hashed: a digest of neither
		// version (source.ErrChanged, which fails the job).
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", sh.Path, err)
	}
	return sum, nil
}

// ctxReader reads r until ctx ends: a local file's reading (which does
// not take a context) stops with the job.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// digests are the inputs' digests for the publishing step, by input: a
// whole input's from its one shard's result, a split input's from the
// digest step's.
func digests(byInput [][]ShardResult, split func(*Digest) bool) []string {
	out := make([]string, len(byInput))
	for i, shards := range byInput {
		if len(shards) == 1 {
			out[i] = shards[0].SHA256
		}
	}
	var d Digest
	for split(&d) {
		if d.Input >= 0 && d.Input < len(out) && len(byInput[d.Input]) > 1 {
			out[d.Input] = d.SHA256
		}
		d = Digest{}
	}
	return out
}
