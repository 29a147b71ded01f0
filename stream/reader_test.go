package stream

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
)

// readAll frames input and returns every record (bytes copied).
func readAll(t *testing.T, input []byte, shape Shape, opts ...Option) ([]Record, *Reader) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(input), "test", shape, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Raw = bytes.Clone(rec.Raw)
		rec.Data = bytes.Clone(rec.Data)
		out = append(out, rec)
	}
	return out, r
}

type want struct {
	kind   Kind
	data   string
	reason codes.Reject
	cr     bool
	bom    bool
}

func TestReaderFraming(t *testing.T) {
	bomS := "\xef\xbb\xbf"
	cases := []struct {
		name  string
		in    string
		opts  []Option
		want  []want
		lines int64
	}{
		{"empty", "", nil, nil, 0},
		{"one line with LF", "{}\n", nil, []want{{kind: KindLine, data: "{}"}}, 1},
		{"final line without LF", "{}\n{\"a\":1}", nil, []want{{data: "{}"}, {data: `{"a":1}`}}, 2},
		{"blank lines", "\n  \n\t\r\n \r\n{}\n", nil, []want{{kind: KindBlank}, {kind: KindBlank, data: "  "}, {kind: KindBlank, data: "\t", cr: true}, {kind: KindBlank, data: " ", cr: true}, {data: "{}"}}, 5},
		{"crlf", "{}\r\n{}\r\n", nil, []want{{data: "{}", cr: true}, {data: "{}", cr: true}}, 2},
		{"lone CR inside kept", "{\"a\":\"x\ry\"}\n", nil, []want{{data: "{\"a\":\"x\ry\"}"}}, 1},
		{"bom dropped", bomS + "{}\n{}\n", nil, []want{{data: "{}", bom: true}, {data: "{}"}}, 2},
		{"bom only on line 1", "{}\n" + bomS + "{}\n", nil, []want{{data: "{}"}, {data: bomS + "{}"}}, 2},
		{"bom strict", bomS + "{}\n{}\n", []Option{WithStrict(true)}, []want{{kind: KindReject, reason: codes.RejectBOM}, {data: "{}"}}, 2},
		{"too large", "{}\n" + strings.Repeat("x", 20) + "\n{}\n", []Option{WithMaxDocBytes(10)}, []want{{data: "{}"}, {kind: KindReject, reason: codes.RejectTooLarge}, {data: "{}"}}, 3},
		{"exactly at cap", strings.Repeat("x", 10) + "\n", []Option{WithMaxDocBytes(10)}, []want{{data: strings.Repeat("x", 10)}}, 1},
		{"too large at end", "{}\n" + strings.Repeat("y", 50), []Option{WithMaxDocBytes(10)}, []want{{data: "{}"}, {kind: KindReject, reason: codes.RejectTooLarge}}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, r := readAll(t, []byte(tc.in), ShapeJSONL, tc.opts...)
			if len(recs) != len(tc.want) {
				t.Fatalf("got %d records, want %d: %+v", len(recs), len(tc.want), recs)
			}
			for i, w := range tc.want {
				got := recs[i]
				if got.Kind != w.kind || got.Reason != w.reason || got.CR != w.cr || got.BOM != w.bom {
					t.Errorf("record %d: got kind %d reason %q cr %v bom %v, want %+v", i, got.Kind, got.Reason, got.CR, got.BOM, w)
				}
				if w.kind != KindReject && string(got.Data) != w.data {
					t.Errorf("record %d: data %q, want %q", i, got.Data, w.data)
				}
				if got.Line != int64(i+1) {
					t.Errorf("record %d: line %d", i, got.Line)
				}
			}
			if r.Lines() != tc.lines {
				t.Errorf("Lines() = %d, want %d", r.Lines(), tc.lines)
			}
			if r.Offset() != int64(len(tc.in)) {
				t.Errorf("Offset() = %d, want %d", r.Offset(), len(tc.in))
			}
		})
	}
}

