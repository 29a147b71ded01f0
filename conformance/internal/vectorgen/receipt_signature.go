package vectorgen

// signatureVectors are valid receipts on each algorithm and envelopes whose
// payload hash or signature does not match (checks 1 and 2).
func signatureVectors() []receiptVector {
	vs := []receiptVector{{
		name: "ed25519-valid",
		desc: "a valid Ed25519 receipt: three Ed25519 statements, quorum 2 of 3, references to itself (hashed without consensusReceipt and consensusTranscripts) and to ev-1",
	}}
	for _, alg := range []string{"ml-dsa-44", "ml-dsa-65", "ml-dsa-87"} {
		vs = append(vs, receiptVector{
			name: alg + "-valid",
			desc: "a valid receipt with an " + alg + " envelope (empty context) and one " + alg + " statement",
			alg:  alg,
			unsealed: func(f *fx) {
				f.keys[2] = newKey(alg, "agent-2")
				f.signStatements()
			},
		})
	}
	return append(vs, []receiptVector{{
		name: "payload-edited",
		desc: "the payload was edited after signing: its hash and signature no longer match",
		sealed: func(f *fx) {
			f.decision = "halt"
			f.repayload()
		},
		reasons: []string{"payload-hash-mismatch", "signature-invalid"},
	}, {
		name: "payload-edited-hash-updated",
		desc: "the payload was edited and payload_hash recomputed, but the signature was not",
		sealed: func(f *fx) {
			f.decision = "halt"
			f.repayload()
			f.env = f.env.set("payload_hash", q(sum(f.payload().String())))
		},
		reasons: []string{"signature-invalid"},
	}, {
		name: "wrong-key",
		desc: "the signature was made with another key than public_key",
		sealed: func(f *fx) {
			f.env = f.env.set("signature", q(newKey("ed25519", "intruder").sign(canon(f.payload().String()))))
		},
		reasons: []string{"signature-invalid"},
	}}...)
}
