package docindex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func encode(docs []doc) []byte {
	b := []byte(Magic)
	for _, d := range docs {
		b = AppendRecord(b, d.id, d.hash, d.hashable)
	}
	return b
}

func TestRecordRoundTrip(t *testing.T) {
	docs := append(testDocs, doc{strings.Repeat("long", 100_000), h("l"), true})
	rd := NewReader(bytes.NewReader(encode(docs)))
	for i, d := range docs {
		rec, err := rd.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		want := d.hash
		if !d.hashable {
			want = [32]byte{}
		}
		if string(rec.ID) != d.id || rec.Hashable != d.hashable || rec.Hash != want {
			t.Errorf("record %d: %q %v %x", i, rec.ID, rec.Hashable, rec.Hash)
		}
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("after the last record: %v", err)
	}
}

func TestReaderRefuses(t *testing.T) {
	good := AppendRecord([]byte(Magic), "abc", h("x"), true)
	for _, tc := range []struct {
		name string
		in   string
		off  int64
	}{
		{"empty", "", 0},
		{"bad magic", "CBDOCIX2", 0},
		{"short magic", "CBDO", 0},
		{"truncated hash", string(good[:20]), 8},
		{"truncated id", string(good[:len(good)-1]), 8},
		{"unknown flag", Magic + "\x03\x02abc", 8},
		{"long varint", Magic + "\x83\x00\x00abc", 8},
		{"varint too long", Magic + "\xff\xff\xff\xff\x7f\x00", 8},
		{"length past the file", Magic + "\xff\xff\xff\x07\x00abc", 8},
		{"second record cut", string(good) + "\x05", int64(len(good))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(tc.in))
			var err error
			for err == nil {
				_, err = rd.Next()
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v, want a *CorruptError", err)
			}
			if ce.Offset != tc.off {
				t.Errorf("offset %d, want %d", ce.Offset, tc.off)
			}
			if _, err2 := rd.Next(); err2 != err {
				t.Errorf("not sticky: %v then %v", err, err2)
			}
		})
	}
}

// FuzzReader parses arbitrary bytes as a partition file: it never panics
// nor allocates past the input, and what it reads re-encodes to exactly the
// bytes it consumed (one encoding per record).
func FuzzReader(f *testing.F) {
	f.Add(encode(testDocs))
	f.Add([]byte(Magic))
	f.Add([]byte(Magic + "\x83\x00\x00abc"))
	f.Add([]byte(Magic + "\x03\x02abc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data))
		// The byte-by-byte path must read exactly what the buffered one
		// does, and fail the same way.
		slow := NewReader(bytes.NewReader(data))
		slow.byteByByte = true
		out := []byte(Magic)
		for {
			rec, err := rd.Next()
			srec, serr := slow.Next()
			if fmt.Sprint(err) != fmt.Sprint(serr) || !bytes.Equal(rec.ID, srec.ID) || rec.Hash != srec.Hash || rec.Hashable != srec.Hashable {
				t.Fatalf("buffered read %q %x %v, %v; byte by byte %q %x %v, %v", rec.ID, rec.Hash, rec.Hashable, err, srec.ID, srec.Hash, srec.Hashable, serr)
			}
			if err == io.EOF {
				if !bytes.Equal(out, data) {
					t.Fatalf("re-encoded %q, read %q", out, data)
				}
				return
			}
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("error not a *CorruptError: %v", err)
				}
				if ce.Offset < 0 || ce.Offset > int64(len(data)) {
					t.Fatalf("offset %d of %d bytes", ce.Offset, len(data))
				}
				if ce.Offset >= int64(len(Magic)) && ce.Offset != int64(len(out)) {
					t.Fatalf("offset %d, want the end of the last good record %d", ce.Offset, len(out))
				}
				return
			}
			if !rec.Hashable && rec.Hash != ([32]byte{}) {
				t.Fatal("unhashable record with a hash")
			}
			out = AppendRecord(out, string(rec.ID), rec.Hash, rec.Hashable)
		}
	})
}
