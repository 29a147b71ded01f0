package sha256x16

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// paths runs f once on each way of hashing this machine has: the kernel
// (where the CPU has AVX-512) and the crypto/sha256 fallback.
func paths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useKernel
	defer func() { useKernel = saved }()
	if saved {
		t.Run("avx512", func(t *testing.T) { useKernel = true; f(t) })
	} else {
		t.Log("no AVX-512 here: the kernel is not tested")
	}
	t.Run("fallback", func(t *testing.T) { useKernel = false; f(t) })
}

// message returns n bytes that depend on seed.
func message(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// check hashes msgs with SumMany and with a reused Hasher and compares
// every digest with sha256.Sum256.
func check(t *testing.T, h *Hasher, msgs [][]byte) {
	t.Helper()
	for _, name := range []string{"SumMany", "Hasher"} {
		sums := make([][32]byte, len(msgs)+1)
		sentinel := [32]byte{1, 2, 3}
		sums[len(msgs)] = sentinel
		if name == "SumMany" {
			SumMany(msgs, sums)
		} else {
			h.SumMany(msgs, sums)
		}
		for i, m := range msgs {
			if want := sha256.Sum256(m); sums[i] != want {
				t.Fatalf("%s: message %d of %d (%d bytes): got %x, want %x", name, i, len(msgs), len(m), sums[i], want)
			}
		}
		if sums[len(msgs)] != sentinel {
			t.Fatalf("%s wrote past len(msgs)", name)
		}
	}
}

// boundaries are lengths next to the edges that matter: blocks, the
// padding that spills into a second block, copyMax, and long runs.
func boundaries() []int {
	var ns []int
	for _, base := range []int{64, 128, 192, 256, 512, 960, 1024, 1088, 4096, 65536} {
		for d := -10; d <= 10; d++ {
			ns = append(ns, base+d)
		}
	}
	for d := -3; d <= 3; d++ {
		ns = append(ns, copyMax+d, copyMax+64+d, maxSteps*64+d, 2*maxSteps*64+d)
	}
	return ns
}

func TestLengths(t *testing.T) {
	lengths := make([]int, 0, 400)
	for n := range 301 {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, boundaries()...)
	paths(t, func(t *testing.T) {
		var h Hasher
		// Every length in a batch of its own, 20 messages so that all
		// 16 lanes take one, and some lanes a second.
		for _, n := range lengths {
			msgs := make([][]byte, 20)
			for i := range msgs {
				msgs[i] = message(uint64(i), n)
			}
			check(t, &h, msgs)
		}
		// All lengths in one batch, in order and reversed.
		msgs := make([][]byte, len(lengths))
		for i, n := range lengths {
			msgs[i] = message(uint64(1000+i), n)
		}
		check(t, &h, msgs)
		for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
			msgs[i], msgs[j] = msgs[j], msgs[i]
		}
		check(t, &h, msgs)
	})
}

func TestBatches(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randLen := func() int {
		switch r.IntN(4) {
		case 0:
			return r.IntN(300)
		case 1:
			return r.IntN(4096)
		case 2:
			return 12000 + r.IntN(24000)
		default:
			return r.IntN(200 << 10)
		}
	}
	paths(t, func(t *testing.T) {
		var h Hasher
		check(t, &h, nil)
		check(t, &h, [][]byte{})
		for n := 1; n <= 40; n++ {
			for rep := range 3 {
				msgs := make([][]byte, n)
				for i := range msgs {
					msgs[i] = message(uint64(n*100+rep*10+i), randLen())
				}
				check(t, &h, msgs)
			}
		}
		// Random lengths up to 200 KB, a batch of 300.
		msgs := make([][]byte, 300)
		for i := range msgs {
			msgs[i] = message(uint64(5000+i), r.IntN(200<<10))
		}
		check(t, &h, msgs)
		// Long messages last and first, so that they leave the kernel
		// for crypto/sha256 at the end, in the middle of their blocks.
		for _, big := range []int{1 << 20, 3<<20 + 17} {
			msgs := make([][]byte, 40)
			for i := range msgs {
				msgs[i] = message(uint64(9000+i), 100+r.IntN(3000))
			}
			msgs[0] = message(1, big)
			msgs[len(msgs)-1] = message(2, big+1)
			msgs[len(msgs)-2] = message(3, big/2+5)
			check(t, &h, msgs)
		}
		// More short messages than a chunk, with every size of group
		// left over.
		for _, n := range []int{chunkMsgs - 1, chunkMsgs, chunkMsgs + 1, chunkMsgs + 9, 2*chunkMsgs + 15} {
			msgs := make([][]byte, n)
			for i := range msgs {
				msgs[i] = message(uint64(i), r.IntN(copyMax+1))
			}
			msgs[n/2] = message(1, 70000) // and one long one
			check(t, &h, msgs)
		}
		// The same message slice several times, and slices that share
		// one backing array.
		one := message(7, 5000)
		check(t, &h, [][]byte{one, one, one, one, one, one, one, one, one, one, one[1:], one[:4999], one[64:], one[:64], one[:0], one[3:70], one[100:1200]})
	})
}