// TestReaderReassembles checks the framing law on many batch sizes: every
// record's offset and length locate its exact bytes, and the lines joined
// with LF give back the input.
func TestReaderReassembles(t *testing.T) {
	var in bytes.Buffer
	for i := range 3000 {
		switch i % 7 {
		case 0:
			in.WriteString("\n")
		case 1:
			in.WriteString(`{"id":"` + strings.Repeat("z", i%300) + `"}` + "\r\n")
		default:
			in.WriteString(`{"id":"` + strings.Repeat("a", i) + `","messages":[]}` + "\n")
		}
	}
	in.WriteString(`{"last":true}`)
	data := in.Bytes()
	for _, batch := range []int{1 << 10, 4 << 10, 64 << 10, 4 << 20} {
		spool, err := NewSpool(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := readAll(t, data, ShapeJSONL, WithBatch(batch, 100), WithMaxDocBytes(2000), WithRejectKeepBytes(1<<20), WithSpool(spool))
		var out bytes.Buffer
		for i, rec := range recs {
			if i > 0 {
				out.WriteByte('\n')
			}
			body := rec.Raw
			if rec.Raw == nil {
				body, _ = io.ReadAll(rec.Spool.Reader())
			}
			if int64(len(body)) != rec.Length {
				t.Fatalf("batch %d: line %d: %d bytes, length %d", batch, rec.Line, len(body), rec.Length)
			}
			if !bytes.Equal(data[rec.Offset:rec.Offset+rec.Length], body) {
				t.Fatalf("batch %d: line %d: bytes at offset differ", batch, rec.Line)
			}
			out.Write(body)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("batch %d: reassembled input differs", batch)
		}
		spool.Close()
	}
}

func TestTooLargeSpooled(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB
	in := append(append([]byte("{}\n"), big...), "\n{}\n"...)
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	recs, _ := readAll(t, in, ShapeJSONL, WithMaxDocBytes(4096), WithBatch(8<<10, 10), WithSpool(spool))
	if len(recs) != 3 || recs[1].Reason != codes.RejectTooLarge || recs[1].Raw != nil {
		t.Fatalf("records: %+v", recs)
	}
	got, err := io.ReadAll(recs[1].Spool.Reader())
	if err != nil || !bytes.Equal(got, big[:4096]) || recs[1].Length != int64(len(big)) || recs[1].Offset != 3 {
		t.Fatalf("spooled %d bytes (err %v), length %d, offset %d", len(got), err, recs[1].Length, recs[1].Offset)
	}
	if string(recs[2].Data) != "{}" || recs[2].Offset != int64(3+len(big)+1) {
		t.Fatalf("line after the long one: %+v", recs[2])
	}
}

func zstdFrame(t *testing.T, p []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(p, nil)
}

func TestZstdFrames(t *testing.T) {
	a, b := []byte("{\"id\":\"a\"}\n{\"id\":"), []byte("\"b\"}\n")
	skippable := []byte{0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 'j', 'u', 'n', 'k'}
	stream := append(append(append([]byte{}, skippable...), zstdFrame(t, a)...), append(skippable, zstdFrame(t, b)...)...)
	for _, shape := range []Shape{ShapeJSONLZstd, ShapeUnknown} {
		recs, r := readAll(t, stream, shape)
		if r.Shape() != ShapeJSONLZstd {
			t.Fatalf("shape %v", r.Shape())
		}
		if len(recs) != 2 || string(recs[0].Data) != `{"id":"a"}` || string(recs[1].Data) != `{"id":"b"}` {
			t.Fatalf("records across concatenated frames: %+v", recs)
		}
		if r.InputErr() != nil {
			t.Fatal(r.InputErr())
		}
	}
	// Sniffing plain JSONL on standard input.
	recs, r := readAll(t, []byte("{}\n"), ShapeUnknown)
	if r.Shape() != ShapeJSONL || len(recs) != 1 {
		t.Fatalf("sniffed %v, %d records", r.Shape(), len(recs))
	}
}

// windowEnv, when set, makes TestZstdWindowCap the child process that
// decodes the 2 GiB-window frame with the cap raised.
const windowEnv = "CONVBATCH_TEST_WINDOW"

func TestZstdWindowCap(t *testing.T) {
	// A frame header announcing a 2 GiB window (no content size): the decoder
	// must refuse it rather than allocate.
	payload := bytes.Repeat([]byte(`{"id":"w"}`+"\n"), 1000)
	var buf bytes.Buffer
	// Frame header: magic, descriptor (no single segment, no checksum),
	// window descriptor for 2^31 bytes, then one raw last block.
	buf.Write([]byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 21 << 3})
	n := len(payload)
	hdr := uint32(1 | n<<3)
	buf.Write([]byte{byte(hdr), byte(hdr >> 8), byte(hdr >> 16)})
	buf.Write(payload)
	if os.Getenv(windowEnv) == "1" {
		// The same stream passes with the cap raised.
		recs, r := readAll(t, buf.Bytes(), ShapeJSONLZstd, WithZstdMaxWindow(MaxZstdWindow))
		if r.InputErr() != nil || len(recs) != 1000 {
			t.Fatalf("raised cap: %v, %d records", r.InputErr(), len(recs))
		}
		return
	}
	recs, r := readAll(t, buf.Bytes(), ShapeJSONLZstd, WithZstdMaxWindow(1<<20))
	ie := r.InputErr()
	if ie == nil || ie.Reason.String() != "zstd-window-too-large" {
		t.Fatalf("input error %v, %d records", ie, len(recs))
	}
	// The same stream passes with the cap raised, in a child process: the
	// decoder allocates the 2 GiB window, which costs a fresh process
	// nothing until it is written, but took 40 s here after the other
	// tests had used the heap (issue 45 item 14).
	child := exec.Command(os.Args[0], "-test.run=^TestZstdWindowCap$", "-test.v")
	child.Env = append(os.Environ(), windowEnv+"=1")
	out, err := child.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestZstdWindowCap")) {
		t.Fatalf("raised cap, in the child: %v: %s", err, out)
	}
}

