package vectorgen

import "encoding/json"

// The receipt of newFx is signed at 2026-11-30T04:24:53Z; these vectors
// are witnessed by the run that checks them (no earlier witness is
// known), after 2026-12-01, and before 2999.
const signedAt = "2026-11-30T04:24:53Z"

// window is an entry's not_before and not_after ("" leaves one out).
func window(notBefore, notAfter string) ord {
	var o ord
	if notBefore != "" {
		o = append(o, member{"not_before", q(notBefore)})
	}
	if notAfter != "" {
		o = append(o, member{"not_after", q(notAfter)})
	}
	return o
}

// revoked is an entry's revocation ("" leaves compromised_since out).
func revoked(at, reason, since string) ord {
	r := ord{{"at", q(at)}, {"reason", q(reason)}}
	if since != "" {
		r = append(r, member{"compromised_since", q(since)})
	}
	return ord{{"revoked", r.raw()}}
}

// id is an entry's id.
func id(s string) ord { return ord{{"id", q(s)}} }

// join concatenates members.
func join(os ...ord) ord {
	var out ord
	for _, o := range os {
		out = append(out, o...)
	}
	return out
}

// lifetimes is the fixture's keyring with env's members on the envelope
// key, a1's on agent-1's key, and more entries for agent-1 after it.
func lifetimes(env, a1 ord, more ...entry) func(f *fx) json.RawMessage {
	return lifetimesWith(nil, env, a1, more...)
}

// lifetimesWith is lifetimes with top-level members top.
func lifetimesWith(top, env, a1 ord, more ...entry) func(f *fx) json.RawMessage {
	return func(f *fx) json.RawMessage {
		return keyringWith(top, []entry{{f.envKey, env}}, "agent-0", f.keys[:1],
			"agent-1", append([]entry{{f.keys[1], a1}}, more...), "agent-2", f.keys[2:])
	}
}

// signAt sets the envelope's signed_at (not covered by the signature).
func signAt(s string) func(f *fx) {
	return func(f *fx) { f.env = f.env.set("signed_at", q(s)) }
}

