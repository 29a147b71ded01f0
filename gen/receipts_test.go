package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/cloudflare/circl/sign/ed25519"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/verify"
)

// This file is an independent reading of the consensus-receipt profile of
// docs/FORMAT.md, with the reference JCS and circl, used to check what the
// generator expects.

// tdoc is a document as the test reads it.
type tdoc struct {
	line int64
	id   string
	doc  map[string]json.RawMessage
	sum  [32]byte
	ok   bool // has a transcript hash
}

func refHash(raw []byte) ([32]byte, bool) {
	c, err := jcs.Transform(raw)
	if err != nil {
		return [32]byte{}, false
	}
	return sha256.Sum256(c), true
}

// tkey is a pinned key of the test's keyring.
type tkey struct{ alg, pub string }

type tkeyring struct {
	envelope []tkey
	agents   map[string][]tkey
}

func loadKeyring(t testing.TB, data []byte) *tkeyring {
	var kr struct {
		EnvelopeKeys []struct {
			Algorithm string `json:"algorithm"`
			PublicKey string `json:"public_key"`
		} `json:"envelope_keys"`
		Agents map[string][]struct {
			Algorithm string `json:"algorithm"`
			PublicKey string `json:"public_key"`
		} `json:"agents"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kr); err != nil {
		t.Fatal(err)
	}
	out := &tkeyring{agents: map[string][]tkey{}}
	for _, k := range kr.EnvelopeKeys {
		out.envelope = append(out.envelope, tkey{k.Algorithm, k.PublicKey})
	}
	for a, ks := range kr.Agents {
		for _, k := range ks {
			out.agents[a] = append(out.agents[a], tkey{k.Algorithm, k.PublicKey})
		}
	}
	return out
}

var keyLen = map[string][2]int{"ed25519": {32, 64}, "ml-dsa-65": {1952, 3309}}

// verifySig checks a signature; the generator only uses these two
// algorithms (others would be algorithm-unknown here).
func verifySig(alg string, pub, msg, sig []byte) bool {
	switch alg {
	case "ed25519":
		return ed25519.Verify(ed25519.PublicKey(pub), msg, sig)
	case "ml-dsa-65":
		var pk mldsa65.PublicKey
		if pk.UnmarshalBinary(pub) != nil {
			return false
		}
		return mldsa65.Verify(&pk, msg, nil, sig)
	}
	return false
}

func decodeB64(s string, n int) ([]byte, bool) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return b, err == nil && len(b) == n
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

type tref struct {
	ID     string `json:"id"`
	Sha256 string `json:"sha256"`
}

// parseRefs reads an array of {id, sha256}; ok is false when it is not one.
func parseRefs(raw json.RawMessage) ([]tref, bool) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil || raw == nil {
		return nil, false
	}
	out := make([]tref, len(items))
	for i, it := range items {
		if it == nil || !isString(it["id"]) || !isString(it["sha256"]) {
			return nil, false
		}
		out[i] = tref{str(it["id"]), str(it["sha256"])}
	}
	return out, true
}

// canonWithout returns JCS of the object obj without the named members.
func canonWithout(obj map[string]json.RawMessage, drop ...string) ([]byte, error) {
	m := map[string]json.RawMessage{}
	for k, v := range obj {
		if !slices.Contains(drop, k) {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// verifyReceipts checks every receipt of docs; it returns the totals with
// and without the keyring, the list, and the statement-agent-unknown count.
func verifyReceipts(docs []*tdoc, kr *tkeyring) (with, without ReceiptTotals, list []ReceiptExpect, unknownAgents int64) {
	with = ReceiptTotals{Reasons: map[string]int64{}}
	without = ReceiptTotals{Reasons: map[string]int64{}}
	list = []ReceiptExpect{}
	byID := map[string][]*tdoc{}
	for _, d := range docs {
		byID[d.id] = append(byID[d.id], d)
	}
	for _, d := range docs {
		rawEnv, ok := d.doc["consensusReceipt"]
		if !ok {
			continue
		}
		reasons := map[string]bool{}
		keyReasons := map[string]bool{}
		var env map[string]json.RawMessage
		if json.Unmarshal(rawEnv, &env) != nil || env == nil {
			reasons["receipt-malformed"] = true
		}
		payload := env["payload"]
		alg, pubB64, sigB64, ph := str(env["algorithm"]), str(env["public_key"]), str(env["signature"]), str(env["payload_hash"])
		c, err := jcs.Transform(payload)
		if err != nil {
			reasons["receipt-malformed"] = true
		}
		sum := sha256.Sum256(c)
		if ph != hex.EncodeToString(sum[:]) {
			reasons["payload-hash-mismatch"] = true
		}
		lens, known := keyLen[alg]
		pub, okPub := decodeB64(pubB64, lens[0])
		sig, okSig := decodeB64(sigB64, lens[1])
		switch {
		case !known:
			reasons["algorithm-unknown"] = true
		case !okPub:
			reasons["public-key-malformed"] = true
		case !okSig:
			reasons["signature-malformed"] = true
		case !verifySig(alg, pub, c, sig):
			reasons["signature-invalid"] = true
		}
		if !validTime(env["signed_at"]) {
			reasons["signed-at-invalid"] = true
		}
		var p map[string]json.RawMessage
		json.Unmarshal(payload, &p)
		pRefs, okP := parseRefs(p["consensusTranscripts"])
		cRefs, okC := parseRefs(d.doc["consensusTranscripts"])
		if !okP || !okC || !slices.Equal(pRefs, cRefs) {
			reasons["transcripts-mismatch"] = true
		}
		for _, ref := range pRefs {
			if ref.ID == "" || !hex64.MatchString(ref.Sha256) {
				reasons["transcript-ref-malformed"] = true
				continue
			}
			if ref.ID == d.id {
				selfC, err := canonWithout(d.doc, "consensusReceipt", "consensusTranscripts")
				s := sha256.Sum256(selfC)
				if err != nil || hex.EncodeToString(s[:]) != ref.Sha256 {
					reasons["transcript-hash-mismatch"] = true
				}
				continue
			}
			ds := byID[ref.ID]
			distinct := map[string]bool{}
			for _, x := range ds {
				if x.ok {
					distinct[hex.EncodeToString(x.sum[:])] = true
				} else {
					distinct["unhashable"] = true
				}
			}
			switch {
			case len(ds) == 0:
				reasons["transcript-missing"] = true
			case len(distinct) > 1:
				reasons["transcript-ambiguous"] = true
			case !ds[0].ok:
				reasons["transcript-unhashable"] = true
			case hex.EncodeToString(ds[0].sum[:]) != ref.Sha256:
				reasons["transcript-hash-mismatch"] = true
			}
		}
		// Quorum.
		var q struct{ K, N *int64 }
		var stmts []json.RawMessage
		json.Unmarshal(p["quorum"], &q)
		if json.Unmarshal(p["statements"], &stmts) != nil || q.K == nil || q.N == nil || *q.K < 1 || *q.K > *q.N || *q.N != int64(len(stmts)) {
			reasons["quorum-malformed"] = true
		}
		named := map[string]bool{str(d.doc["agentId"]): true, str(d.doc["leaderId"]): true}
		var msgs []map[string]json.RawMessage
		json.Unmarshal(d.doc["messages"], &msgs)
		for _, m := range msgs {
			named[str(m["agentId"])] = true
		}
		valid := map[string]bool{}
		var stmtInvalid int64
		for _, raw := range stmts {
			var st map[string]json.RawMessage
			json.Unmarshal(raw, &st)
			fields := []string{"agentId", "stance", "algorithm", "public_key", "signature"}
			good := st != nil
			for _, f := range fields {
				good = good && isString(st[f])
			}
			if good {
				agent, salg := str(st["agentId"]), str(st["algorithm"])
				if !named[agent] || agent == "" {
					unknownAgents++
				}
				if kr != nil && !slices.Contains(kr.agents[agent], tkey{salg, str(st["public_key"])}) {
					keyReasons["statement-key-not-pinned"] = true
				}
				l, ok := keyLen[salg]
				spub, ok1 := decodeB64(str(st["public_key"]), l[0])
				ssig, ok2 := decodeB64(str(st["signature"]), l[1])
				msg, err := canonWithout(st, "signature")
				good = ok && ok1 && ok2 && err == nil && verifySig(salg, spub, msg, ssig)
				if good {
					valid[agent] = true
				}
			}
			if !good {
				stmtInvalid++
			}
		}
		if !reasons["quorum-malformed"] && int64(len(valid)) < *q.K {
			reasons["quorum-not-met"] = true
		}
		if kr != nil && !slices.Contains(kr.envelope, tkey{alg, pubB64}) {
			keyReasons["envelope-key-not-pinned"] = true
		}
		var rw, rwo uint32
		for i := range 32 {
			name := verify.Reason(i).String()
			if reasons[name] {
				rw |= 1 << i
				rwo |= 1 << i
			}
			if keyReasons[name] {
				rw |= 1 << i
			}
		}
		re := ReceiptExpect{ConversationID: d.id, Line: d.line, Algorithm: alg}
		re.Status, re.Reasons = tallyReceipt(&with, rw, stmtInvalid)
		re.StatusWithoutKeys, re.ReasonsWithoutKeys = tallyReceipt(&without, rwo, stmtInvalid)
		list = append(list, re)
	}
	return
}

// tamperReasons are the exact reasons (with keys) of each tamper kind when
// nothing else interferes.
var tamperReasons = map[string][]string{
	"payload-edited":          {"payload-hash-mismatch", "signature-invalid"},
	"wrong-signing-key":       {"signature-invalid"},
	"unpinned-key":            {"envelope-key-not-pinned"},
	"quorum-not-met":          {"quorum-not-met"},
	"transcript-edited":       {"transcript-hash-mismatch"},
	"reference-copy-mismatch": {"transcripts-mismatch"},
	"missing-evidence":        {"transcript-missing"},
}

func TestReceiptsValid(t *testing.T) {
	data, e := gen(t, Options{Conversations: 200, Seed: 11, MaxDocBytes: 256 << 10})
	check(t, data, e)
	if len(e.ReceiptList) < 20 {
		t.Fatalf("only %d receipts", len(e.ReceiptList))
	}
	if e.Receipts.Valid != int64(len(e.ReceiptList)) || e.ReceiptsWithoutKeys.Valid != int64(len(e.ReceiptList)) {
		t.Errorf("Tamper 0: not every receipt is valid: %+v", e.Receipts)
	}
	algs := map[string]int{}
	for _, r := range e.ReceiptList {
		algs[r.Algorithm]++
	}
	if algs["ed25519"] == 0 || algs["ml-dsa-65"] == 0 {
		t.Errorf("envelope algorithms %v", algs)
	}
	for _, want := range []string{`"algorithm":"ml-dsa-65"`, `"algorithm":"ed25519"`, `"extensions":[`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("output lacks %s", want)
		}
	}
}

func TestReceiptsTampered(t *testing.T) {
	data, e := gen(t, Options{Conversations: 300, Seed: 12, Tamper: 1, MaxDocBytes: 128 << 10})
	check(t, data, e)
	kinds := map[string]int{}
	for _, r := range e.ReceiptList {
		kinds[r.Tamper]++
		want := tamperReasons[r.Tamper]
		if want == nil {
			t.Fatalf("line %d: tamper %q", r.Line, r.Tamper)
		}
		// Another receipt's transcript-edited may add a hash mismatch.
		got := slices.DeleteFunc(slices.Clone(r.Reasons), func(s string) bool {
			return s == "transcript-hash-mismatch" && !slices.Contains(want, s)
		})
		if !slices.Equal(got, want) {
			t.Errorf("line %d (%s): reasons %v, want %v", r.Line, r.Tamper, r.Reasons, want)
		}
		wantWithout := slices.DeleteFunc(slices.Clone(r.Reasons), func(s string) bool { return s == "envelope-key-not-pinned" })
		if !slices.Equal(r.ReasonsWithoutKeys, wantWithout) {
			t.Errorf("line %d (%s): reasons without keys %v", r.Line, r.Tamper, r.ReasonsWithoutKeys)
		}
	}
	for k := range tamperReasons {
		if kinds[k] == 0 {
			t.Errorf("tamper %s never drawn (%v)", k, kinds)
		}
	}
	if e.Receipts.Incomplete == 0 || e.Receipts.Invalid == 0 || e.ReceiptsWithoutKeys.Valid == 0 || e.Receipts.StatementsInvalid == 0 {
		t.Errorf("totals %+v / %+v", e.Receipts, e.ReceiptsWithoutKeys)
	}
}

func TestReceiptsWithFaults(t *testing.T) {
	data, e := gen(t, Options{Conversations: 600, Seed: 13, Faults: 0.4, Tamper: 0.3, MaxDocBytes: 32 << 10})
	check(t, data, e)
	for _, w := range []string{"tool-result-orphan", "tool-call-duplicate-id", "transcript-unhashable"} {
		if e.Warnings[w] == 0 {
			t.Errorf("warning %s never produced", w)
		}
	}
	if e.Transcripts.Unhashable != e.Warnings["transcript-unhashable"] || e.Transcripts.Hashed+e.Transcripts.Unhashable != e.Documents {
		t.Errorf("transcripts %+v", e.Transcripts)
	}
	for _, want := range []string{`\ud800 `, `1e400`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("output lacks %s", want)
		}
	}
}

func TestNoReceipts(t *testing.T) {
	data, e := gen(t, Options{Conversations: 100, Seed: 14, NoReceipts: true})
	check(t, data, e)
	if len(e.ReceiptList) != 0 || bytes.Contains(data, []byte("consensusReceipt")) {
		t.Error("receipts with NoReceipts")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "n.jsonl")
	if _, err := WriteFile(p, Options{Conversations: 10, Seed: 14, NoReceipts: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + ".keys.json"); !os.IsNotExist(err) {
		t.Error("keys.json written with NoReceipts")
	}
}

func TestKeysJSON(t *testing.T) {
	a, err := KeysJSON(5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KeysJSON(5)
	c, _ := KeysJSON(6)
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("keys not deterministic from the seed")
	}
	kr := loadKeyring(t, a)
	n := map[string]int{}
	for _, k := range kr.envelope {
		n[k.alg]++
		if _, ok := decodeB64(k.pub, keyLen[k.alg][0]); !ok {
			t.Errorf("bad envelope key %s", k.alg)
		}
	}
	if n["ed25519"] != 2 || n["ml-dsa-65"] != 2 || len(kr.agents) != poolAgents {
		t.Errorf("keyring: %v envelope keys, %d agents", n, len(kr.agents))
	}
	for id, ks := range kr.agents {
		if len(ks) != 1 || !regexp.MustCompile(`^agent-[0-9a-f]{12}$`).MatchString(id) {
			t.Errorf("agent %s: %v", id, ks)
		}
		if _, ok := decodeB64(ks[0].pub, keyLen[ks[0].alg][0]); !ok {
			t.Errorf("bad key of %s", id)
		}
	}
}

func TestReceiptListRoundTrip(t *testing.T) {
	_, e := gen(t, Options{Conversations: 40, Seed: 15, Tamper: 0.5})
	b, _ := json.Marshal(e)
	var back Expect
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, e) {
		t.Fatal("Expect does not round-trip", err)
	}
}
