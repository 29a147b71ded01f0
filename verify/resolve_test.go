package verify

import (
	"slices"
	"testing"
)

type testDoc struct {
	hash     [32]byte
	hashable bool
}

// oldEntry is the resolver's per-id entry before the document index, kept
// here as the oracle: an unhashable copy makes the id unhashable; hashable
// copies with differing hashes make it ambiguous.
type oldEntry struct {
	hash                [32]byte
	hashable, ambiguous bool
}

func oldFold(docs []testDoc) *oldEntry {
	var e *oldEntry
	for _, d := range docs {
		if e == nil {
			e = &oldEntry{hash: d.hash, hashable: d.hashable}
			continue
		}
		switch {
		case !d.hashable:
			e.hashable = false
		case !e.hashable:
		case e.hash != d.hash:
			e.ambiguous = true
		}
	}
	return e
}

func oldCheck(e *oldEntry, sha [32]byte) (Reason, bool) {
	switch {
	case e == nil:
		return TranscriptMissing, true
	case !e.hashable:
		return TranscriptUnhashable, true
	case e.ambiguous:
		return TranscriptAmbiguous, true
	case sha != e.hash:
		return TranscriptHashMismatch, true
	}
	return 0, false
}

var (
	hashA = [32]byte{'a'}
	hashB = [32]byte{'b'}
	noH   = testDoc{}
	docA  = testDoc{hashA, true}
	docB  = testDoc{hashB, true}
)

func TestEvidenceRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		docs   []testDoc
		sha    [32]byte
		reason Reason
		failed bool
	}{
		{"missing", nil, hashA, TranscriptMissing, true},
		{"one, matching", []testDoc{docA}, hashA, 0, false},
		{"one, mismatching", []testDoc{docA}, hashB, TranscriptHashMismatch, true},
		{"one, unhashable", []testDoc{noH}, hashA, TranscriptUnhashable, true},
		{"duplicates alike", []testDoc{docA, docA, docA}, hashA, 0, false},
		{"duplicates alike, mismatching", []testDoc{docA, docA}, hashB, TranscriptHashMismatch, true},
		{"duplicates differ", []testDoc{docA, docB}, hashA, TranscriptAmbiguous, true},
		{"duplicates differ, third alike", []testDoc{docA, docB, docA}, hashB, TranscriptAmbiguous, true},
		{"unhashable copy first", []testDoc{noH, docA}, hashA, TranscriptUnhashable, true},
		{"unhashable copy last", []testDoc{docA, docA, noH}, hashA, TranscriptUnhashable, true},
		{"unhashable and ambiguous", []testDoc{docA, noH, docB}, hashA, TranscriptUnhashable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e Evidence
			for _, d := range tc.docs {
				e.Add(d.hash, d.hashable)
			}
			reason, failed := e.Check(tc.sha)
			if failed != tc.failed || (failed && reason != tc.reason) {
				t.Errorf("Check = %v %v, want %v %v", reason, failed, tc.reason, tc.failed)
			}
			if e.Documents != int64(len(tc.docs)) {
				t.Errorf("Documents = %d", e.Documents)
			}
		})
	}
	var nilEv *Evidence
	if r, failed := nilEv.Check(hashA); !failed || r != TranscriptMissing {
		t.Errorf("nil evidence: %v %v", r, failed)
	}
}

// TestEvidenceAgreesWithOldRules folds every sequence of up to four
// documents drawn from {A, B, unhashable}, in order, and as two partial
// folds merged, and compares the verdict for both hashes with the old
// resolver's.
func TestEvidenceAgreesWithOldRules(t *testing.T) {
	choices := []testDoc{docA, docB, noH}
	var seqs [][]testDoc
	var gen func(prefix []testDoc)
	gen = func(prefix []testDoc) {
		seqs = append(seqs, slices.Clone(prefix))
		if len(prefix) < 4 {
			for _, c := range choices {
				gen(append(prefix, c))
			}
		}
	}
	gen(nil)
	for _, seq := range seqs {
		old := oldFold(seq)
		for cut := 0; cut <= len(seq); cut++ {
			var e, l, r Evidence
			for _, d := range seq {
				e.Add(d.hash, d.hashable)
			}
			for _, d := range seq[:cut] {
				l.Add(d.hash, d.hashable)
			}
			for _, d := range seq[cut:] {
				r.Add(d.hash, d.hashable)
			}
			r.Merge(l) // merged in the other order on purpose
			for _, sha := range [][32]byte{hashA, hashB} {
				wr, wf := oldCheck(old, sha)
				for name, ev := range map[string]*Evidence{"fold": &e, "merge": &r} {
					gr, gf := ev.Check(sha)
					if gf != wf || (gf && gr != wr) {
						t.Fatalf("%v (%s at %d) against %x: %v %v, want %v %v", seq, name, cut, sha[0], gr, gf, wr, wf)
					}
				}
			}
		}
	}
}

func TestResolveSelfAndReferences(t *testing.T) {
	check := &ReceiptCheck{
		ConversationID: "self", SelfHash: hashA, SelfHashOK: true,
		Refs: []Ref{{ID: "self", SHA256: hashA}, {ID: "other", SHA256: hashB}, {ID: "gone", SHA256: hashB}, {ID: "other", SHA256: hashB}},
	}
	r := NewResolver()
	r.AddReceipt(&PendingReceipt{File: "f", Line: 3, Check: check})
	ev := r.References()
	if len(ev) != 2 || ev["other"] == nil || ev["gone"] == nil {
		t.Fatalf("References() = %v, want other and gone (not self)", ev)
	}
	// Other documents named "self" do not count: the receipt's own hash
	// decides.
	ev["other"].Add(hashB, true)
	ev["self"] = &Evidence{Documents: 2, Hashed: 1}
	got := r.Resolve(ev)[0]
	if got.Status != StatusIncomplete || !slices.Equal(got.Reasons, []string{"transcript-missing"}) {
		t.Errorf("got %s %v, want incomplete [transcript-missing]", got.Status, got.Reasons)
	}
	check.SelfHashOK = false
	ev["gone"].Add(hashB, true)
	got = r.Resolve(ev)[0]
	if got.Status != StatusInvalid || !slices.Equal(got.Reasons, []string{"transcript-unhashable"}) {
		t.Errorf("got %s %v, want invalid [transcript-unhashable]", got.Status, got.Reasons)
	}
	if est := r.MemoryEstimate(); est != 400+4*80 {
		t.Errorf("MemoryEstimate() = %d", est)
	}
}
