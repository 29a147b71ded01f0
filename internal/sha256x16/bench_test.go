package sha256x16

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// batch is a benchmark's batch of messages.
type batch struct {
	name string
	msgs [][]byte
}

// around returns n messages of mean ± spread bytes (uniform).
func around(r *rand.Rand, n, mean, spread int) [][]byte {
	msgs := make([][]byte, n)
	for i := range msgs {
		msgs[i] = message(r.Uint64(), mean-spread+r.IntN(2*spread+1))
	}
	return msgs
}

// batches are the distributions of BenchmarkSumMany:
//   - tiny: 2000 messages of 170 ± 60 bytes, like the canonical forms of
//     bench/data/short-3000000.jsonl;
//   - medium: 500 messages of 24 KB ± 50%, the mean document of
//     bench/data/bench-1GiB.jsonl;
//   - mixed: 1000 messages, 500 tiny, 400 medium, 90 of 64 to 300 KB and
//     10 of 1 to 3 MB, shuffled.
func batches() []batch {
	r := rand.New(rand.NewPCG(11, 12))
	mixed := around(r, 500, 170, 60)
	mixed = append(mixed, around(r, 400, 24000, 12000)...)
	mixed = append(mixed, around(r, 90, 182<<10, 118<<10)...)
	mixed = append(mixed, around(r, 10, 2<<20, 1<<20)...)
	r.Shuffle(len(mixed), func(i, j int) { mixed[i], mixed[j] = mixed[j], mixed[i] })
	return []batch{
		{"tiny", around(r, 2000, 170, 60)},
		{"medium", around(r, 500, 24000, 12000)},
		{"mixed", mixed},
	}
}

func size(msgs [][]byte) (n int64) {
	for _, m := range msgs {
		n += int64(len(m))
	}
	return n
}

// BenchmarkSumMany compares SumMany on a Hasher with crypto/sha256 one
// message after another (impl=crypto), for each distribution of batches.
func BenchmarkSumMany(b *testing.B) {
	for _, bt := range batches() {
		sums := make([][32]byte, len(bt.msgs))
		b.Run("dist="+bt.name+"/impl=sha256x16", func(b *testing.B) {
			if !useKernel {
				b.Skip("no AVX-512 here")
			}
			var h Hasher
			b.SetBytes(size(bt.msgs))
			for b.Loop() {
				h.SumMany(bt.msgs, sums)
			}
		})
		b.Run("dist="+bt.name+"/impl=crypto", func(b *testing.B) {
			b.SetBytes(size(bt.msgs))
			for b.Loop() {
				for i, m := range bt.msgs {
					sums[i] = sha256.Sum256(m)
				}
			}
		})
	}
}

// BenchmarkFile hashes the lines of the file named by SHA256X16_BENCH_FILE
// (its first SHA256X16_BENCH_MB MB, 64 unless set), in batches of
// SHA256X16_BENCH_BATCH lines (1000 unless set): for example
// bench/data/bench-1GiB.jsonl or bench/data/short-3000000.jsonl. It is
// skipped when the variable is unset.
func BenchmarkFile(b *testing.B) {
	path := os.Getenv("SHA256X16_BENCH_FILE")
	if path == "" {
		b.Skip("SHA256X16_BENCH_FILE is not set")
	}
	mb, per := envInt(b, "SHA256X16_BENCH_MB", 64), envInt(b, "SHA256X16_BENCH_BATCH", 1000)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	total := 0
	for total < mb<<20 && sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
		total += len(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d lines, %d bytes, batches of %d", len(lines), total, per)
	sums := make([][32]byte, per)
	run := func(b *testing.B, sum func(msgs [][]byte, sums [][32]byte)) {
		b.SetBytes(int64(total))
		for b.Loop() {
			for i := 0; i < len(lines); i += per {
				sum(lines[i:min(i+per, len(lines))], sums)
			}
		}
	}
	b.Run("impl=sha256x16", func(b *testing.B) {
		if !useKernel {
			b.Skip("no AVX-512 here")
		}
		var h Hasher
		run(b, h.SumMany)
	})
	b.Run("impl=crypto", func(b *testing.B) { run(b, sumEach) })
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// BenchmarkKernel measures one call of the kernel over 16 busy lanes, for
// a few numbers of block steps; MB/s counts the 16 lanes' bytes.
func BenchmarkKernel(b *testing.B) {
	if !useKernel {
		b.Skip("no AVX-512 here")
	}
	for _, steps := range []int{1, 2, 4, 16, 256} {
		b.Run("steps="+strconv.Itoa(steps), func(b *testing.B) {
			var h Hasher
			for l := range lanes {
				h.inputs[l] = message(uint64(l), steps*64)
			}
			masks := h.masks[:steps]
			for k := range masks {
				masks[k] = 0xffff
			}
			b.SetBytes(int64(lanes * steps * 64))
			for b.Loop() {
				sha256X16Avx512(&h.digests, &h.scratch, &table, masks, h.inputs)
			}
		})
	}
}
