package verify

import (
	stded25519 "crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	circled "github.com/cloudflare/circl/sign/ed25519"
	voied "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/convbatch/convbatch/jsonscan"
)

// BenchmarkReceipt checks one whole receipt (payload hash, envelope
// signature, three statements, the self hash) per op, with the envelope and
// every statement on the named algorithm. Receipts per second per core is
// 1e9 / ns/op with -cpu 1. "ed25519-repeated" checks the same receipt through a SignatureCache: every
// op after the first is four hits, the cost of a receipt an archive repeats.
func BenchmarkReceipt(b *testing.B) {
	for _, name := range []string{"ed25519", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87", "ed25519-repeated"} {
		b.Run(name, func(b *testing.B) {
			alg, repeated := strings.CutSuffix(name, "-repeated")
			var opts []CheckerOption
			if repeated {
				opts = []CheckerOption{WithSignatureCache(NewSignatureCache(DefaultSignatureCacheEntries))}
			}
			t := &testing.T{}
			f := newFixture(t, alg)
			for i := range f.agents {
				f.agents[i] = newSigner(t, alg, byte(10+i))
			}
			stmts := f.payload["statements"].([]any)
			for i, a := range f.agents {
				st := map[string]any{"agentId": fmt.Sprintf("agent-%d", i), "stance": "approve", "algorithm": a.alg.Name, "public_key": a.pub()}
				st["signature"] = a.sign(t, st)
				stmts[i] = st
			}
			f.seal()
			doc, _ := json.Marshal(f.conv)
			var tape jsonscan.Tape
			if err := tape.Parse(doc, 0); err != nil {
				b.Fatal(err)
			}
			env := tape.Lookup(0, "consensusReceipt")
			c := NewReceiptChecker(nil, opts...)
			agents := []string{"agent-0", "agent-1", "agent-2"}
			if chk := c.CheckReceipt(&tape, env, agents); chk.Reasons != 0 || chk.StatementsValid != 3 {
				b.Fatalf("fixture receipt not valid: %v", chk.Reasons.Codes())
			}
			b.ResetTimer()
			for range b.N {
				c.CheckReceipt(&tape, env, agents)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
		})
	}
}

// ed25519BenchSet is n Ed25519 signatures by n keys over statement-sized
// messages.
func ed25519BenchSet(n int) (pubs, msgs, sigs [][]byte) {
	for i := range n {
		seed := make([]byte, stded25519.SeedSize)
		seed[0], seed[1] = byte(i), byte(i>>8)
		sk := stded25519.NewKeyFromSeed(seed)
		msg := fmt.Appendf(nil, `{"agentId":"agent-%d","algorithm":"ed25519","public_key":"%s","stance":"approve"}`, i, base64.StdEncoding.EncodeToString(sk[32:]))
		pubs, msgs, sigs = append(pubs, sk[32:]), append(msgs, msg), append(sigs, stded25519.Sign(sk, msg))
	}
	return pubs, msgs, sigs
}

// BenchmarkEd25519 is the cost of one Ed25519 verification (ns/op is per
// signature; run with -cpu 1) by each library considered: crypto/ed25519,
// circl (what verify used before), curve25519-voi with the profile's
// options (single, and with the key expanded once as the key cache keeps
// it: "voi-expanded"; "voi-expand" expands the key each time, a key seen
// once), and voi's batch verification (cofactored, so not usable: see
// ed25519Options) in batches of 4 (a receipt's envelope and three
// statements) and 64.
func BenchmarkEd25519(b *testing.B) {
	const n = 64
	pubs, msgs, sigs := ed25519BenchSet(n)
	single := func(name string, verify func(i int) bool) {
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				if !verify(i % n) {
					b.Fatal("refused")
				}
			}
		})
	}
	single("stdlib", func(i int) bool { return stded25519.Verify(pubs[i], msgs[i], sigs[i]) })
	single("circl", func(i int) bool { return circled.Verify(pubs[i], msgs[i], sigs[i]) })
	single("voi", func(i int) bool { return voied.VerifyWithOptions(pubs[i], msgs[i], sigs[i], ed25519Options) })
	single("voi-expand", func(i int) bool {
		k, err := voied.NewExpandedPublicKey(pubs[i])
		return err == nil && voied.VerifyExpandedWithOptions(k, msgs[i], sigs[i], ed25519Options)
	})
	expanded := make([]*voied.ExpandedPublicKey, n)
	for i := range expanded {
		expanded[i], _ = voied.NewExpandedPublicKey(pubs[i])
	}
	single("voi-expanded", func(i int) bool {
		return voied.VerifyExpandedWithOptions(expanded[i], msgs[i], sigs[i], ed25519Options)
	})
	fips := &voied.Options{Verify: voied.VerifyOptionsFIPS_186_5}
	for _, size := range []int{4, n} {
		b.Run(fmt.Sprintf("voi-batch-%d", size), func(b *testing.B) {
			v := voied.NewBatchVerifierWithCapacity(size)
			for i := 0; i < b.N; i += size {
				v.Reset()
				for j := range size {
					v.AddExpandedWithOptions(expanded[j], msgs[j], sigs[j], fips)
				}
				if !v.VerifyBatchOnly(nil) {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkSignatureCache is what the cache adds to a verification: a miss
// (the digest over the key, signature and a statement-sized message, a
// lookup and an add) for each algorithm's sizes, and a hit.
func BenchmarkSignatureCache(b *testing.B) {
	msg := make([]byte, 200)
	for _, name := range []string{"ed25519", "ml-dsa-65"} {
		alg, _ := LookupAlgorithm(name)
		pub, sig := make([]byte, alg.Scheme.PublicKeySize()), make([]byte, alg.Scheme.SignatureSize())
		b.Run(name+"-miss", func(b *testing.B) {
			c := NewSignatureCache(DefaultSignatureCacheEntries)
			var h sigHasher
			for i := range b.N {
				binary.LittleEndian.PutUint64(msg, uint64(i))
				d := h.digest(name, pub, msg, sig)
				if _, found := c.lookup(&d); !found {
					c.add(&d, true)
				}
			}
		})
		b.Run(name+"-hit", func(b *testing.B) {
			c := NewSignatureCache(DefaultSignatureCacheEntries)
			var h sigHasher
			d := h.digest(name, pub, msg, sig)
			c.add(&d, true)
			for range b.N {
				d := h.digest(name, pub, msg, sig)
				if _, found := c.lookup(&d); !found {
					b.Fatal("miss")
				}
			}
		})
	}
}

// BenchmarkEd25519Interleaved runs the libraries of BenchmarkEd25519 in
// turn, 64 signatures each, and reports for each the fastest round's cost
// per signature (ns/sig-NAME). On a shared machine the minimum is the
// estimate that other processes disturb least, and interleaving exposes
// every library to the same load. Its ns/op is meaningless.
func BenchmarkEd25519Interleaved(b *testing.B) {
	const n = 64
	pubs, msgs, sigs := ed25519BenchSet(n)
	expanded := make([]*voied.ExpandedPublicKey, n)
	for i := range expanded {
		expanded[i], _ = voied.NewExpandedPublicKey(pubs[i])
	}
	fips := &voied.Options{Verify: voied.VerifyOptionsFIPS_186_5}
	batch := voied.NewBatchVerifierWithCapacity(n)
	libs := []struct {
		name  string
		round func() bool
	}{
		{"stdlib", func() bool {
			ok := true
			for i := range n {
				ok = stded25519.Verify(pubs[i], msgs[i], sigs[i]) && ok
			}
			return ok
		}},
		{"circl", func() bool {
			ok := true
			for i := range n {
				ok = circled.Verify(pubs[i], msgs[i], sigs[i]) && ok
			}
			return ok
		}},
		{"voi", func() bool {
			ok := true
			for i := range n {
				ok = voied.VerifyWithOptions(pubs[i], msgs[i], sigs[i], ed25519Options) && ok
			}
			return ok
		}},
		{"voi-expand", func() bool {
			ok := true
			for i := range n {
				k, err := voied.NewExpandedPublicKey(pubs[i])
				ok = err == nil && voied.VerifyExpandedWithOptions(k, msgs[i], sigs[i], ed25519Options) && ok
			}
			return ok
		}},
		{"voi-expanded", func() bool {
			ok := true
			for i := range n {
				ok = voied.VerifyExpandedWithOptions(expanded[i], msgs[i], sigs[i], ed25519Options) && ok
			}
			return ok
		}},
		{"voi-batch-4", func() bool {
			ok := true
			for i := 0; i < n; i += 4 {
				batch.Reset()
				for j := i; j < i+4; j++ {
					batch.AddExpandedWithOptions(expanded[j], msgs[j], sigs[j], fips)
				}
				ok = batch.VerifyBatchOnly(nil) && ok
			}
			return ok
		}},
		{"voi-batch-64", func() bool {
			batch.Reset()
			for j := range n {
				batch.AddExpandedWithOptions(expanded[j], msgs[j], sigs[j], fips)
			}
			return batch.VerifyBatchOnly(nil)
		}},
	}
	best := make([]time.Duration, len(libs))
	for range b.N {
		for i, l := range libs {
			start := time.Now()
			if !l.round() {
				b.Fatalf("%s refused", l.name)
			}
			if d := time.Since(start); best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	for i, l := range libs {
		b.ReportMetric(float64(best[i].Nanoseconds())/n, "ns/sig-"+l.name)
	}
}

// BenchmarkSignatureCacheShared is the cost of a hit on one cache shared by
// every goroutine (run with -cpu 1,2,...): the striped locks and counters
// the workers contend on.
func BenchmarkSignatureCacheShared(b *testing.B) {
	c := NewSignatureCache(DefaultSignatureCacheEntries)
	msg, pub, sig := make([]byte, 200), make([]byte, 32), make([]byte, 64)
	var h sigHasher
	var ds [][32]byte
	for i := range 1024 {
		binary.LittleEndian.PutUint64(msg, uint64(i))
		d := h.digest("ed25519", pub, msg, sig)
		c.add(&d, true)
		ds = append(ds, d)
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, found := c.lookup(&ds[i%len(ds)]); !found {
				b.Error("miss")
				return
			}
			i++
		}
	})
}
