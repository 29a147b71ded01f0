package tinyparquet

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestCompactRoundTrip writes a struct with every kind of field the
// Writer writes and reads its fields back.
func TestCompactRoundTrip(t *testing.T) {
	var w compactWriter
	w.i32(1, -5)
	w.i64(2, 1<<40)
	w.bool(3, true)
	w.bool(4, false)
	w.string(5, "name")
	w.listHeader(6, ctBinary, 2)
	w.uvarint(1)
	w.buf = append(w.buf, 'a')
	w.uvarint(0)
	w.beginStruct(40) // a jump of more than 15 ids
	w.i32(1, 7)
	w.endStruct()
	w.listHeader(41, ctStruct, 20) // a long list
	for range 20 {
		w.beginStruct(0)
		w.i32(1, 1)
		w.endStruct()
	}
	w.buf = append(w.buf, ctStop)
	fields, err := (&compactReader{b: w.buf}).readStruct()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id  int16
		typ byte
	}{{1, ctI32}, {2, ctI64}, {3, ctTrue}, {4, ctFalse}, {5, ctBinary}, {6, ctList}, {40, ctStruct}, {41, ctList}}
	if len(fields) != len(want) {
		t.Fatalf("got %d fields, want %d", len(fields), len(want))
	}
	for i, f := range fields {
		if f.id != want[i].id || f.typ != want[i].typ {
			t.Errorf("field %d: id %d type %d, want %d %d", i, f.id, f.typ, want[i].id, want[i].typ)
		}
	}
	// Copied fields encode to the same bytes.
	var c compactWriter
	for _, f := range fields {
		c.raw(f.id, f.typ, f.value)
	}
	c.buf = append(c.buf, ctStop)
	if !bytes.Equal(c.buf, w.buf) {
		t.Errorf("copy differs:\n%x\n%x", c.buf, w.buf)
	}
}

// FuzzCompactReader reads arbitrary bytes as a struct: an error or
// fields, never a panic, and fields that copy back to the bytes read.
func FuzzCompactReader(f *testing.F) {
	props, aprops := testProps()
	w, err := New(testSchema, props, aprops)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	rec := randomRecord(rand.New(rand.NewPCG(1, 2)), 3)
	defer rec.Release()
	if _, err := w.WriteFile(&buf, rec); err != nil {
		f.Fatal(err)
	}
	footer, err := Footer(buf.Bytes())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(footer)
	f.Add(buf.Bytes()[4:])
	f.Add([]byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &compactReader{b: b}
		fields, err := r.readStruct()
		if err != nil {
			return
		}
		var c compactWriter
		for _, f := range fields {
			c.raw(f.id, f.typ, f.value)
		}
		c.buf = append(c.buf, ctStop)
		again, err := (&compactReader{b: c.buf}).readStruct()
		if err != nil || len(again) != len(fields) {
			t.Fatalf("the copy of %d fields reads back as %d (%v)", len(fields), len(again), err)
		}
	})
}

// BenchmarkWriteFile writes a file of one row of testSchema, the cost of
// a file beyond its rows (compare BenchmarkPqarrowFile).
func BenchmarkWriteFile(b *testing.B) {
	props, aprops := testProps()
	w, err := New(testSchema, props, aprops)
	if err != nil {
		b.Fatal(err)
	}
	rec := randomRecord(rand.New(rand.NewPCG(1, 2)), 1)
	defer rec.Release()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.WriteFile(discard{}, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPqarrowFile is BenchmarkWriteFile with pqarrow.
func BenchmarkPqarrowFile(b *testing.B) {
	rec := randomRecord(rand.New(rand.NewPCG(1, 2)), 1)
	defer rec.Release()
	b.ReportAllocs()
	for b.Loop() {
		writePqarrow(b, []arrow.RecordBatch{rec})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
