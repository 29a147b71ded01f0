package stream

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// BenchmarkZstdSource compares reading a checksummed zstd stream through
// the decoder alone (which checks the checksums itself and stops at the
// first that fails) with reading it frame by frame, checksums checked by
// zstdSource, as the Reader does.
func BenchmarkZstdSource(b *testing.B) {
	var plain bytes.Buffer
	for i := 0; plain.Len() < 64<<20; i++ {
		fmt.Fprintf(&plain, `{"id":"b%d","messages":[{"role":"user","content":"hello %d, how are you?"}]}`+"\n", i, i*7919)
	}
	for _, frameSize := range []int{64 << 10, 1 << 20, 64 << 20} {
		var comp []byte
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		for p := plain.Bytes(); len(p) > 0; p = p[min(len(p), frameSize):] {
			comp = enc.EncodeAll(p[:min(len(p), frameSize)], comp)
		}
		b.Run(fmt.Sprintf("frames=%dKiB/decoder", frameSize>>10), func(b *testing.B) {
			b.SetBytes(int64(plain.Len()))
			dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
			defer dec.Close()
			for b.Loop() {
				dec.Reset(bufio.NewReader(bytes.NewReader(comp)))
				if n, err := io.Copy(io.Discard, dec); err != nil || n != int64(plain.Len()) {
					b.Fatal(n, err)
				}
			}
		})
		b.Run(fmt.Sprintf("frames=%dKiB/zstdSource", frameSize>>10), func(b *testing.B) {
			b.SetBytes(int64(plain.Len()))
			dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false), zstd.IgnoreChecksum(true))
			defer dec.Close()
			for b.Loop() {
				z := &zstdSource{sp: frameSplitter{br: bufio.NewReaderSize(bytes.NewReader(comp), 64<<10)}, dec: dec, hash: xxhash.New()}
				if n, err := io.Copy(io.Discard, z); err != nil || n != int64(plain.Len()) || z.damaged.ranges != nil {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkXXH64 is the cost zstdSource adds per decompressed byte.
func BenchmarkXXH64(b *testing.B) {
	p := bytes.Repeat([]byte("0123456789abcdef"), 1<<14)
	b.SetBytes(int64(len(p)))
	h := xxhash.New()
	for b.Loop() {
		h.Reset()
		h.Write(p)
		h.Sum64()
	}
}
