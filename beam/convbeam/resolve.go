package convbeam

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/convbatch/convbatch/docindex"
	"github.com/convbatch/convbatch/verify"
)

// addStats sums IDStats.
func addStats(a, b IDStats) IDStats {
	return IDStats{Documents: a.Documents + b.Documents, Distinct: a.Distinct + b.Distinct}
}

// bucketFn joins one bucket of ids: the references of receipts to ids in
// it, and the index records of every document whose id is in it (blobs
// from every shard). It folds what the documents say about each
// referenced id (verify.Evidence.Add, as convbatch's document index does)
// and sends it to each receipt that references the id, the zero Evidence
// when no document has it; and it counts the bucket's documents and
// distinct ids. It holds the bucket's distinct ids, about 1/Settings.IDBuckets
// of all.
func bucketFn(bucket int, refs func(*RefTo) bool, docs func(*[]byte) bool, emit func(string, IDEvidence), emitStats func(IDStats)) error {
	want := map[string][]string{}
	var r RefTo
	for refs(&r) {
		want[r.ID] = append(want[r.ID], r.Key)
	}
	evidence := make(map[string]*verify.Evidence, len(want))
	for id := range want {
		evidence[id] = &verify.Evidence{}
	}
	seen := map[string]struct{}{}
	var stats IDStats
	var blob []byte
	for docs(&blob) {
		rd := docindex.NewReader(bytes.NewReader(blob))
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("bucket %d: %w", bucket, err)
			}
			stats.Documents++
			if _, ok := seen[string(rec.ID)]; !ok {
				seen[string(rec.ID)] = struct{}{}
				stats.Distinct++
			}
			if e := evidence[string(rec.ID)]; e != nil {
				e.Add(rec.Hash, rec.Hashable)
			}
		}
	}
	for id, keys := range want {
		ie := IDEvidence{ID: id, Evidence: toEvidence(evidence[id])}
		for _, key := range keys {
			emit(key, ie)
		}
	}
	emitStats(stats)
	return nil
}

// resolveFn resolves one receipt with the evidence about the ids it
// references (verify.PendingReceipt.ResolveJudged: missing, ambiguous,
// unhashable, mismatch and self-reference as convbatch run decides them)
// and judges its keys under the keyring at the job's witness time, as
// convbatch run judges a receipt new in it at its commit time.
type resolveFn struct {
	// S are the job's settings (its keyring, Keys, and the retries of
	// one given by URL).
	S Settings
	// WitnessMicros is the job's witness time: when the job (its OUT's
	// one run) first commits every receipt.
	WitnessMicros int64

	kr *verify.Keyring
}

// Setup loads the keyring, one given by URL through a client with the
// job's retries (Settings.InputClient), closed once it is read.
func (f *resolveFn) Setup(ctx context.Context) error {
	if f.S.Keys == "" {
		return nil
	}
	c, release, err := f.S.InputClient()
	if err != nil {
		return err
	}
	defer release()
	f.kr, err = loadKeyring(ctx, c, f.S.Keys)
	return err
}

// ProcessElement resolves the receipt at key.
func (f *resolveFn) ProcessElement(key string, receipts func(*[]byte) bool, evidence func(*IDEvidence) bool) (Resolved, error) {
	var raw []byte
	n := 0
	var p verify.PendingReceipt
	for receipts(&raw) {
		n++
		if err := p.UnmarshalJSON(raw); err != nil {
			return Resolved{}, fmt.Errorf("receipt %s: %w", key, err)
		}
	}
	if n != 1 {
		return Resolved{}, fmt.Errorf("receipt %s: %d receipts with this position", key, n)
	}
	want := map[string]*verify.Evidence{}
	p.AddReferences(want)
	var ie IDEvidence
	for evidence(&ie) {
		e := ie.Evidence.verify()
		want[ie.ID] = &e
	}
	return Resolved{Key: key, Result: p.ResolveJudged(want, f.kr, f.WitnessMicros)}, nil
}
