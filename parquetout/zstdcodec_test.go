package parquetout

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// hexPage is a 64 KiB PLAIN-encoded BYTE_ARRAY page of transcript hashes:
// each value a 4-byte length and 64 lowercase hex digits.
func hexPage() []byte {
	var b []byte
	for i := 0; len(b) < 64<<10; i++ {
		h := sha256.Sum256(binary.LittleEndian.AppendUint32(nil, uint32(i)))
		b = binary.LittleEndian.AppendUint32(b, 64)
		b = append(b, hex.EncodeToString(h[:])...)
	}
	return b
}

// TestZstdCodecPages checks the Parquet zstd codec on the kinds of pages
// the tables write: random hex must be entropy-coded (about 2×: 4 bits a
// digit), not stored raw as plain SpeedFastest does, and repetitive pages
// must still shrink by their matches. Every page must decode to itself,
// with Arrow's decoder and, where installed, the zstd command.
func TestZstdCodecPages(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	repeated := bytes.Repeat([]byte("\x0e\x00\x00\x00usage-metadata"), 4096)
	ints := make([]byte, 0, 64<<10)
	for i := 0; len(ints) < 64<<10; i++ {
		ints = binary.LittleEndian.AppendUint64(ints, uint64(1000+i%300))
	}
	for _, tc := range []struct {
		name     string
		page     []byte
		minRatio float64
	}{
		{"hex hashes", hexPage(), 1.8},
		{"one repeated string", repeated, 50},
		{"small integers", ints, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := codec.EncodeLevel(nil, tc.page, compress.DefaultCompressionLevel)
			if ratio := float64(len(tc.page)) / float64(len(enc)); ratio < tc.minRatio {
				t.Errorf("%d bytes compressed to %d: ratio %.2f, want at least %.2f", len(tc.page), len(enc), ratio, tc.minRatio)
			}
			dec := codec.Decode(make([]byte, len(tc.page)), enc)
			if !bytes.Equal(dec, tc.page) {
				t.Fatalf("Arrow's decoder gave %d bytes that differ from the page", len(dec))
			}
			zstdCmd, err := exec.LookPath("zstd")
			if err != nil {
				return
			}
			cmd := exec.Command(zstdCmd, "-dc")
			cmd.Stdin = bytes.NewReader(enc)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("zstd -dc: %v", err)
			}
			if !bytes.Equal(out, tc.page) {
				t.Fatalf("zstd -dc gave %d bytes that differ from the page", len(out))
			}
		})
	}
}

// BenchmarkZstdCodecHexPage measures the codec on a page of hex hashes.
func BenchmarkZstdCodecHexPage(b *testing.B) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		b.Fatal(err)
	}
	page := hexPage()
	var dst []byte
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		dst = codec.EncodeLevel(dst, page, compress.DefaultCompressionLevel)
	}
	b.ReportMetric(float64(len(page))/float64(len(dst)), "ratio")
}

// TestZstdDecodeDamaged: the codec decodes what it encodes, and damaged
// or oversized input to nothing and an error, which the Parquet reader
// returns (Arrow's Decode panicked; its DecodeWithError has no cap).
func TestZstdDecodeDamaged(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	page := hexPage()
	enc := codec.Encode(nil, page)
	spoiled := bytes.Clone(enc)
	for i := len(spoiled) / 2; i < len(spoiled); i++ {
		spoiled[i] = 0x55
	}
	for _, tc := range []struct {
		name string
		src  []byte
		cap  int
		want []byte
	}{
		{"whole", enc, len(page), page},
		{"spoiled", spoiled, len(page), nil},
		{"cut", enc[:len(enc)/2], len(page), nil},
		// more than the page header promises: the reader allocates dst
		// for what it promises
		{"larger than promised", enc, len(page) / 2, nil},
	} {
		got := codec.Decode(make([]byte, 0, tc.cap), tc.src)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%s: decoded %d bytes, want %d", tc.name, len(got), len(tc.want))
		}
		// What arrow-go v18's page reader calls.
		ec, ok := codec.(compress.ErrorCodec)
		if !ok {
			t.Fatalf("the zstd codec %T has no DecodeWithError", codec)
		}
		got, err := ec.DecodeWithError(make([]byte, 0, tc.cap), tc.src)
		if !bytes.Equal(got, tc.want) || (err == nil) != (tc.want != nil) {
			t.Errorf("%s: DecodeWithError gave %d bytes and error %v, want %d bytes", tc.name, len(got), err, len(tc.want))
		}
	}
}