// TestKernelMasks checks the kernel's contract as sha256X16Avx512's doc
// comment states it, against crypto/sha256: random states, random masks
// per step, and a lane in mask[k] reading its block at offset 64*k.
func TestKernelMasks(t *testing.T) {
	if !useKernel {
		t.Skip("no AVX-512 kernel here")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		steps := 1 + r.IntN(40)
		if trial%10 == 0 {
			steps = maxSteps
		}
		var inputs [lanes][]byte
		for l := range inputs {
			inputs[l] = message(uint64(trial*lanes+l), steps*64)
		}
		masks := make([]uint64, steps)
		for k := range masks {
			masks[k] = r.Uint64() // bits above 15 must not matter
			if trial%7 == 0 {
				masks[k] = 0xffff
			}
		}
		// Start each lane from the state after a random prefix.
		var h Hasher
		ref := make([]marshaler, lanes)
		for l := range lanes {
			ref[l] = sha256.New().(marshaler)
			prefix := message(uint64(trial), 64*r.IntN(3))
			ref[l].Write(prefix)
			st := words(t, ref[l])
			for w := range 8 {
				binary.LittleEndian.PutUint32(h.digests[64*w+4*l:], st[w])
			}
		}
		sha256X16Avx512(&h.digests, &h.scratch, &table, masks, inputs)
		for l := range lanes {
			for k := range steps {
				if masks[k]&(1<<l) != 0 {
					ref[l].Write(inputs[l][64*k : 64*k+64])
				}
			}
			want := words(t, ref[l])
			for w := range 8 {
				if got := binary.LittleEndian.Uint32(h.digests[64*w+4*l:]); got != want[w] {
					t.Fatalf("trial %d (%d steps), lane %d, word %d: got %08x, want %08x", trial, steps, l, w, got, want[w])
				}
			}
		}
	}
}

type marshaler interface {
	Write([]byte) (int, error)
	encoding.BinaryMarshaler
}

// words returns the chaining value of d, which has hashed whole blocks.
func words(t *testing.T, d marshaler) (h [8]uint32) {
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for w := range h {
		h[w] = binary.BigEndian.Uint32(b[4+4*w:])
	}
	return h
}

func TestAllocs(t *testing.T) {
	msgs := make([][]byte, 500)
	for i := range msgs {
		msgs[i] = message(uint64(i), []int{170, 900, 2000, 24000, 70000}[i%5])
	}
	msgs[len(msgs)-1] = message(1, 1<<20) // goes through the drain
	sums := make([][32]byte, len(msgs))
	paths(t, func(t *testing.T) {
		var h Hasher
		h.SumMany(msgs, sums)
		if n := testing.AllocsPerRun(20, func() { h.SumMany(msgs, sums) }); n != 0 {
			t.Errorf("Hasher.SumMany: %v allocations a call", n)
		}
		if raceEnabled {
			return // sync.Pool drops Hashers at random under the race detector
		}
		SumMany(msgs, sums)
		if n := testing.AllocsPerRun(20, func() { SumMany(msgs, sums) }); n != 0 {
			t.Errorf("SumMany: %v allocations a call", n)
		}
	})
}

func TestShortSums(t *testing.T) {
	paths(t, func(t *testing.T) {
		msgs := make([][]byte, 20)
		defer func() {
			if recover() == nil {
				t.Error("no panic with len(sums) < len(msgs)")
			}
		}()
		SumMany(msgs, make([][32]byte, 19))
	})
}

// TestHasherReleasesMessages checks that a Hasher keeps no slice of the
// caller's messages after SumMany.
func TestHasherReleasesMessages(t *testing.T) {
	var h Hasher
	msgs := make([][]byte, 40)
	for i := range msgs {
		msgs[i] = message(uint64(i), 3000)
	}
	h.SumMany(msgs, make([][32]byte, len(msgs)))
	for l := range lanes {
		if h.inputs[l] != nil || h.lane[l].seg != nil {
			t.Fatalf("lane %d still holds a slice", l)
		}
	}
}

// FuzzSumMany splits the input into messages at every byte equal to its
// first byte, each message repeated 1 + data[1]%64 times (to reach past a
// few blocks), and compares the digests with crypto/sha256 on both paths.
func FuzzSumMany(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00"))
	f.Add([]byte(",\x05a,bb,ccc,dddd,,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v"))
	f.Add(append([]byte{0xff, 63}, bytes.Repeat([]byte("0123456789abcdef\xff"), 40)...))
	f.Add(append([]byte{'|', 200}, bytes.Repeat([]byte("a message of some length|"), 30)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs [][]byte
		if len(data) >= 2 {
			rep := 1 + int(data[1])%64
			for _, m := range bytes.Split(data[2:], data[:1]) {
				msgs = append(msgs, bytes.Repeat(m, rep))
			}
		}
		saved := useKernel
		defer func() { useKernel = saved }()
		for _, k := range []bool{saved, false} {
			useKernel = k
			sums := make([][32]byte, len(msgs))
			SumMany(msgs, sums)
			for i, m := range msgs {
				if want := sha256.Sum256(m); sums[i] != want {
					t.Fatalf("kernel %v: message %d of %d (%d bytes): got %x, want %x", k, i, len(msgs), len(m), sums[i], want)
				}
			}
		}
	})
}

func ExampleSumMany() {
	msgs := [][]byte{[]byte("abc"), []byte(""), []byte("The quick brown fox jumps over the lazy dog")}
	sums := make([][32]byte, len(msgs))
	SumMany(msgs, sums)
	for _, s := range sums {
		fmt.Printf("%x\n", s[:4])
	}
	// Output:
	// ba7816bf
	// e3b0c442
	// d7a8fbb3
}
