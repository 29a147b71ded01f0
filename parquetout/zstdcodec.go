package parquetout

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/klauspost/compress/zstd"
)

// pooledZstd replaces Arrow's Parquet zstd codec. arrow-go v17's
// EncodeLevel built a new zstd encoder (and its history buffers) for every
// page it compressed, which a profile of run on a 1 GiB archive showed as
// 0.8 GB of allocations and a quarter of a GB of extra RSS. v18 keeps
// encoders in a sync.Pool per level, which each garbage collection may
// empty, and compresses at SpeedDefault at the default level; here one
// encoder per level is kept for the process and shared (EncodeAll is safe
// for concurrent use), at the level below.
//
// The default level is zstd's fastest (level 1) with entropy coding of
// literals kept on where no match is found. Pages of tables hold many
// columns of random hex (ids, transcript hashes); at SpeedDefault the
// double-fast match finder ran at 110 MB/s on them, a quarter of the CPU of
// extract on tiny documents, and at plain SpeedFastest they were stored raw
// (spurious 4-byte matches made every block look incompressible). With
// WithAllLitEntropyCompression they are Huffman-coded at 840 MB/s: on 1M
// tiny documents the tables came out 3% smaller and extract took 17% less
// CPU (see parquetout/zstdcodec_test.go and the closing note of issue 12).
//
// Each table encodes its pages on a goroutine of its own (see
// tableWriter), so the shared encoder holds zstdConcurrency states: with
// one, the tables' encoders took turns compressing. The bytes do not
// depend on which state compresses a page (EncodeAll starts each page
// afresh).
//
// Decoding is zstd's too, with a cap at the page's size (see
// DecodeWithError).
type pooledZstd struct {
	compress.Codec
}

var (
	zstdEncMu sync.Mutex
	zstdEncs  = map[zstd.EncoderLevel]*zstd.Encoder{}
)

func zstdEncoder(level int) *zstd.Encoder {
	l := zstd.SpeedFastest
	if level != compress.DefaultCompressionLevel {
		l = zstd.EncoderLevelFromZstd(level)
	}
	zstdEncMu.Lock()
	defer zstdEncMu.Unlock()
	enc, ok := zstdEncs[l]
	if !ok {
		enc, _ = zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
			zstd.WithAllLitEntropyCompression(true), zstd.WithEncoderConcurrency(zstdConcurrency()),
			zstd.WithWindowSize(zstdPageWindow))
		zstdEncs[l] = enc
	}
	return enc
}

// zstdPageWindow is the encoder's window. A page is compressed on its own
// and holds about a data page (1 MiB, arrow-go's default) or a dictionary
// page (capped at 1 MiB) of bytes, a little more where the batch that
// crossed the limit ends it, so a window of twice that finds the matches
// zstd's default (8 MiB) would in all but outsize pages. Each encoder state
// keeps a history of twice the window, which the garbage collector counts
// as live heap whether or not its pages are touched: 4 MiB instead of 16.
const zstdPageWindow = 2 << 20

// zstdConcurrency is how many pages a shared encoder compresses at once:
// one per table that may be written at once, and no more than the CPUs Go
// uses (each state holds some 1 MiB of match tables at the default level).
func zstdConcurrency() int {
	return max(1, min(runtime.GOMAXPROCS(0), len(tabledef.Names)))
}

// Encode compresses src at the default level.
func (pooledZstd) Encode(dst, src []byte) []byte {
	return zstdEncoder(compress.DefaultCompressionLevel).EncodeAll(src, dst[:0])
}

// EncodeLevel compresses src at level with a shared encoder.
func (pooledZstd) EncodeLevel(dst, src []byte, level int) []byte {
	return zstdEncoder(level).EncodeAll(src, dst[:0])
}

var (
	zstdDecOnce sync.Once
	zstdDec     *zstd.Decoder
)

// DecodeWithError decompresses src into dst, to at most cap(dst) bytes
// (the page's uncompressed size, which the Parquet reader allocates dst
// for): a page that decodes to more is an error, as damaged input is.
// arrow-go v18's page reader calls it (compress.ErrorCodec) and returns
// its error; without it the reader would call the DecodeWithError of
// Arrow's codec, embedded, which decodes past cap(dst) without a limit.
func (pooledZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	zstdDecOnce.Do(func() {
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true))
	})
	out, err := zstdDec.DecodeAll(src, dst[:0])
	if err != nil {
		return nil, fmt.Errorf("zstd page: %w", err)
	}
	return out, nil
}

// Decode is DecodeWithError, damaged input decoding to nothing (Arrow's
// Decode panics), for callers of the Codec interface alone.
func (z pooledZstd) Decode(dst, src []byte) []byte {
	out, err := z.DecodeWithError(dst, src)
	if err != nil {
		return nil
	}
	return out
}

func init() {
	arrowZstd, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err)
	}
	compress.RegisterCodec(compress.Codecs.Zstd, pooledZstd{Codec: arrowZstd})
}
