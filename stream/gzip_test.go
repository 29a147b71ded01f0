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

	"github.com/klauspost/compress/gzip"

	"github.com/convbatch/convbatch/codes"
)

// gzipMember compresses p as one gzip member.
func gzipMember(t *testing.T, p []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipLines is n distinct JSONL lines.
func gzipLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(`{"id":"g` + strings.Repeat("k", i%61) + `","messages":[]}` + "\n")
	}
	return b.Bytes()
}

func TestGzipMembers(t *testing.T) {
	a, b := []byte("{\"id\":\"a\"}\n{\"id\":"), []byte("\"b\"}\n")
	stream := append(gzipMember(t, a), gzipMember(t, b)...)
	for _, shape := range []Shape{ShapeJSONLGzip, ShapeUnknown} {
		recs, r := readAll(t, stream, shape)
		if r.Shape() != ShapeJSONLGzip {
			t.Fatalf("shape %v", r.Shape())
		}
		if len(recs) != 2 || string(recs[0].Data) != `{"id":"a"}` || string(recs[1].Data) != `{"id":"b"}` || recs[1].Offset != 11 {
			t.Fatalf("records across concatenated members: %+v", recs)
		}
		if r.InputErr() != nil || r.Offset() != int64(len(a)+len(b)) {
			t.Fatalf("%v, offset %d", r.InputErr(), r.Offset())
		}
	}
}

// TestGzipLineCap: the line cap holds inside a gzip stream: a line over it
// is a too-large reject, spooled, and the lines after it are read.
func TestGzipLineCap(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 50_000)
	plain := append(append([]byte("{}\n"), big...), "\n{}\n"...)
	spool, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	recs, r := readAll(t, gzipMember(t, plain), ShapeJSONLGzip, WithMaxDocBytes(4096), WithBatch(8<<10, 10), WithSpool(spool))
	if len(recs) != 3 || recs[1].Reason != codes.RejectTooLarge || recs[1].Length != int64(len(big)) || string(recs[2].Data) != "{}" || r.InputErr() != nil {
		t.Fatalf("records %+v, %v", recs, r.InputErr())
	}
	got, _ := io.ReadAll(recs[1].Spool.Reader())
	if !bytes.Equal(got, big[:4096]) {
		t.Fatal("spooled bytes differ from the line's first 4096")
	}
}

