package vectorgen

import "strings"

// The documents the reference vectors put beside the receipt.
const (
	// editedEvidence is ev-1 edited after its hash was taken.
	editedEvidence = `{"id":"ev-1","messages":[{"role":"user","content":"Is the fix in 4.2 safe to ship?"},{"role":"assistant","content":"No: the regression test fails."}]}`
	// otherEvidence is another document with id ev-1, hashing differently.
	otherEvidence = `{"id":"ev-1","messages":[]}`
	// bigEvidence is ev-1 holding 1e400: it has no transcript hash.
	bigEvidence = `{"id":"ev-1","messages":[],"score":1e400}`
)

// referenceVectors are the copies of the references and their resolution
// against the run's documents (checks 3 and 4).
func referenceVectors() []receiptVector {
	return []receiptVector{{
		name:    "transcripts-mismatch",
		desc:    "the conversation-level consensusTranscripts lacks an entry of the payload's copy",
		sealed:  func(f *fx) { f.convRefs = ords(ref(f.id, f.selfHash())) },
		reasons: []string{"transcripts-mismatch"},
	}, {
		name:    "transcripts-missing-copy",
		desc:    "the conversation-level consensusTranscripts is absent",
		sealed:  func(f *fx) { f.convRefs = "-" },
		reasons: []string{"transcripts-mismatch"},
	}, {
		name: "transcripts-copy-reordered-members",
		desc: "the copies are compared entry by entry on id and sha256 only: member order and other members do not matter",
		sealed: func(f *fx) {
			f.convRefs = ords(
				ord{{"sha256", q(f.selfHash())}, {"id", q(f.id)}, {"note", q("self")}},
				ord{{"sha256", q(sum(evidence))}, {"id", q("ev-1")}},
			)
		},
	}, {
		name: "transcript-edited",
		desc: "ev-1 was edited after its hash was taken",
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", editedEvidence)
			return v.doc(f.id, f.line())
		},
		reasons: []string{"transcript-hash-mismatch"},
	}, {
		name: "self-edited",
		desc: "the carrying conversation was edited after its own hash was taken",
		sealed: func(f *fx) {
			f.head = f.head.set("messages", `[{"role":"user","content":"Review the 4.2 release."},{"role":"assistant","content":"Rejected after review.","agentId":"agent-2"}]`)
		},
		reasons: []string{"transcript-hash-mismatch"},
	}, {
		name: "evidence-reformatted",
		desc: "ev-1 written with other whitespace, member order and escapes has the same transcript hash",
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", ` { "messages" : [{"content":"Is the fix in 4.2 safe to ship?","role":"user"},{"role":"assistant","content":"Yes: the regression test passes."}] , "id":"\u0065v-1" }`)
			return v.doc(f.id, f.line())
		},
	}, {
		name: "evidence-after-receipt",
		desc: "the referenced document comes after the receipt in the input",
		lines: func(v *vb, f *fx) int64 {
			n := v.doc(f.id, f.line())
			v.doc("ev-1", evidence)
			return n
		},
	}, {
		name: "evidence-crlf",
		desc: "the referenced document's line ends in CRLF: it is hashed without the CR",
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", evidence+"\r")
			return v.doc(f.id, f.line())
		},
	}, {
		name:    "transcript-missing",
		desc:    "ev-1 is not in the run: incomplete, not invalid",
		lines:   alone,
		reasons: []string{"transcript-missing"},
	}, {
		name:    "transcript-ambiguous",
		desc:    "two documents with id ev-1 hash differently: incomplete",
		lines:   ambiguousEvidence,
		reasons: []string{"transcript-ambiguous"},
	}, {
		name: "duplicate-identical-evidence",
		desc: "two documents with id ev-1 that hash alike (the second reformatted) are not ambiguous",
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", evidence)
			v.doc("ev-1", `{"messages":[{"role":"user","content":"Is the fix in 4.2 safe to ship?"},{"role":"assistant","content":"Yes: the regression test passes."}],"id":"ev-1"}`)
			v.warn("duplicate-id", 1)
			return v.doc(f.id, f.line())
		},
	}, {
		name: "missing-and-ambiguous",
		desc: "one reference absent, one ambiguous: still only incomplete",
		unsealed: func(f *fx) {
			f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", sum(evidence)), ref("ev-2", rawSum("ev-2")))
		},
		lines:   ambiguousEvidence,
		reasons: []string{"transcript-missing", "transcript-ambiguous"},
	}, {
		name:     "transcript-unhashable",
		desc:     "the referenced document holds 1e400 and has no transcript hash: invalid",
		unsealed: refsToBigEvidence,
		lines: func(v *vb, f *fx) int64 {
			v.unhashable("ev-1", bigEvidence)
			return v.doc(f.id, f.line())
		},
		reasons: []string{"transcript-unhashable"},
	}, {
		name:     "duplicate-unhashable-evidence",
		desc:     "the same unhashable document twice: neither copy has a hash, so none can differ; the reference is unhashable and the receipt invalid (duplicating evidence must not turn invalid into incomplete)",
		unsealed: refsToBigEvidence,
		lines: func(v *vb, f *fx) int64 {
			v.unhashable("ev-1", bigEvidence)
			v.unhashable("ev-1", bigEvidence)
			v.warn("duplicate-id", 1)
			return v.doc(f.id, f.line())
		},
		reasons: []string{"transcript-unhashable"},
	}, {
		name: "self-unhashable",
		desc: "the carrying conversation holds a lone surrogate: neither it nor its self-reference has a hash",
		unsealed: func(f *fx) {
			f.head = f.head.set("messages", `[{"role":"user","content":"Review \ud800"},{"role":"assistant","content":"Approved after review.","agentId":"agent-2"}]`)
			f.refs = ords(ref(f.id, rawSum("self")), ref("ev-1", sum(evidence)))
		},
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", evidence)
			return v.unhashable(f.id, f.line())
		},
		reasons: []string{"transcript-unhashable"},
	}, {
		name:     "self-reference-only",
		desc:     "a receipt whose only evidence is its own conversation",
		unsealed: func(f *fx) { f.refs = ords(ref(f.id, f.selfHash())) },
		lines:    alone,
	}, {
		name: "self-reference-shared-id",
		desc: "another document shares the conversation's id: the self-reference is still checked against the carrying conversation",
		lines: func(v *vb, f *fx) int64 {
			v.doc("ev-1", evidence)
			v.doc(f.id, `{"id":"conv-1","messages":[]}`)
			v.warn("duplicate-id", 1)
			return v.doc(f.id, f.line())
		},
	}, {
		name: "transcript-ref-malformed",
		desc: "a reference's sha256 in uppercase hex (in both copies)",
		unsealed: func(f *fx) {
			f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", sum(evidence)), ref("ev-1", strings.ToUpper(sum(evidence))))
		},
		reasons: []string{"transcript-ref-malformed"},
	}, {
		name:     "transcript-ref-empty-id",
		desc:     "a reference with an empty id (in both copies)",
		unsealed: func(f *fx) { f.refs = ords(ref(f.id, f.selfHash()), ref("", sum(evidence))) },
		reasons:  []string{"transcript-ref-malformed"},
	}}
}

// ambiguousEvidence writes ev-1 twice, hashing differently, then the
// conversation.
func ambiguousEvidence(v *vb, f *fx) int64 {
	v.doc("ev-1", evidence)
	v.doc("ev-1", otherEvidence)
	v.warn("duplicate-id", 1)
	return v.doc(f.id, f.line())
}

// refsToBigEvidence references the conversation itself and bigEvidence.
func refsToBigEvidence(f *fx) {
	f.refs = ords(ref(f.id, f.selfHash()), ref("ev-1", rawSum(bigEvidence)))
}
