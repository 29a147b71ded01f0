package vectorgen

import "strings"

// envelopeVectors are envelopes with a member missing, mistyped or
// malformed: receipt-malformed and the member checks of check 2, and
// signed_at.
func envelopeVectors() []receiptVector {
	return []receiptVector{{
		name:    "malformed-no-signature",
		desc:    "the envelope has no signature member (the member checks of check 2 apply only to members present)",
		sealed:  func(f *fx) { f.env = f.env.del("signature") },
		reasons: []string{"receipt-malformed"},
	}, {
		name:    "malformed-signed-at-number",
		desc:    "signed_at is a number, not a string (signed-at-invalid is judged only on a string)",
		sealed:  setEnvelope("signed_at", "1764476693"),
		reasons: []string{"receipt-malformed"},
	}, {
		name: "malformed-not-object",
		desc: "consensusReceipt is a string and there is no conversation-level copy (no other check applies to a receipt that is not an object)",
		sealed: func(f *fx) {
			f.receipt = `"approved"`
			f.convRefs = "-"
		},
		reasons: []string{"receipt-malformed"},
	}, {
		name:    "algorithm-unknown",
		desc:    "the envelope algorithm is not one of the four (key, signature and their checks are then not judged)",
		sealed:  setEnvelope("algorithm", q("rsa")),
		reasons: []string{"algorithm-unknown"},
	}, {
		name:    "algorithm-case",
		desc:    "algorithm names are exact: Ed25519 is unknown",
		sealed:  setEnvelope("algorithm", q("Ed25519")),
		reasons: []string{"algorithm-unknown"},
	}, {
		name:    "public-key-not-base64",
		desc:    "public_key is not base64",
		sealed:  setEnvelope("public_key", q("not base64!")),
		reasons: []string{"public-key-malformed"},
	}, {
		name:    "public-key-short",
		desc:    "public_key decodes to 31 bytes, not 32",
		sealed:  func(f *fx) { f.env = f.env.set("public_key", q(b64(f.envKey.pubBytes()[:31]))) },
		reasons: []string{"public-key-malformed"},
	}, {
		name:    "public-key-unpadded",
		desc:    "public_key without its base64 padding",
		sealed:  func(f *fx) { f.env = f.env.set("public_key", q(strings.TrimRight(f.envKey.pub(), "="))) },
		reasons: []string{"public-key-malformed"},
	}, {
		name:    "signature-short",
		desc:    "signature decodes to 63 bytes, not 64",
		sealed:  setEnvelope("signature", q(b64(make([]byte, 63)))),
		reasons: []string{"signature-malformed"},
	}, {
		name: "signature-unpadded",
		desc: "signature without its base64 padding",
		sealed: func(f *fx) {
			sig := f.envKey.sign(canon(f.payload().String()))
			f.env = f.env.set("signature", q(strings.TrimRight(sig, "=")))
		},
		reasons: []string{"signature-malformed"},
	}, {
		name:    "algorithm-mismatch",
		desc:    "an Ed25519 key and signature labelled ml-dsa-44 have the wrong lengths",
		sealed:  setEnvelope("algorithm", q("ml-dsa-44")),
		reasons: []string{"public-key-malformed", "signature-malformed"},
	},
		signedAtInvalid("signed-at-month", "2026-13-01T00:00:00Z"),
		signedAtInvalid("signed-at-space", "2026-11-30 04:24:53Z"),
		signedAtInvalid("signed-at-no-offset", "2026-11-30T04:24:53"),
		{
			name:   "signed-at-valid-forms",
			desc:   "lowercase t, a leap second, a fraction and an offset are RFC 3339",
			sealed: setEnvelope("signed_at", q("2026-12-31t23:59:60.25+05:30")),
		},
	}
}

// setEnvelope is the mutation setting the envelope's member k to v after
// signing.
func setEnvelope(k string, v raw) func(f *fx) {
	return func(f *fx) { f.env = f.env.set(k, v) }
}

// signedAtInvalid is a vector whose signed_at is the string at, not an
// RFC 3339 date-time.
func signedAtInvalid(name, at string) receiptVector {
	return receiptVector{
		name:    name,
		desc:    "signed_at " + at + " is not an RFC 3339 date-time (signed_at is not covered by the signature)",
		sealed:  setEnvelope("signed_at", q(at)),
		reasons: []string{"signed-at-invalid"},
	}
}
