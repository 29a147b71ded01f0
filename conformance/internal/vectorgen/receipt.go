package vectorgen

import "encoding/json"

// receipts returns the consensus-receipt vectors, group by group; each
// group has its own file and, but for the last few, is a table of
// receiptVector.
func receipts() []*vb {
	var out []*vb
	for _, group := range [][]receiptVector{
		signatureVectors(), quorumVectors(), referenceVectors(),
		envelopeVectors(), keyringVectors(), lifetimeVectors(), combinedVectors(),
	} {
		for _, rv := range group {
			out = append(out, rv.build())
		}
	}
	return append(out, receiptChain(), transcriptsUndeclared(), transcriptsWithoutReceipt())
}

// receiptVector is one consensus-receipt vector: the conversation of newFx
// (conv-1, three Ed25519 statements, quorum 2 of 3, references to itself
// and ev-1) changed before or after its envelope is signed, the lines
// around it, and the reasons its receipt must get.
type receiptVector struct {
	// name follows "consensus-receipt/"; desc is the vector's description.
	name, desc string
	// alg is the envelope's algorithm; "" is ed25519.
	alg string
	// unsealed changes the conversation before the envelope is signed,
	// sealed after (either may be nil).
	unsealed, sealed func(f *fx)
	// lines writes the vector's lines and returns the line carrying the
	// receipt; nil is withEvidence.
	lines func(v *vb, f *fx) int64
	// reasons are the receipt's, in the documented order (none: valid).
	reasons []string
	// warnings are expected besides those the lines add.
	warnings map[string]int64
	// keyring, when set, gives the run's --keys file.
	keyring func(f *fx) json.RawMessage
	// refused, when set, is what the keyring's refusal names: nothing is
	// run, nothing is expected but the refusal.
	refused string
}

// build makes the vector: the conversation, mutated and sealed, its lines
// and its expectations.
func (rv receiptVector) build() *vb {
	alg := rv.alg
	if alg == "" {
		alg = "ed25519"
	}
	f := newFx(alg)
	if rv.unsealed != nil {
		rv.unsealed(f)
	}
	f.seal()
	if rv.sealed != nil {
		rv.sealed(f)
	}
	v := newVector("consensus-receipt/"+rv.name, rv.desc)
	if rv.refused != "" {
		v.add(evidence)
		v.add(f.line())
		v.v.Keyring = rv.keyring(f)
		v.v.Expect.KeyringRefused = rv.refused
		return v
	}
	lines := rv.lines
	if lines == nil {
		lines = withEvidence
	}
	n := lines(v, f)
	v.receipt(n, f.id, rv.reasons...)
	for code, count := range rv.warnings {
		v.warn(code, count)
	}
	if rv.keyring != nil {
		v.v.Keyring = rv.keyring(f)
	}
	return v
}

// withEvidence writes ev-1, then the conversation.
func withEvidence(v *vb, f *fx) int64 {
	v.doc("ev-1", evidence)
	return v.doc(f.id, f.line())
}

// alone writes the conversation without any evidence.
func alone(v *vb, f *fx) int64 { return v.doc(f.id, f.line()) }