func TestZstdTruncated(t *testing.T) {
	var plain bytes.Buffer
	for i := range 20000 {
		plain.WriteString(`{"id":"` + strings.Repeat("q", i%97) + `","messages":[]}` + "\n")
	}
	comp := zstdFrame(t, plain.Bytes())
	cut := comp[:len(comp)*2/3]
	recs, r := readAll(t, cut, ShapeJSONLZstd)
	ie := r.InputErr()
	if ie == nil || ie.Reason.String() != "truncated" {
		t.Fatalf("input error %v, want truncated (issue 45 item 5)", ie)
	}
	var good int
	for _, rec := range recs {
		if rec.Kind == KindLine {
			if !bytes.HasSuffix(rec.Data, []byte(`"messages":[]}`)) {
				t.Fatalf("line %d: partial data passed as a document", rec.Line)
			}
			good++
		} else if rec.Reason != codes.RejectInputTruncated {
			t.Fatalf("line %d: reason %q", rec.Line, rec.Reason)
		}
	}
	if int64(len(recs)) != r.Lines() || ie.Offset < r.Offset() {
		t.Fatalf("%d records, %d lines, error offset %d, offset %d", len(recs), r.Lines(), ie.Offset, r.Offset())
	}
	t.Logf("kept %d whole lines before the fault", good)
}

func TestZstdCLIInterop(t *testing.T) {
	zstdCmd, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("zstd command not installed")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.jsonl")
	var in bytes.Buffer
	for i := range 5000 {
		in.WriteString(`{"id":"c` + strings.Repeat("x", i%50) + `","messages":[]}` + "\n")
	}
	os.WriteFile(plain, in.Bytes(), 0o644)
	for _, args := range [][]string{{"-q", "-3"}, {"-q", "--long=27", "-19"}} {
		out := filepath.Join(dir, "a.jsonl.zst")
		cmd := exec.Command(zstdCmd, append(args, "-f", "-o", out, plain)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zstd %v: %v %s", args, err, b)
		}
		comp, _ := os.ReadFile(out)
		recs, r := readAll(t, comp, ShapeJSONLZstd)
		if r.InputErr() != nil || len(recs) != 5000 {
			t.Fatalf("zstd %v: %v, %d records", args, r.InputErr(), len(recs))
		}
	}
}

