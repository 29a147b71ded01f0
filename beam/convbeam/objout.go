package convbeam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// A job into an OUT on object storage (s3://bucket/prefix,
// gs://bucket/prefix) publishes as convbatch run -o s3://… does (package
// objout, docs/FORMAT.md "OUT on object storage"): the publishing step
// makes the scratch OUT of the newest commit under Settings.ScratchDir,
// downloads the shards' files there, commits the job into the scratch OUT
// as into a local one (commitOut), then uploads what that commit
// published under run-unique keys and writes the next commit record,
// _commits/NNNNNNNNNN.json, put-if-absent. A job and another run (a
// convbeam job or convbatch run) racing on one prefix: exactly one
// commits, the other fails with the conflict (IsConflict) and publishes
// nothing that a commit names. The shards' own files stay where they
// write them, under OUT's prefix at .convbeam/tmp/, which no commit
// names, and are removed after the commit.

// conflictText opens the message of objout's *ConflictError, which is
// all of it that a runner carries back from the publishing step.
const conflictText = "commit conflict: "

// IsConflict reports whether err, a job's error, is the publishing step's
// refused commit (*objout.ConflictError): another run committed into the
// same OUT on object storage first, and this job published nothing. A
// runner gives back a failed step's error as text, so the text is
// recognized too.
func IsConflict(err error) bool {
	var ce *objout.ConflictError
	return err != nil && (errors.As(err, &ce) || strings.Contains(err.Error(), conflictText))
}

// prepareObject opens the OUT on object storage and makes the scratch
// OUT of its newest commit (objout.Target.Prepare), as convbatch run
// makes it: empty unless the job is incremental, with the table parts of
// the committed inputs among inputs that the job reads again, and an
// incremental job's Iceberg tables of receipts (whose parts holding a
// receipt resolved again the commit rewrites).
func prepareObject(ctx context.Context, s *Settings, inputs []stream.Input) (*objout.Target, *objout.Session, error) {
	t, err := objout.Open(ctx, s.Output)
	if err != nil {
		return nil, nil, fmt.Errorf("--output: %w", err)
	}
	var fetch []string
	if s.iceberg() {
		// The tables' metadata names the objects' keys, read and written
		// through the bucket's store.
		objout.RegisterIO(t)
		if s.Incremental {
			fetch = tabledef.Select(s.Tables, tabledef.FromResolvedReceipts)
		}
	}
	sess, err := t.Prepare(ctx, objout.Options{ScratchRoot: s.ScratchDir, Empty: !s.Incremental, Inputs: inputs, FetchTables: fetch})
	if err != nil {
		return nil, nil, fmt.Errorf("preparing the scratch OUT of %s: %w; nothing was published", t.URL, err)
	}
	return t, sess, nil
}

// beforeObjectCommit, when set (tests), is called once the job is
// committed into the scratch OUT and before it is uploaded and committed
// to object storage; its error stops the step there.
var beforeObjectCommit func(out string) error

// publishObject publishes the job into its OUT on object storage (see
// above).
func (f *publishFn) publishObject(ctx context.Context, byInput [][]ShardResult, sums []string) error {
	inputs, err := f.inputs()
	if err != nil {
		return err
	}
	t, sess, err := prepareObject(ctx, &f.S, inputs)
	if err != nil {
		return err
	}
	defer sess.Close()
	if b := sess.Base(); b != nil && !f.S.Incremental {
		// The job was planned into an OUT without a commit (NewSettings);
		// another run committed since: exactly one of the two publishes.
		return &objout.ConflictError{URL: fmt.Sprintf("%s/%s%010d.json", t.URL, objout.CommitsDir, b.Number), Number: b.Number}
	}
	local, err := os.MkdirTemp(f.S.ScratchDir, "convbeam-shards-")
	if err != nil {
		return fmt.Errorf("scratch directory: %w", err)
	}
	defer os.RemoveAll(local)
	fetched, err := fetchShards(ctx, byInput, local)
	if err != nil {
		return err
	}
	var obj objectCommit
	if f.S.iceberg() {
		// The Iceberg metadata names each file by the key it has, or
		// will have, in the bucket (objout's locator).
		obj.place = icebergout.Place{Locate: sess.Locator(), IO: t.IO()}
	}
	// Each file the commit publishes is uploaded as soon as it is final,
	// while the commit goes on, as convbatch run's are.
	obj.onStaged = sess.UploadAhead(ctx)
	if err := f.commitOut(ctx, sess.Out, obj, fetched, sums); err != nil {
		return err
	}
	if beforeObjectCommit != nil {
		if err := beforeObjectCommit(f.S.Output); err != nil {
			return err
		}
	}
	c, err := sess.Publish(ctx)
	var ce *objout.ConflictError
	if errors.As(err, &ce) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w; nothing was committed to %s", err, t.URL)
	}
	if c == nil {
		return nil
	}
	log.Infof(ctx, "convbeam: committed %s/%s%010d.json: run %d, %d files", t.URL, objout.CommitsDir, c.Number, c.Run, len(c.Files))
	// As convbatch run does after its commit: what no commit names and
	// is older than the grace period (a killed or losing run's) goes.
	if _, err := t.GC(ctx, objout.DefaultGrace, time.Now()); err != nil {
		log.Warnf(ctx, "convbeam: removing objects no commit names: %v (convbatch gc %s retries)", err, t.URL)
	}
	return nil
}

// fetchWorkers is how many of the shards' files fetchShards downloads at
// once (objout uploads 8 at a time too).
const fetchWorkers = 8

// fetchShards returns byInput with every shard's files on a local path:
// those the shards wrote on another file system (under OUT's prefix on
// object storage) downloaded into the directory local, fetchWorkers at a
// time; byInput itself is left as it was.
func fetchShards(ctx context.Context, byInput [][]ShardResult, local string) ([][]ShardResult, error) {
	type fetch struct {
		tf  *TempFile
		s   *ShardResult
		dst string
	}
	var todo []fetch
	out := make([][]ShardResult, len(byInput))
	for i, shards := range byInput {
		out[i] = make([]ShardResult, len(shards))
		for k, s := range shards {
			s.Files = slices.Clone(s.Files)
			out[i][k] = s
			for n := range s.Files {
				if !isLocal(s.Files[n].Temp) {
					todo = append(todo, fetch{&s.Files[n], &out[i][k], filepath.Join(local, fmt.Sprintf("i%06d-s%06d-%04d", s.Input, s.Index, n))})
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan fetch)
	for range min(fetchWorkers, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range next {
				err := download(ctx, f.tf.Temp, f.dst)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("fetching %s's shard %d: %w", f.s.Path, f.s.Index, err)
					cancel()
				}
				mu.Unlock()
				f.tf.Temp = f.dst
			}
		}()
	}
	for _, f := range todo {
		select {
		case next <- f:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, ctx.Err()
}

// iceberg reports whether the job writes Iceberg tables.
func (s *Settings) iceberg() bool { return s.TableFormat == string(outdir.FormatIceberg) }
