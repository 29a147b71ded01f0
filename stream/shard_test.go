package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/codes"
)

// flatRec is a Record with its bytes copied, the kept bytes of a
// too-large line read from the spool, for comparing framings.
type flatRec struct {
	Line, Offset, Length int64
	Raw, Data            string
	RawNil, DataNil      bool
	Kind                 Kind
	Reason               codes.Reject
	CR, BOM              bool
	Compacted, WholeFile bool
	Spooled              string
	SpoolLen             int64
}

func flatten(t testing.TB, rec Record) flatRec {
	t.Helper()
	kept, err := io.ReadAll(rec.Spool.Reader())
	if err != nil {
		t.Fatal(err)
	}
	return flatRec{
		Line: rec.Line, Offset: rec.Offset, Length: rec.Length,
		Raw: string(rec.Raw), Data: string(rec.Data), RawNil: rec.Raw == nil, DataNil: rec.Data == nil,
		Kind: rec.Kind, Reason: rec.Reason, CR: rec.CR, BOM: rec.BOM,
		Compacted: rec.Compacted, WholeFile: rec.WholeFile,
		Spooled: string(kept), SpoolLen: rec.Spool.Len,
	}
}

// frameAll reads r to its end.
func frameAll(t testing.TB, r *Reader) []flatRec {
	t.Helper()
	var out []flatRec
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, flatten(t, rec))
	}
}

// bytesFrom gives the bytes of data from off, ending in fault when it is
// not nil (else in io.EOF).
func bytesFrom(data []byte, off int64, fault error) io.Reader {
	p := data[min(off, int64(len(data))):]
	if fault == nil {
		return bytes.NewReader(p)
	}
	return &failingReader{data: bytes.Clone(p), err: fault}
}

// shardRun is what the Readers of a file's shards framed.
type shardRun struct {
	recs    []flatRec
	readers []*Reader
}

// readShards frames data as the shards cut at cuts (sorted, in [0,
// len(data)]), the last ending at last; each shard has a fresh Reader of
// the bytes from its start-1 and the newlines of the shards before it.
func readShards(t testing.TB, data []byte, cuts []int64, last int64, fault error, opts ...Option) shardRun {
	t.Helper()
	bounds := append([]int64{0}, cuts...)
	bounds = append(bounds, last)
	var run shardRun
	var newlines int64
	for i := 0; i+1 < len(bounds); i++ {
		start, end := bounds[i], bounds[i+1]
		r, err := NewReader(bytesFrom(data, max(start-1, 0), fault), "shard", ShapeJSONL, append(slices.Clone(opts), WithShard(start, end, newlines))...)
		if err != nil {
			t.Fatal(err)
		}
		recs := frameAll(t, r)
		if got := r.Lines(); got != int64(len(recs)) {
			t.Fatalf("shard [%d, %d): Lines %d, %d records", start, end, got, len(recs))
		}
		run.recs = append(run.recs, recs...)
		run.readers = append(run.readers, r)
		r.Close()
		n, err := CountNewlines(bytes.NewReader(data[min(start, int64(len(data))):min(end, int64(len(data)))]))
		if err != nil {
			t.Fatal(err)
		}
		newlines += n
	}
	return run
}

