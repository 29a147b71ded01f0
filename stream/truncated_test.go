package stream

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/codes"
)

// TestTruncatedLastLine (issue 45 item 5): an input whose last line has no
// LF and does not parse ended inside a line: the line is framed as any
// other (the core rejects it with its own reason, not-json or
// invalid-utf8), and the input is named damaged, FaultTruncated, at its
// end. A last line without LF that parses, is blank, or is a terminated
// bad line leaves the input whole. Before, the cut was one reject and the
// input was not named damaged.
func TestTruncatedLastLine(t *testing.T) {
	const doc = `{"id":"a","messages":[{"role":"user","content":"h\u00e9"}]}`
	whole := doc + "\n" + strings.Replace(doc, `"a"`, `"b"`, 1) + "\n"
	for _, tc := range []struct {
		name      string
		input     string
		truncated bool
	}{
		{"cut inside a string", whole[:len(whole)-20], true},
		{"cut inside a UTF-8 sequence", doc + "\n" + `{"id":"` + "\xc3", true},
		{"cut after the first byte", doc + "\n{", true},
		{"cut before the closing brace", whole[:len(whole)-2], true},
		{"no LF, garbage", doc + "\nnope", true},
		{"no LF, CR kept, cut", doc + "\r\n{\"id\":\r", true},
		{"whole", whole, false},
		{"last line without LF parses", whole[:len(whole)-1], false},
		{"last line without LF, CRLF input", doc + "\r\n" + doc + "\r", false},
		{"last line without LF is not an object", doc + "\n12", false},
		{"blank last line without LF", whole + " \t", false},
		{"bad line terminated", doc + "\nnope\n", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, shape := range []Shape{ShapeJSONL, ShapeJSONLZstd, ShapeJSONLGzip} {
				input := []byte(tc.input)
				switch shape {
				case ShapeJSONLZstd:
					input = zstdFrame(t, input)
				case ShapeJSONLGzip:
					input = gzipMember(t, input)
				}
				recs, r := readAll(t, input, shape, WithBatch(1<<10, 1))
				ie := r.InputErr()
				if !tc.truncated {
					if ie != nil {
						t.Fatalf("%s: input error %v, want none", shape, ie)
					}
					continue
				}
				if ie == nil || ie.Reason != codes.FaultTruncated || ie.Offset != int64(len(tc.input)) || !errors.Is(ie, ErrTruncated) {
					t.Fatalf("%s: input error %v, want truncated at %d", shape, ie, len(tc.input))
				}
				last := recs[len(recs)-1]
				if last.Kind != KindLine || last.Offset+last.Length != int64(len(tc.input)) || r.Offset() != int64(len(tc.input)) {
					t.Fatalf("%s: last record %+v: the cut line is framed for the core to reject with its own reason", shape, last)
				}
				if strings.Contains(ie.Error(), `"id"`) || strings.Contains(ie.Error(), "nope") {
					t.Fatalf("%s: error %q echoes the line's content", shape, ie)
				}
			}
		})
	}
}

// TestCompressedCutShort (issue 45 item 5): a .jsonl.zst or .jsonl.gz cut
// short anywhere, inside its header, a block, the checksum or the
// trailer, is FaultTruncated, not zstd-corrupt or gzip-corrupt; the lines
// before the cut are kept and the partial one is an input-truncated
// reject. A stream damaged within, not cut, keeps its corrupt fault.
func TestCompressedCutShort(t *testing.T) {
	plain := gzipLines(3000)
	for _, shape := range []Shape{ShapeJSONLZstd, ShapeJSONLGzip} {
		comp := gzipMember(t, plain)
		corrupt := codes.FaultGzipCorrupt
		if shape == ShapeJSONLZstd {
			comp, corrupt = zstdFrame(t, plain), codes.FaultZstdCorrupt
		}
		// Every cut in the first and last 40 bytes, and a stride between.
		var cuts []int
		for i := 1; i < len(comp); i++ {
			if i < 40 || i > len(comp)-40 || i%997 == 0 {
				cuts = append(cuts, i)
			}
		}
		for _, cut := range cuts {
			recs, r := readAll(t, comp[:cut], shape)
			ie := r.InputErr()
			if ie == nil || ie.Reason != codes.FaultTruncated {
				t.Fatalf("%s cut at %d of %d: input error %v, want truncated", shape, cut, len(comp), ie)
			}
			for i, rec := range recs {
				whole := rec.Kind == KindLine && bytes.HasSuffix(rec.Data, []byte(`"messages":[]}`))
				partial := rec.Kind == KindReject && rec.Reason == codes.RejectInputTruncated && i == len(recs)-1
				if !whole && !partial {
					t.Fatalf("%s cut at %d: record %d: %+v", shape, cut, i, rec)
				}
			}
		}
		// Damaged within: a block's bytes overwritten, the length kept.
		bad := bytes.Clone(comp)
		for i := len(bad) / 2; i < len(bad)/2+64; i++ {
			bad[i] = 0xFF
		}
		_, r := readAll(t, bad, shape)
		if ie := r.InputErr(); ie == nil || ie.Reason == codes.FaultTruncated {
			t.Fatalf("%s damaged within: input error %v, want %s or a checksum fault", shape, ie, corrupt)
		}
	}
}

// streamFault is ie unless it is the FaultTruncated of a last line without
// LF that does not parse (found by framing, not by the stream): for tests
// of arbitrary bytes read cleanly.
func streamFault(ie *InputError) *InputError {
	if ie != nil && ie.Reason == codes.FaultTruncated && errors.Is(ie, ErrTruncated) {
		return nil
	}
	return ie
}
