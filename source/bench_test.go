package source

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// benchObject is the object the read benchmarks read: 256 MiB, or
// SOURCE_BENCH_MIB MiB, made once per process.
var benchObject = sync.OnceValue(func() []byte {
	mib := 256
	if s := os.Getenv("SOURCE_BENCH_MIB"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			mib = n
		}
	}
	return randomBytes(mib<<20, 99)
})

// BenchmarkRead reads one large object from gofakes3 on 127.0.0.1 with
// one streaming GET and with four ranged GETs in flight, and the same
// bytes from a local file, for comparison. Run it alone, once per count:
//
//	go test -run '^$' -bench BenchmarkRead -benchtime 1x -count 3 ./source
func BenchmarkRead(b *testing.B) {
	data := benchObject()
	s3 := newS3Server(b, "bench")
	s3.put(b, "bench", "big.jsonl", data)
	loc, err := Parse("s3://bench/big.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "big.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	c := testClient(b)
	ctx := context.Background()
	drain := func(b *testing.B, r io.Reader) {
		n, err := io.Copy(io.Discard, r)
		if err != nil || n != int64(len(data)) {
			b.Fatalf("read %d of %d bytes: %v", n, len(data), err)
		}
	}
	b.Run("s3-sequential", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r, err := c.Open(ctx, loc)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r)
			r.Close()
		}
	})
	b.Run("s3-parallel-K4", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			p, err := c.NewParallelReader(ctx, loc, WithConcurrency(4))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, p)
			p.Close()
		}
	})
	b.Run("local-file", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, err := os.Open(file)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, f)
			f.Close()
		}
	})
}

// BenchmarkChecksum is the cost of checking a whole object: MB/s of each
// checksum a store may tell, over 64 MiB in 256 KiB writes (as Reader
// feeds it). Run it alone:
//
//	go test -run '^$' -bench BenchmarkChecksum -benchtime 3x ./source
func BenchmarkChecksum(b *testing.B) {
	data := randomBytes(64<<20, 98)
	for _, alg := range []string{AlgCRC32C, AlgCRC32, AlgCRC64NVME, AlgSHA256, AlgSHA1, AlgMD5} {
		b.Run(alg, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				h := newChecksumHash(alg)
				for p := data; len(p) > 0; {
					n := min(len(p), 256<<10)
					h.Write(p[:n])
					p = p[n:]
				}
				h.Sum(nil)
			}
		})
	}
}