func TestJSONShape(t *testing.T) {
	pretty := "\xef\xbb\xbf{\n  \"id\": \"a b\",\n  \"messages\": [ ]\r\n}\n"
	recs, r := readAll(t, []byte(pretty), ShapeJSON)
	if len(recs) != 1 || string(recs[0].Data) != `{"id":"a b","messages":[]}` || !recs[0].BOM || recs[0].Line != 1 {
		t.Fatalf("records %+v", recs)
	}
	if string(recs[0].Raw) != pretty || r.Offset() != int64(len(pretty)) {
		t.Fatalf("raw bytes not kept whole")
	}
	// Invalid JSON is passed on uncompacted, for the checks to refuse.
	recs, _ = readAll(t, []byte("{\"a\": 1 2}"), ShapeJSON)
	if len(recs) != 1 || string(recs[0].Data) != "{\"a\": 1 2}" {
		t.Fatalf("invalid json: %+v", recs)
	}
	recs, _ = readAll(t, []byte(" \n\t"), ShapeJSON)
	if len(recs) != 1 || recs[0].Kind != KindBlank {
		t.Fatalf("whitespace-only json: %+v", recs)
	}
	recs, r = readAll(t, nil, ShapeJSON)
	if len(recs) != 1 || recs[0].Kind != KindBlank || r.Lines() != 1 {
		t.Fatalf("empty json: a .json input is one line, here blank: %+v", recs)
	}
	recs, _ = readAll(t, []byte(strings.Repeat(" ", 5000)+"{}"), ShapeJSON, WithMaxDocBytes(100))
	if len(recs) != 1 || recs[0].Reason != codes.RejectTooLarge || recs[0].Length != 5002 {
		t.Fatalf("too-large json: %+v", recs)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r, err := NewReader(&failingReader{data: []byte("{}\n{\"part"), err: boom}, "f", ShapeJSONL)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if len(recs) != 2 || recs[1].Reason != codes.RejectInputTruncated || !errors.Is(r.InputErr(), boom) || r.InputErr().Reason.String() != "read-error" {
		t.Fatalf("records %+v, err %v", recs, r.InputErr())
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, opt := range []Option{WithMaxDocBytes(0), WithZstdMaxWindow(10), WithZstdMaxWindow(4 << 30), WithBatch(10, 0), WithZstdWorkers(0)} {
		if _, err := NewReader(strings.NewReader(""), "x", ShapeJSONL, opt); err == nil {
			t.Error("option accepted, want refusal")
		}
	}
}

// TestZstdChecksumReported: a flipped bit in a raw block decodes fine but
// fails the frame checksum; the input is reported as zstd-checksum.
func TestZstdChecksumReported(t *testing.T) {
	var plain bytes.Buffer
	x := uint64(1)
	for range 3000 {
		plain.WriteString(`{"id":"`)
		for range 40 {
			x = x*6364136223846793005 + 1442695040888963407
			plain.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[x>>58%36])
		}
		plain.WriteString(`","messages":[]}` + "\n")
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	comp := enc.EncodeAll(plain.Bytes(), nil)
	comp[len(comp)/2] ^= 1
	_, r := readAll(t, comp, ShapeJSONLZstd)
	ie := r.InputErr()
	if ie == nil || (ie.Reason.String() != "zstd-checksum" && ie.Reason.String() != "zstd-corrupt") {
		t.Fatalf("input error %v", ie)
	}
	t.Logf("reported as %s at %d", ie.Reason, ie.Offset)
}

// TestShortLinesBoundedBuffers: when batches end at their record cap long
// before their byte size (tiny documents), the bytes read past the last
// record are carried into the next batch; they must stay small, or every
// batch's buffer grows and the carry is copied over and over.
func TestShortLinesBoundedBuffers(t *testing.T) {
	const lines = 200_000
	line := []byte(`{"id":"c0000001","messages":[]}` + "\n")
	input := bytes.Repeat(line, lines)
	for _, src := range []struct {
		name string
		r    io.Reader
	}{
		{"reader", bytes.NewReader(input)},
		{"one-shot reads", struct{ io.Reader }{bytes.NewReader(input)}},
	} {
		t.Run(src.name, func(t *testing.T) {
			r, err := NewReader(src.r, "tiny", ShapeJSONL, WithBatch(DefaultBatchBytes, 1024))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// Batches circulate as in the pipeline's pool.
			batches := make([]Batch, 6)
			total := 0
			for i := 0; ; i++ {
				b := &batches[i%len(batches)]
				err := r.ReadBatch(b)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				total += len(b.Recs)
				if c := cap(b.Buf); c > DefaultBatchBytes {
					t.Fatalf("batch %d: buffer grew to %d bytes for %d records of %d bytes", i, c, len(b.Recs), len(line))
				}
				if c := cap(r.carry); c > 2*readChunk {
					t.Fatalf("batch %d: carry grew to %d bytes", i, c)
				}
			}
			if total != lines {
				t.Fatalf("%d records, want %d", total, lines)
			}
		})
	}
}
