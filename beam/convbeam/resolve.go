package convbeam

import (
	"fmt"

	"github.com/convbatch/convbatch/verify"
)

// mergeEvidence folds two partial folds of one id's evidence
// (verify.Evidence.Merge: commutative and associative, so the runner may
// combine in any order and on any worker).
func mergeEvidence(a, b Evidence) Evidence {
	va, vb := a.verify(), b.verify()
	va.Merge(vb)
	return toEvidence(&va)
}

// idStatsFn counts one id's documents, for the duplicate-id warning.
func idStatsFn(_ string, e Evidence) IDStats {
	return IDStats{Documents: e.Documents, Distinct: 1}
}

// addStats sums IDStats.
func addStats(a, b IDStats) IDStats {
	return IDStats{Documents: a.Documents + b.Documents, Distinct: a.Distinct + b.Distinct}
}

// routeFn sends what the documents say about an id to every receipt that
// references it (the zero Evidence when no document has the id).
func routeFn(id string, evidence func(*Evidence) bool, receipts func(*string) bool, emit func(string, IDEvidence)) {
	var e Evidence
	found := false
	var one Evidence
	for evidence(&one) {
		if !found {
			e, found = one, true
			continue
		}
		e = mergeEvidence(e, one)
	}
	var key string
	for receipts(&key) {
		emit(key, IDEvidence{ID: id, Evidence: e})
	}
}

// resolveFn resolves one receipt with the evidence about the ids it
// references (verify.PendingReceipt.Resolve: missing, ambiguous,
// unhashable, mismatch and self-reference as convbatch run decides them).
func resolveFn(key string, receipts func(*[]byte) bool, evidence func(*IDEvidence) bool) (Resolved, error) {
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
	return Resolved{Key: key, Result: p.Resolve(want)}, nil
}