// TestGzipDamaged: a damaged gzip input is reported like a damaged zstd
// one: the whole lines before the fault are kept, the partial last line is
// an input-truncated reject, and the fault has its own code.
func TestGzipDamaged(t *testing.T) {
	plain := gzipLines(20000)
	comp := gzipMember(t, plain)

	check := func(name string, data []byte, reason codes.InputFault) {
		t.Helper()
		recs, r := readAll(t, data, ShapeJSONLGzip)
		ie := r.InputErr()
		if ie == nil || ie.Reason != reason {
			t.Fatalf("%s: input error %v, want %s", name, ie, reason)
		}
		for _, rec := range recs {
			switch {
			case rec.Kind == KindLine && !bytes.HasSuffix(rec.Data, []byte(`"messages":[]}`)):
				t.Fatalf("%s: line %d: partial data passed as a document", name, rec.Line)
			case rec.Kind == KindReject && (rec.Reason != codes.RejectInputTruncated || rec.Line != r.Lines()):
				t.Fatalf("%s: line %d: reject %q", name, rec.Line, rec.Reason)
			}
		}
		if int64(len(recs)) != r.Lines() || ie.Offset < r.Offset() || !bytes.HasPrefix(plain, plainPrefix(recs)) {
			t.Fatalf("%s: %d records, %d lines, fault at %d, offset %d", name, len(recs), r.Lines(), ie.Offset, r.Offset())
		}
		if !strings.Contains(ie.Error(), "test: byte ") {
			t.Fatalf("%s: error %q does not name the input and position", name, ie)
		}
	}
	check("cut short", comp[:len(comp)*2/3], codes.FaultTruncated)
	check("cut in the trailer", comp[:len(comp)-3], codes.FaultTruncated)
	crc := bytes.Clone(comp)
	crc[len(crc)-8] ^= 1 // CRC-32 of the member, first trailer byte
	check("bad CRC", crc, codes.FaultGzipChecksum)
	size := bytes.Clone(comp)
	size[len(size)-1] ^= 1 // ISIZE, the length modulo 2^32
	check("bad length", size, codes.FaultGzipChecksum)
	check("not gzip", []byte("{\"id\":\"plain\"}\n"), codes.FaultGzipCorrupt)
	check("trailing garbage", append(bytes.Clone(comp), "junk"...), codes.FaultGzipCorrupt)
	block := bytes.Clone(comp)
	block[20] ^= 0xFF // inside the first deflate block
	recs, r := readAll(t, block, ShapeJSONLGzip)
	if ie := r.InputErr(); ie == nil || (ie.Reason != codes.FaultGzipCorrupt && ie.Reason != codes.FaultGzipChecksum) {
		t.Fatalf("bad deflate block: %v after %d records", ie, len(recs))
	}

	// A failed read under the decoder is a read error, not a damaged stream.
	boom := errors.New("disk on fire")
	rd, err := NewReader(&failingReader{data: comp[:len(comp)/2], err: boom}, "f", ShapeJSONLGzip)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for {
		if _, err := rd.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if ie := rd.InputErr(); ie == nil || ie.Reason != codes.FaultReadError || !errors.Is(ie, boom) {
		t.Fatalf("read error under gzip: %v", ie)
	}
}

// plainPrefix joins the bytes of the records that are documents or blank,
// up to the first reject, as the input held them.
func plainPrefix(recs []Record) []byte {
	var b []byte
	for _, rec := range recs {
		if rec.Kind == KindReject {
			break
		}
		b = append(append(b, rec.Raw...), '\n')
	}
	return b
}

// TestGzipCLIInterop: a file made with compress/gzip passes `gzip -t`, and
// files made by the gzip command (one member and several, any level) read
// back line for line.
func TestGzipCLIInterop(t *testing.T) {
	gzipCmd, err := exec.LookPath("gzip")
	if err != nil {
		t.Skip("gzip command not installed")
	}
	dir := t.TempDir()
	plain := gzipLines(5000)
	ours := filepath.Join(dir, "ours.jsonl.gz")
	if err := os.WriteFile(ours, gzipMember(t, plain), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(gzipCmd, "-t", ours).CombinedOutput(); err != nil {
		t.Fatalf("gzip -t: %v %s", err, b)
	}
	if b, err := exec.Command(gzipCmd, "-dc", ours).Output(); err != nil || !bytes.Equal(b, plain) {
		t.Fatalf("gzip -dc: %v, %d bytes of %d", err, len(b), len(plain))
	}
	half := len(plain) / 2
	for len(plain) > half && plain[half-1] != '\n' {
		half++
	}
	for _, level := range []string{"-1", "-9"} {
		var comp []byte
		for _, part := range [][]byte{plain[:half], plain[half:]} {
			cmd := exec.Command(gzipCmd, "-c", level)
			cmd.Stdin = bytes.NewReader(part)
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("gzip %s: %v", level, err)
			}
			comp = append(comp, b...)
		}
		recs, r := readAll(t, comp, ShapeJSONLGzip)
		if r.InputErr() != nil || len(recs) != 5000 || !bytes.Equal(plainPrefix(recs), plain) {
			t.Fatalf("gzip %s, two members: %v, %d records", level, r.InputErr(), len(recs))
		}
	}
}

// TestEmptyCompressed: an empty file is an empty stream in either
// compressed shape, as docs/FORMAT.md says.
func TestEmptyCompressed(t *testing.T) {
	for _, shape := range []Shape{ShapeJSONLZstd, ShapeJSONLGzip} {
		recs, r := readAll(t, nil, shape)
		if len(recs) != 0 || r.Lines() != 0 || r.InputErr() != nil {
			t.Errorf("empty %s: %d records, %v", shape, len(recs), r.InputErr())
		}
	}
}
