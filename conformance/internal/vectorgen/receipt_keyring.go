package vectorgen

import "encoding/json"

// keyringVectors are runs with a keyring pinning or not the envelope and
// statement keys (check 6).
func keyringVectors() []receiptVector {
	return []receiptVector{{
		name: "keyring-pinned",
		desc: "with a keyring pinning the envelope key and every statement key",
		keyring: func(f *fx) json.RawMessage {
			return keyring([]key{newKey("ed25519", "other-notary"), f.envKey}, "agent-0", f.keys[:1], "agent-1", f.keys[1:2], "agent-2", []key{newKey("ml-dsa-44", "agent-2"), f.keys[2]})
		},
	}, {
		name: "envelope-key-not-pinned",
		desc: "the keyring pins another envelope key",
		keyring: func(f *fx) json.RawMessage {
			return keyring([]key{newKey("ed25519", "other-notary")}, "agent-0", f.keys[:1], "agent-1", f.keys[1:2], "agent-2", f.keys[2:])
		},
		reasons: []string{"envelope-key-not-pinned"},
	}, {
		name: "statement-key-not-pinned",
		desc: "the keyring pins another key for agent-1",
		keyring: func(f *fx) json.RawMessage {
			return keyring([]key{f.envKey}, "agent-0", f.keys[:1], "agent-1", []key{newKey("ed25519", "impostor")}, "agent-2", f.keys[2:])
		},
		reasons: []string{"statement-key-not-pinned"},
	}, {
		name:    "keyring-envelope-only",
		desc:    "a keyring with envelope keys only pins no statement key",
		keyring: func(f *fx) json.RawMessage { return keyring([]key{f.envKey}) },
		reasons: []string{"statement-key-not-pinned"},
	}, {
		name:    "keyring-empty",
		desc:    "an empty keyring pins nothing",
		keyring: func(*fx) json.RawMessage { return json.RawMessage(`{}`) },
		reasons: []string{"envelope-key-not-pinned", "statement-key-not-pinned"},
	}}
}
