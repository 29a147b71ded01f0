package verify

import (
	stded25519 "crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/cloudflare/circl/sign/ed25519"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEd25519RFC8032 runs the RFC 8032 section 7.1 vectors (tests 1-3)
// through circl, the Algorithm wrapper and, as an independent check, the
// standard library.
func TestEd25519RFC8032(t *testing.T) {
	for _, v := range []struct{ secret, public, message, signature string }{
		{"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
			"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
		{"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
			"92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
		{"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
			"6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
	} {
		seed, pub, msg, sig := unhex(t, v.secret), unhex(t, v.public), unhex(t, v.message), unhex(t, v.signature)
		sk := ed25519.NewKeyFromSeed(seed)
		if got := sk.Public().(ed25519.PublicKey); hex.EncodeToString(got) != v.public {
			t.Errorf("public key %x, want %s", got, v.public)
		}
		if got := ed25519.Sign(sk, msg); hex.EncodeToString(got) != v.signature {
			t.Errorf("signature %x, want %s", got, v.signature)
		}
		alg, _ := LookupAlgorithm("ed25519")
		if !alg.Verify(pub, msg, sig) {
			t.Error("Verify refuses the RFC vector")
		}
		if !stded25519.Verify(pub, msg, sig) {
			t.Error("the standard library refuses the RFC vector")
		}
		bad := append([]byte{}, sig...)
		bad[10] ^= 1
		if alg.Verify(pub, msg, bad) || alg.Verify(pub, append(msg, 0), sig) {
			t.Error("Verify accepts a changed signature or message")
		}
		// Trailing bytes on key or signature are refused (circl < 1.6.5 let
		// some through).
		if alg.Verify(append(pub, 0), msg, sig) || alg.Verify(pub, msg, append(sig, 0)) {
			t.Error("Verify accepts trailing bytes")
		}
	}
}

// TestMLDSAKnownAnswers checks the vectors of testdata/kat (see its README).
func TestMLDSAKnownAnswers(t *testing.T) {
	b, err := os.ReadFile("testdata/kat/mldsa.json")
	if err != nil {
		t.Fatal(err)
	}
	var kat map[string]map[string]string
	if err := json.Unmarshal(b, &kat); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ml-dsa-44", "ml-dsa-65", "ml-dsa-87"} {
		v, ok := kat[name]
		if !ok {
			t.Fatalf("no vector for %s", name)
		}
		alg, _ := LookupAlgorithm(name)
		seed, pub, msg, sig := unhex(t, v["seed"]), unhex(t, v["public_key"]), unhex(t, v["message"]), unhex(t, v["signature"])
		if len(pub) != alg.Scheme.PublicKeySize() || len(sig) != alg.Scheme.SignatureSize() {
			t.Fatalf("%s: sizes %d/%d", name, len(pub), len(sig))
		}
		dpub, _ := alg.Scheme.DeriveKey(seed)
		if got, _ := dpub.MarshalBinary(); hex.EncodeToString(got) != v["public_key"] {
			t.Errorf("%s: derived public key differs from the vector", name)
		}
		if !alg.Verify(pub, msg, sig) {
			t.Errorf("%s: the vector does not verify", name)
		}
		bad := append([]byte{}, sig...)
		bad[len(bad)/2] ^= 0x10
		if alg.Verify(pub, msg, bad) || alg.Verify(pub, msg[1:], sig) || alg.Verify(pub[:len(pub)-1], msg, sig) || alg.Verify(pub, msg, append(sig, 0)) {
			t.Errorf("%s: a changed signature, message, key or length verifies", name)
		}
	}
}