// checkShards compares the framing of data in the shards cut at cuts
// with that of one Reader of the whole file.
func checkShards(t testing.TB, data []byte, cuts []int64, last int64, fault error, opts ...Option) {
	t.Helper()
	whole, err := NewReader(bytesFrom(data, 0, fault), "whole", ShapeJSONL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	want := frameAll(t, whole)
	run := readShards(t, data, cuts, last, fault, opts...)
	if len(run.recs) != len(want) {
		t.Fatalf("cuts %v: %d records, whole file %d\n got %+v\nwant %+v", cuts, len(run.recs), len(want), run.recs, want)
	}
	for i := range want {
		if run.recs[i] != want[i] {
			t.Fatalf("cuts %v: record %d\n got %+v\nwant %+v", cuts, i, run.recs[i], want[i])
		}
	}
	// Each shard ends where the next one's first line begins; the last
	// one where the whole file's Reader ended, with its input error.
	for i, r := range run.readers {
		if i+1 < len(run.readers) {
			if next := run.readers[i+1]; next.Lines() > 0 && r.Offset() != run.recs[lineIndex(run.readers, i+1)].Offset {
				t.Fatalf("cuts %v: shard %d ends at %d, shard %d begins at %d", cuts, i, r.Offset(), i+1, run.recs[lineIndex(run.readers, i+1)].Offset)
			}
			if fault == nil && streamFault(r.InputErr()) != nil {
				t.Fatalf("cuts %v: shard %d: %v", cuts, i, r.InputErr())
			}
			continue
		}
		if r.Offset() != whole.Offset() {
			t.Fatalf("cuts %v: last shard ends at %d, whole file at %d", cuts, r.Offset(), whole.Offset())
		}
		got, wantErr := r.InputErr(), whole.InputErr()
		if wantErr != nil && errors.Is(wantErr, ErrTruncated) {
			// A last line without LF that does not parse: reported by
			// the one shard that frames it, which need not be the last.
			got = nil
			for _, sr := range run.readers {
				if ie := sr.InputErr(); ie != nil && errors.Is(ie, ErrTruncated) {
					if got != nil {
						t.Fatalf("cuts %v: two shards report %v", cuts, ie)
					}
					got = ie
				}
			}
		}
		if (got == nil) != (wantErr == nil) || got != nil && (got.Offset != wantErr.Offset || got.Reason != wantErr.Reason || got.Err.Error() != wantErr.Err.Error()) {
			t.Fatalf("cuts %v: last shard input error %v, whole file %v", cuts, got, wantErr)
		}
	}
}

// lineIndex returns the index in the run's records of shard i's first.
func lineIndex(readers []*Reader, i int) int {
	n := 0
	for _, r := range readers[:i] {
		n += int(r.Lines())
	}
	return n
}

func TestCountNewlines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"", 0},
		{"abc", 0},
		{"\n", 1},
		{"a\r\nb\n\n", 3},
		{strings.Repeat("x\n", 3<<20), 3 << 20},
	} {
		got, err := CountNewlines(strings.NewReader(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("%.20q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	boom := errors.New("boom")
	if n, err := CountNewlines(&failingReader{data: []byte("a\nb\n"), err: boom}); n != 2 || err != boom {
		t.Fatalf("failing reader: %d, %v", n, err)
	}
}

func TestShardFraming(t *testing.T) {
	// Lines begin at 0 ("a"), 2 ("bb"), 5 (""), 6 ("cc\r"), 10 ("ddd",
	// no final LF); LFs at 1, 4, 5 and 9.
	const data = "a\nbb\n\ncc\r\nddd"
	type line struct {
		line, off int64
		raw       string
	}
	for _, tc := range []struct {
		start, end int64
		want       []line
		offset     int64 // Offset at the end
	}{
		{0, 0, nil, 0},
		{0, 1, []line{{1, 0, "a"}}, 2},
		{0, 2, []line{{1, 0, "a"}}, 2},
		{0, 3, []line{{1, 0, "a"}, {2, 2, "bb"}}, 5},
		{1, 2, nil, 2},
		{2, 3, []line{{2, 2, "bb"}}, 5},
		{3, 6, []line{{3, 5, ""}}, 6},
		{5, 6, []line{{3, 5, ""}}, 6},
		{6, 7, []line{{4, 6, "cc\r"}}, 10},
		{7, 10, nil, 10},
		{6, 100, []line{{4, 6, "cc\r"}, {5, 10, "ddd"}}, 13},
		{6, math.MaxInt64, []line{{4, 6, "cc\r"}, {5, 10, "ddd"}}, 13},
		{10, 11, []line{{5, 10, "ddd"}}, 13},
		{11, 13, nil, 13},
		{13, 13, nil, 13},
		{20, 30, nil, 20},
	} {
		t.Run(fmt.Sprintf("%d-%d", tc.start, tc.end), func(t *testing.T) {
			before, _ := CountNewlines(strings.NewReader(data[:min(tc.start, int64(len(data)))]))
			r, err := NewReader(bytesFrom([]byte(data), max(tc.start-1, 0), nil), "t", ShapeJSONL, WithShard(tc.start, tc.end, before))
			if err != nil {
				t.Fatal(err)
			}
			recs := frameAll(t, r)
			var got []line
			for _, rec := range recs {
				got = append(got, line{rec.Line, rec.Offset, rec.Raw})
			}
			if !slices.Equal(got, tc.want) || r.Lines() != int64(len(tc.want)) || r.Offset() != tc.offset || streamFault(r.InputErr()) != nil {
				t.Fatalf("got %v, Lines %d, Offset %d, %v; want %v, Offset %d", got, r.Lines(), r.Offset(), r.InputErr(), tc.want, tc.offset)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("after the end: %v", err)
			}
		})
	}
}

// TestShardBOM: only the shard holding line 1 drops (or, strict, refuses)
// a BOM; a BOM at the start of a later line, even the first of a shard, is
// data.
func TestShardBOM(t *testing.T) {
	data := []byte("\xef\xbb\xbf{}\n\xef\xbb\xbf{}\r\n")
	for _, strict := range []bool{false, true} {
		for _, cuts := range [][]int64{nil, {1}, {3}, {5}, {6}, {7}, {1, 2, 3, 4, 5, 6, 7, 8}} {
			checkShards(t, data, cuts, int64(len(data)), nil, WithStrict(strict))
		}
		r, _ := NewReader(bytesFrom(data, 5, nil), "t", ShapeJSONL, WithShard(6, 100, 1), WithStrict(strict))
		recs := frameAll(t, r)
		if len(recs) != 1 || recs[0].Line != 2 || recs[0].BOM || recs[0].Data != "\xef\xbb\xbf{}" || !recs[0].CR {
			t.Fatalf("strict %v: line 2: %+v", strict, recs)
		}
	}
}

func TestShardRefused(t *testing.T) {
	for _, opt := range []Option{WithShard(-1, 2, 0), WithShard(5, 4, 0), WithShard(3, 5, 4), WithShard(0, 5, 1), WithShard(2, 5, -1)} {
		if _, err := NewReader(strings.NewReader(""), "x", ShapeJSONL, opt); err == nil {
			t.Error("bad shard accepted")
		}
	}
	for _, tc := range []struct {
		shape Shape
		in    []byte
	}{
		{ShapeJSONLZstd, nil},
		{ShapeJSONLGzip, nil},
		{ShapeJSON, []byte("{}")},
		{ShapeUnknown, zstdMagic},
		{ShapeUnknown, append(bytes.Clone(gzipMagic), 0, 0)},
	} {
		_, err := NewReader(bytes.NewReader(tc.in), "x", tc.shape, WithShard(0, 10, 0))
		if !errors.Is(err, errShardShape) {
			t.Errorf("%v %x: %v", tc.shape, tc.in, err)
		}
	}
	// A standard input that sniffs as plain JSONL can be sharded.
	r, err := NewReader(strings.NewReader("{}\n{}\n"), "-", ShapeUnknown, WithShard(0, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if recs := frameAll(t, r); len(recs) != 1 {
		t.Fatalf("sniffed plain: %+v", recs)
	}
}

// TestShardLongHead: a shard that begins inside a line of megabytes
// discards its tail in bounded memory, and the line is framed whole (or as
// a too-large reject) by the shard it begins in.
func TestShardLongHead(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	data := []byte("{}\n" + long + "\n{}\n" + long)
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	size := int64(len(data))
	for _, cuts := range [][]int64{{4}, {100, 200 << 10, 1 << 20}, {3<<20 + 3, 3<<20 + 4, 3<<20 + 5}, {size - 1}} {
		checkShards(t, data, cuts, size, nil)
		checkShards(t, data, cuts, size, nil, WithMaxDocBytes(1000), WithSpool(spool), WithBatch(1024, 2))
		checkShards(t, data, cuts, size, nil, WithMaxDocBytes(1000), WithSpool(spool), WithRejectKeepBytes(10))
	}
}

// TestShardInputErr: a shard that stops at its end reports no fault met
// reading ahead; the last shard reports what the whole file's Reader
// does, also for a fault just after the final LF.
func TestShardInputErr(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, data := range []string{"a\nbb\ncc", "a\nbb\ncc\n", "a\nbb\n\n", "a\n"} {
		n := int64(len(data))
		for _, cuts := range [][]int64{nil, {1}, {2}, {3}, {n - 1}, {n}, {1, 2, 3, 4, 5, 6}} {
			if cuts != nil && cuts[len(cuts)-1] > n {
				continue
			}
			checkShards(t, []byte(data), cuts, n, boom)
			checkShards(t, []byte(data), cuts, math.MaxInt64, boom)
		}
	}
	// The first shard stops at its end; what it read ahead failed.
	r, _ := NewReader(bytesFrom([]byte("a\nbb\ncc\n"), 0, boom), "t", ShapeJSONL, WithShard(0, 3, 0))
	if recs := frameAll(t, r); len(recs) != 2 || r.InputErr() != nil {
		t.Fatalf("%+v, %v", recs, r.InputErr())
	}
	// A fault inside the previous shard's line, before any line of this
	// one begins, hides this shard's lines: reported.
	r, _ = NewReader(bytesFrom([]byte("a\nbbbbbb"), 3, boom), "t", ShapeJSONL, WithShard(4, 100, 1))
	if recs := frameAll(t, r); len(recs) != 0 || !errors.Is(r.InputErr(), boom) || r.InputErr().Offset != 8 {
		t.Fatalf("%+v, %v", recs, r.InputErr())
	}
}

// genJSONL makes a JSONL file of n lines of assorted kinds: documents,
// blank lines, CRLF endings, lines longer than maxDoc and than a batch,
// a BOM at the start, maybe no final LF.
func genJSONL(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	if rng.IntN(4) == 0 {
		b.Write(bom)
	}
	for i := range n {
		switch rng.IntN(8) {
		case 0:
		case 1:
			b.WriteString(" \t ")
		case 2:
			b.WriteString(`{"id":"` + strings.Repeat("y", rng.IntN(60)) + `"}`)
		case 3:
			b.WriteString(strings.Repeat("z", rng.IntN(3000)))
		case 4:
			b.WriteString("\xef\xbb\xbf{}")
		default:
			fmt.Fprintf(&b, `{"n":%d}`, i)
		}
		if rng.IntN(3) == 0 {
			b.WriteByte('\r')
		}
		if i < n-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// randomCuts returns k sorted cut points in [0, size], repeats allowed.
func randomCuts(rng *rand.Rand, size int64, k int) []int64 {
	cuts := make([]int64, k)
	for i := range cuts {
		cuts[i] = rng.Int64N(size + 1)
	}
	slices.Sort(cuts)
	return cuts
}

// TestShardsProperty: for generated files and random cuts, the shards'
// records, concatenated, are the whole file's, field by field.
func TestShardsProperty(t *testing.T) {
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	boom := errors.New("boom")
	iters := 400
	if testing.Short() {
		iters = 50
	}
	for it := range iters {
		data := genJSONL(rng, rng.IntN(40))
		size := int64(len(data))
		opts := []Option{WithStrict(rng.IntN(3) == 0), WithBatch(1024+rng.IntN(4096), 1+rng.IntN(6))}
		if rng.IntN(2) == 0 {
			opts = append(opts, WithMaxDocBytes(1+rng.Int64N(2000)), WithSpool(spool))
		}
		if rng.IntN(3) == 0 {
			opts = append(opts, WithRejectKeepBytes(1+rng.Int64N(100)))
		}
		var fault error
		if rng.IntN(4) == 0 {
			fault = boom
		}
		last := size
		if rng.IntN(4) == 0 {
			last += rng.Int64N(10)
		}
		var cuts []int64
		switch rng.IntN(4) {
		case 0: // shards of one byte
			if size < 400 {
				for c := int64(1); c < size; c++ {
					cuts = append(cuts, c)
				}
				break
			}
			fallthrough
		default:
			cuts = randomCuts(rng, size, rng.IntN(12))
		}
		t.Logf("iteration %d: %d bytes, cuts %v", it, size, cuts)
		checkShards(t, data, cuts, last, fault, opts...)
	}
}
