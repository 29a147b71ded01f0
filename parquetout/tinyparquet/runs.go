package tinyparquet

import (
	"encoding/binary"
	"math/bits"
)

// hybridRuns takes a page's levels or dictionary indices one at a time
// and keeps them as the runs of Parquet's RLE/bit-packing hybrid that
// the File writes (the runs pqarrow makes: a run of 8 or more equal
// values, or the last values when they are all equal, is an RLE run;
// other values are bit-packed in groups of 8, at most hybridMaxGroups
// groups a run, a run ending before a group of 8 equal values), so that
// runs of equal values take no room (issue 46 item 2): a column whose
// values stay few (nulls, one dictionary value) has its pages cut at the
// page size only after hundreds of thousands of rows, up to the whole
// row group, and a slice of every level grew with it, four bytes a row,
// copied as append grew it. The runs do not depend on the bit width,
// which a dictionary page learns only at its end: encode packs them.
//
// The runs are kept in toks: an RLE run as count<<1 then its value; a
// bit-packed run as groups<<1|1 then its groups*8 values (the last group
// padded with zeros). The run being made is in the state below.
type hybridRuns struct {
	toks []uint32
	n    int // values added
	mode runMode
	// v and count are the run of equal values from the last decision
	// point (runUndecided, runRLE).
	v     uint32
	count int
	// hdr is the index in toks of the bit-packed run's header, groups
	// its complete groups, grp[:gn] the group being filled (runPacked).
	hdr    int
	groups int
	grp    [8]uint32
	gn     int
}

// runMode is what the values since the last decision point make.
type runMode uint8

const (
	// runUndecided: fewer than 8 equal values (an RLE run if the page
	// ends, a bit-packed run if another value comes first).
	runUndecided runMode = iota
	// runRLE: 8 or more equal values, a run until another value comes.
	runRLE
	// runPacked: a bit-packed run, ended by a group of 8 equal values,
	// by its hybridMaxGroups-th group or by the page's end.
	runPacked
)

// Len returns the values added.
func (h *hybridRuns) Len() int { return h.n }

// add adds v.
func (h *hybridRuns) add(v uint32) {
	h.n++
	switch h.mode {
	case runUndecided:
		if h.count == 0 || v == h.v {
			h.v = v
			h.count++
			if h.count == 8 {
				h.mode = runRLE
			}
			return
		}
		// A bit-packed run from the decision point: its first group
		// holds the short run and v.
		h.mode, h.hdr, h.groups = runPacked, len(h.toks), 0
		h.toks = append(h.toks, 0)
		for h.gn = 0; h.gn < h.count; h.gn++ {
			h.grp[h.gn] = h.v
		}
		h.count = 0
		h.addPacked(v)
	case runRLE:
		if v == h.v {
			h.count++
			return
		}
		h.toks = append(h.toks, uint32(h.count)<<1, h.v)
		h.mode, h.v, h.count = runUndecided, v, 1
	case runPacked:
		h.addPacked(v)
	}
}

// addPacked adds v to the group being filled of a bit-packed run; a full
// group of 8 equal values (not its first) ends the run before it and
// starts an RLE run.
func (h *hybridRuns) addPacked(v uint32) {
	h.grp[h.gn] = v
	h.gn++
	if h.gn < 8 {
		return
	}
	h.gn = 0
	if h.groups > 0 && h.grp == [8]uint32{v, v, v, v, v, v, v, v} {
		h.endPacked()
		h.mode, h.v, h.count = runRLE, v, 8
		return
	}
	h.toks = append(h.toks, h.grp[:]...)
	h.groups++
	if h.groups == hybridMaxGroups {
		h.endPacked()
		h.mode, h.count = runUndecided, 0
	}
}

// endPacked writes the bit-packed run's header.
func (h *hybridRuns) endPacked() { h.toks[h.hdr] = uint32(h.groups)<<1 | 1 }

// finish ends the run being made: the page ends.
func (h *hybridRuns) finish() {
	switch h.mode {
	case runUndecided, runRLE:
		if h.count > 0 {
			h.toks = append(h.toks, uint32(h.count)<<1, h.v)
		}
	case runPacked:
		if h.gn > 0 {
			clear(h.grp[h.gn:])
			h.toks = append(h.toks, h.grp[:]...)
			h.groups++
		}
		h.endPacked()
	}
	h.mode, h.count, h.gn = runUndecided, 0, 0
}

// reset empties the runs for the next page.
func (h *hybridRuns) reset() {
	*h = hybridRuns{toks: h.toks[:0]}
}

// encode finishes the runs and appends them in the RLE/bit-packing
// hybrid at width bits a value (without a length before them): the
// bytes the File wrote from a slice of the values before (appendHybrid,
// now the tests' reference in hybrid_ref_test.go).
func (h *hybridRuns) encode(b []byte, width int) []byte {
	h.finish()
	byteWidth := (width + 7) / 8
	for t := h.toks; len(t) > 0; {
		hdr := t[0]
		if hdr&1 == 0 {
			b = binary.AppendUvarint(b, uint64(hdr))
			for k := range byteWidth {
				b = append(b, byte(t[1]>>(8*k)))
			}
			t = t[2:]
			continue
		}
		n := int(hdr>>1) * 8
		b = binary.AppendUvarint(b, uint64(hdr))
		b = appendPacked(b, t[1:1+n], n, width)
		t = t[1+n:]
	}
	return b
}

// encodeLevels appends the levels, whose largest is maxLevel, in the
// hybrid after their length in 4 bytes (data page v1).
func (h *hybridRuns) encodeLevels(b []byte, maxLevel int16) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b = h.encode(b, bits.Len16(uint16(maxLevel)))
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}