// lifetimeVectors are runs with a keyring of format 2: key windows,
// revocations, rotation and expires (docs/FORMAT.md, "Key lifetimes"),
// one vector per rule of the verdict table, and bad keyrings refused
// naming their entry.
func lifetimeVectors() []receiptVector {
	old := newKey("ed25519", "agent-1-2025")
	return []receiptVector{{
		name:    "key-ids",
		desc:    "keyring format 2: ids alone change no verdict",
		keyring: lifetimes(id("notary-2026"), id("agent-1-2026")),
	}, {
		name:    "key-in-window",
		desc:    "signed_at inside the key's window [not_before, not_after)",
		keyring: lifetimes(window("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), window("2026-11-01T00:00:00+01:00", "2026-12-01T00:00:00.000001Z")),
	}, {
		name:    "key-not-before-included",
		desc:    "signed_at equal to not_before is in the window",
		keyring: lifetimes(nil, window(signedAt, "")),
	}, {
		name:    "key-not-after-excluded",
		desc:    "signed_at equal to not_after is past the window",
		keyring: lifetimes(nil, window("", signedAt)),
		reasons: []string{"key-expired"},
	}, {
		name:    "statement-key-not-yet-valid",
		desc:    "agent-1's key is valid from 2026-12-01 only",
		keyring: lifetimes(nil, window("2026-12-01T00:00:00Z", "")),
		reasons: []string{"key-not-yet-valid"},
	}, {
		name:    "statement-key-expired",
		desc:    "agent-1's key was valid until 2026-06-01 (a time with an offset)",
		keyring: lifetimes(nil, window("2025-01-01T00:00:00Z", "2026-06-01T02:00:00+02:00")),
		reasons: []string{"key-expired"},
	}, {
		name:    "envelope-key-not-yet-valid",
		desc:    "the envelope key is valid from 2027 only",
		keyring: lifetimes(window("2027-01-01T00:00:00Z", ""), nil),
		reasons: []string{"key-not-yet-valid"},
	}, {
		name:    "envelope-key-expired",
		desc:    "the envelope key's window ended before signed_at",
		keyring: lifetimes(window("", "2026-11-30T04:24:52.999999Z"), nil),
		reasons: []string{"key-expired"},
	}, {
		name:    "key-revoked-since-forever",
		desc:    "agent-1's key is revoked without compromised_since: every statement of it fails",
		keyring: lifetimes(nil, revoked("2026-12-01T00:00:00Z", "superseded", "")),
		reasons: []string{"key-revoked"},
	}, {
		name:    "key-revoked-signed-after-compromise",
		desc:    "signed_at is after the key's compromised_since",
		keyring: lifetimes(nil, revoked("2026-12-01T00:00:00Z", "key compromise", "2026-11-01T00:00:00Z")),
		reasons: []string{"key-revoked"},
	}, {
		name:    "key-revoked-signed-at-compromise",
		desc:    "signed_at equal to compromised_since is in the compromise",
		keyring: lifetimes(nil, revoked("2026-12-01T00:00:00Z", "key compromise", signedAt)),
		reasons: []string{"key-revoked"},
	}, {
		name:    "key-revoked-witnessed-after-compromise",
		desc:    "signed before compromised_since, but first witnessed (by this run) after it: signed_at is only the signer's claim",
		keyring: lifetimes(nil, revoked("2026-12-02T00:00:00Z", "key compromise", "2026-12-01T00:00:00Z")),
		reasons: []string{"key-revoked"},
	}, {
		name:    "key-revoked-compromise-not-begun",
		desc:    "a revocation whose compromise begins after this run: signed and witnessed before it, the statement holds",
		keyring: lifetimes(nil, revoked("2999-01-02T00:00:00Z", "scheduled retirement", "2999-01-01T00:00:00Z")),
	}, {
		name:    "envelope-key-revoked",
		desc:    "the envelope key is revoked since 2026-01-01",
		keyring: lifetimes(revoked("2026-12-01T00:00:00Z", "key compromise", "2026-01-01T00:00:00Z"), nil),
		reasons: []string{"key-revoked"},
	}, {
		name:    "key-revoked-and-expired",
		desc:    "a key both past its window and revoked is listed as revoked only",
		keyring: lifetimes(nil, join(window("", "2026-01-01T00:00:00Z"), revoked("2026-12-01T00:00:00Z", "lost", ""))),
		reasons: []string{"key-revoked"},
	}, {
		name:    "every-key-fails",
		desc:    "the envelope key expired and agent-1's key revoked: both reasons, in the documented order",
		keyring: lifetimes(window("", "2026-01-01T00:00:00Z"), revoked("2026-12-01T00:00:00Z", "lost", "")),
		reasons: []string{"key-expired", "key-revoked"},
	}, {
		name: "rotation-new-key",
		desc: "agent-1 rotated keys: the old one until 2026-11-01, the new one (which signed) from 2026-10-25, overlapping a week",
		keyring: lifetimes(nil, join(id("agent-1-2026"), window("2026-10-25T00:00:00Z", "")),
			entry{old, join(id("agent-1-2025"), window("2025-01-01T00:00:00Z", "2026-11-01T00:00:00Z"))}),
	}, {
		name: "rotation-old-key",
		desc: "agent-1's signing key was rotated out on 2026-11-01: past its window though a newer key is pinned",
		keyring: lifetimes(nil, join(id("agent-1-2025"), window("2025-01-01T00:00:00Z", "2026-11-01T00:00:00Z")),
			entry{old, join(id("agent-1-2026"), window("2026-10-25T00:00:00Z", ""))}),
		reasons: []string{"key-expired"},
	}, {
		name: "rotation-overlap",
		desc: "signed_at falls in the overlap of the old and new keys' windows: the old key still signs",
		keyring: lifetimes(nil, window("2025-01-01T00:00:00Z", "2026-12-01T00:00:00Z"),
			entry{old, window("2026-11-15T00:00:00Z", "")}),
	}, {
		name: "same-key-second-window",
		desc: "the same key pinned twice, in disjoint windows: signed in the second",
		keyring: func(f *fx) json.RawMessage {
			return lifetimes(nil, window("", "2026-01-01T00:00:00Z"), entry{f.keys[1], window("2026-06-01T00:00:00Z", "")})(f)
		},
	}, {
		name: "same-key-between-windows",
		desc: "the same key pinned twice, in disjoint windows: signed between them",
		keyring: func(f *fx) json.RawMessage {
			return lifetimes(nil, window("", "2026-01-01T00:00:00Z"), entry{f.keys[1], window("2026-12-01T00:00:00Z", "")})(f)
		},
		reasons: []string{"key-expired"},
	}, {
		name:    "signed-at-future",
		desc:    "signed_at in 2999, after the run that witnesses it",
		sealed:  signAt("2999-01-01T00:00:00Z"),
		keyring: lifetimes(id("notary"), nil),
		reasons: []string{"signed-at-future"},
	}, {
		name:    "signed-at-future-past-window",
		desc:    "signed_at in 2999: after the witness, and past agent-1's window",
		sealed:  signAt("2999-01-01T00:00:00Z"),
		keyring: lifetimes(nil, window("", "2027-01-01T00:00:00Z")),
		reasons: []string{"key-expired", "signed-at-future"},
	}, {
		name:    "signed-at-future-format-1",
		desc:    "with a format 1 keyring signed_at in 2999 is judged as before lifetimes",
		sealed:  signAt("2999-01-01T00:00:00Z"),
		keyring: lifetimes(nil, nil),
	}, {
		name:    "signed-before-every-window",
		desc:    "signed_at in 1999, before the windows of the envelope and agent-1 keys",
		sealed:  signAt("1999-01-01T00:00:00Z"),
		keyring: lifetimes(window("2026-01-01T00:00:00Z", ""), window("2026-01-01T00:00:00Z", "")),
		reasons: []string{"key-not-yet-valid"},
	}, {
		name:    "signed-at-invalid-revoked",
		desc:    "signed_at is not RFC 3339: windows are not judged, and a revoked key cannot be shown signed before its compromise",
		sealed:  signAt("2026-11-31T00:00:00Z"),
		keyring: lifetimes(window("", "2026-01-01T00:00:00Z"), revoked("2026-12-01T00:00:00Z", "key compromise", "2026-11-01T00:00:00Z")),
		reasons: []string{"signed-at-invalid", "key-revoked"},
	}, {
		name: "unpinned-and-revoked",
		desc: "agent-1's key is not pinned and the envelope key is revoked",
		keyring: func(f *fx) json.RawMessage {
			return keyringWith(nil, []entry{{f.envKey, revoked("2026-12-01T00:00:00Z", "lost", "")}}, "agent-0", f.keys[:1], "agent-2", f.keys[2:])
		},
		reasons: []string{"statement-key-not-pinned", "key-revoked"},
	}, {
		name:    "keyring-expires-later",
		desc:    "a keyring whose expires is in 2999 is read",
		keyring: lifetimesWith(ord{{"expires", q("2999-01-01T00:00:00Z")}}, nil, nil),
	}, {
		name:    "keyring-expired",
		desc:    "a keyring past its expires is refused, naming it",
		keyring: lifetimesWith(ord{{"expires", q("2026-01-01T00:00:00Z")}}, nil, nil),
		refused: "expires 2026-01-01T00:00:00Z",
	}, {
		name: "keyring-overlapping-windows",
		desc: "the same key twice for agent-1, in windows that overlap: refused naming both entries",
		keyring: func(f *fx) json.RawMessage {
			return lifetimes(nil, window("", "2026-12-01T00:00:00Z"), entry{f.keys[1], window("2026-11-30T00:00:00Z", "")})(f)
		},
		refused: `agents["agent-1"][1]: the same key as agents["agent-1"][0]`,
	}, {
		name:    "keyring-empty-window",
		desc:    "not_after before not_before: refused naming the entry",
		keyring: lifetimes(window("2026-12-01T00:00:00Z", "2026-01-01T00:00:00Z"), nil),
		refused: `envelope_keys[0]: not_after is not after not_before`,
	}, {
		name:    "keyring-unknown-member",
		desc:    "a key member format 2 does not have: refused naming the entry",
		keyring: lifetimes(nil, ord{{"valid_until", q("2027-01-01T00:00:00Z")}}),
		refused: `agents["agent-1"][0]: unknown field "valid_until"`,
	}, {
		name:    "keyring-revocation-unknown-key",
		desc:    "a revocation list naming a key by id: revocations stand in their key's entry, so this member is refused",
		keyring: lifetimesWith(ord{{"revocations", `[{"id":"agent-9-key","at":"2026-12-01T00:00:00Z"}]`}}, nil, nil),
		refused: `unknown field "revocations"`,
	}, {
		name:    "keyring-compromise-after-revocation",
		desc:    "compromised_since after the revocation's at: refused naming the entry",
		keyring: lifetimes(nil, revoked("2026-11-01T00:00:00Z", "lost", "2026-12-01T00:00:00Z")),
		refused: `agents["agent-1"][0]: revoked.compromised_since is after revoked.at`,
	}, {
		name:    "keyring-duplicate-id",
		desc:    "two entries with one id: refused naming both",
		keyring: lifetimes(id("k"), id("k")),
		refused: `agents["agent-1"][0]: id "k" already names envelope_keys[0]`,
	}}
}
