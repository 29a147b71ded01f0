package vectorgen

// quorumVectors are statements and quorums that fail or hold (check 5).
func quorumVectors() []receiptVector {
	return []receiptVector{{
		name: "quorum-not-met",
		desc: "two of three statements were edited after their signing: one valid statement for k = 2",
		unsealed: func(f *fx) {
			for i := range 2 {
				f.stmts[i] = f.stmts[i].set("stance", q("reject"))
			}
		},
		reasons: []string{"quorum-not-met"},
	}, {
		name: "quorum-distinct-agents",
		desc: "two valid statements by the same agent count once toward k = 2",
		unsealed: func(f *fx) {
			f.stmts[1] = stmt(f.keys[0], "agent-0", "approve-with-notes")
			f.stmts[2] = f.stmts[2].set("stance", q("reject"))
		},
		reasons: []string{"quorum-not-met"},
	}, {
		name: "failed-statements-tolerated",
		desc: "statements with an unknown algorithm or a malformed signature only count as not valid; the quorum decides",
		unsealed: func(f *fx) {
			f.stmts[2] = f.stmts[2].set("algorithm", q("rsa"))
			f.stmts = append(f.stmts, stmt(newKey("ed25519", "agent-3"), "agent-1", "approve").set("signature", q("AAAA")))
			f.quorum = `{"k":2,"n":4}`
		},
	},
		quorumMalformed("quorum-malformed-k-zero", "k must be at least 1", `{"k":0,"n":3}`),
		quorumMalformed("quorum-malformed-n", "n must equal the number of statements", `{"k":2,"n":4}`),
		quorumMalformed("quorum-malformed-k-string", "k must be an integer, not a string (quorum-not-met is only judged on a well-formed quorum)", `{"k":"2","n":3}`),
		quorumMalformed("quorum-malformed-k-over-n", "k greater than n (quorum-not-met is only judged on a well-formed quorum)", `{"k":4,"n":3}`),
	}
}

// quorumMalformed is a vector whose payload carries quorum.
func quorumMalformed(name, desc string, quorum raw) receiptVector {
	return receiptVector{
		name:     name,
		desc:     desc,
		unsealed: func(f *fx) { f.quorum = quorum },
		reasons:  []string{"quorum-malformed"},
	}
}
