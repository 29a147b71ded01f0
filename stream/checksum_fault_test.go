package stream

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/source"
)

// TestChecksumMismatchFault: an object read by URL whose bytes do not
// have the store's checksum (package source fails the read at its end
// with ErrCorrupt) is a damaged input with reason checksum-mismatch, not
// a vague read-error, plain or under a decoder; every line before is
// kept.
func TestChecksumMismatchFault(t *testing.T) {
	plain := bytes.Repeat([]byte(`{"id":"a","messages":[]}`+"\n"), 100)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	zs := enc.EncodeAll(plain, nil)
	corrupt := &source.Error{Op: "read", URL: "s3://b/k.jsonl", Kind: source.ErrCorrupt, Err: errors.New("md5 of the bytes read is 00, the store's is 11")}
	for _, tc := range []struct {
		name  string
		data  []byte
		shape Shape
	}{
		{"plain", plain, ShapeJSONL},
		{"gzip", gz.Bytes(), ShapeJSONLGzip},
		{"zstd", zs, ShapeJSONLZstd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := NewReader(&failingReader{data: tc.data, err: corrupt}, "s3://b/k.jsonl", tc.shape)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			docs := 0
			for {
				rec, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.Kind == KindLine {
					docs++
				}
			}
			ie := rd.InputErr()
			if ie == nil || ie.Reason != codes.FaultChecksumMismatch || !errors.Is(ie, source.ErrCorrupt) {
				t.Fatalf("input fault %v, want checksum-mismatch wrapping source.ErrCorrupt", ie)
			}
			if docs != 100 {
				t.Errorf("%d documents kept, want the 100 read before the fault", docs)
			}
		})
	}
}
