package stream

import (
	"fmt"
	"slices"

	"github.com/convbatch/convbatch/codes"
)

// damageLog records, for a compressed stream read unit by unit (zstd
// frames, gzip members), the decompressed range of each unit whose
// checksum failed: the stream is read on past it (zstdSource,
// gzipSource), and the Reader reports the ranges (DamagedRanges) and the
// first of them as its fault (InputErr). Both shapes share it, so that a
// damaged unit means the same whatever compressed it.
type damageLog struct {
	unit   string           // what a unit is called in errors: "frame", "member"
	reason codes.InputFault // FaultZstdChecksum, FaultGzipChecksum
	cause  error            // the decoder's sentinel: zstd.ErrCRCMismatch, gzip.ErrChecksum
	ranges []Range          // in stream order
}

// add records a damaged unit of the decompressed bytes [start, end).
func (d *damageLog) add(start, end int64) {
	d.ranges = append(d.ranges, Range{Off: start, Len: end - start})
}

// fault describes the first damaged unit as the input's fault, its offset
// the unit's end, or returns nil when none is damaged.
func (d *damageLog) fault(path string) *InputError {
	if len(d.ranges) == 0 {
		return nil
	}
	g := d.ranges[0]
	err := fmt.Errorf("%s of decompressed bytes %d to %d: %w", d.unit, g.Off, g.End(), d.cause)
	if len(d.ranges) > 1 {
		err = fmt.Errorf("%w (and %d more %ss)", err, len(d.ranges)-1, d.unit)
	}
	return &InputError{Path: path, Reason: d.reason, Offset: g.End(), Err: err}
}

// Range is a span of an input's decompressed bytes: Len bytes from Off.
type Range struct {
	Off, Len int64
}

// End returns the offset just past the range.
func (g Range) End() int64 { return g.Off + g.Len }

// WithDamaged names the decompressed byte ranges of the input that a first
// read found damaged (Reader.DamagedRanges: zstd frames and gzip members
// whose checksum failed). Every record whose bytes, or the LF that ends it, overlap one of
// them is a reject with reason codes.RejectInputChecksum, its exact bytes
// kept as for any reject; every other record is as a read without the
// option frames it, with the same line numbers and offsets. The ranges
// need not be sorted; empty ranges mark nothing.
func WithDamaged(ranges []Range) Option {
	return func(o *options) error {
		rs := make([]Range, 0, len(ranges))
		for _, g := range ranges {
			if g.Off < 0 || g.Len < 0 || g.End() < g.Off {
				return fmt.Errorf("damaged range %d+%d: negative or overflowing", g.Off, g.Len)
			}
			if g.Len > 0 {
				rs = append(rs, g)
			}
		}
		slices.SortFunc(rs, func(a, b Range) int {
			switch {
			case a.Off < b.Off:
				return -1
			case a.Off > b.Off:
				return 1
			}
			return 0
		})
		o.damaged = rs
		return nil
	}
}

// mark makes rec a reject input-checksum when it overlaps a damaged range.
// Records come in offset order, so the ranges wholly before rec are never
// looked at again.
func (r *Reader) mark(rec *Record, terminated bool) {
	if len(r.opts.damaged) == 0 {
		return
	}
	end := rec.Offset + rec.Length
	if terminated {
		end++
	}
	for len(r.opts.damaged) > 0 && r.opts.damaged[0].End() <= rec.Offset {
		r.opts.damaged = r.opts.damaged[1:]
	}
	if len(r.opts.damaged) == 0 || r.opts.damaged[0].Off >= end {
		return
	}
	rec.Kind, rec.Reason = KindReject, codes.RejectInputChecksum
	rec.Data, rec.CR, rec.BOM, rec.Compacted = nil, false, false, false
}
