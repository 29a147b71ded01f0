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
// The values are appended to pend (add stays a slice append, inlined);
// a page of at most hybridPend values (most pages) is encoded from them
// by appendHybrid, as before. Past that they are made into runs
// hybridPend at a time (absorb), which costs a pass more over them.
// The runs are kept in toks: an RLE run as count<<1 then its value; a
// bit-packed run as groups<<1|1 then its groups*8 values (the last group
// padded with zeros). The run being made is in the state below.
type hybridRuns struct {
	pend []uint32
	// limit, if set, replaces hybridPend (tests).
	limit int
	toks  []uint32
	n     int // values absorbed
	mode  runMode
	// v and count are the run of equal values from the last decision
	// point (runUndecided, runRLE).
	v     uint32
	count int
	// hdr is the index in toks of the bit-packed run's header, groups
	// its complete groups, gn the values of the group being filled (the
	// last of toks) (runPacked).
	hdr    int
	groups int
	gn     int
}

// hybridPend is how many values hybridRuns holds before it makes them
// into runs: 64 KiB, the size of the pages, which most pages' levels do
// not reach.
const hybridPend = 16 << 10

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
func (h *hybridRuns) Len() int { return h.n + len(h.pend) }

// add adds v.
func (h *hybridRuns) add(v uint32) {
	h.pend = append(h.pend, v)
	if len(h.pend) >= hybridPend || len(h.pend) == h.limit {
		h.absorbPend()
	}
}

// absorbPend makes the pending values into runs. It is kept out of add
// so that add is inlined.
//
//go:noinline
func (h *hybridRuns) absorbPend() {
	h.absorb(h.pend)
	h.n += len(h.pend)
	h.pend = h.pend[:0]
}

// absorb makes vals into runs, continuing the run being made.
func (h *hybridRuns) absorb(vals []uint32) {
	for i := 0; i < len(vals); {
		switch h.mode {
		case runRLE:
			j, v := i, h.v
			for j < len(vals) && vals[j] == v {
				j++
			}
			h.count += j - i
			if i = j; i < len(vals) {
				h.toks = append(h.toks, uint32(h.count)<<1, h.v)
				h.mode, h.count = runUndecided, 0
			}
		case runUndecided:
			v := vals[i]
			if h.count > 0 && v != h.v {
				h.startPacked()
				continue
			}
			h.v = v
			h.count++
			i++
			if h.count == 8 {
				h.mode = runRLE
			}
		case runPacked:
			k := min(8-h.gn, len(vals)-i)
			h.toks = append(h.toks, vals[i:i+k]...)
			h.gn += k
			i += k
			if h.gn == 8 {
				h.endGroup()
			}
		}
	}
}

// startPacked starts a bit-packed run at the last decision point, before
// a value other than the short run's: its first group starts with them.
func (h *hybridRuns) startPacked() {
	h.mode, h.hdr, h.groups, h.gn = runPacked, len(h.toks), 0, h.count
	h.toks = append(h.toks, 0)
	for range h.count {
		h.toks = append(h.toks, h.v)
	}
	h.count = 0
}

// endGroup ends a full group of a bit-packed run: a group of 8 equal
// values (not its first) ends the run before it and starts an RLE run,
// the hybridMaxGroups-th ends the run with it.
func (h *hybridRuns) endGroup() {
	h.gn = 0
	g := h.toks[len(h.toks)-8:]
	if h.groups > 0 && g[0] == g[1] && g[0] == g[2] && g[0] == g[3] && g[0] == g[4] && g[0] == g[5] && g[0] == g[6] && g[0] == g[7] {
		h.toks = h.toks[:len(h.toks)-8]
		h.endPacked()
		h.mode, h.v, h.count = runRLE, g[0], 8
		return
	}
	h.groups++
	if h.groups == hybridMaxGroups {
		h.endPacked()
		h.mode, h.count = runUndecided, 0
	}
}

// endPacked writes the bit-packed run's header.
func (h *hybridRuns) endPacked() { h.toks[h.hdr] = uint32(h.groups)<<1 | 1 }

// finish makes the pending values into runs and ends the run being made:
// the page ends.
func (h *hybridRuns) finish() {
	h.absorbPend()
	switch h.mode {
	case runUndecided, runRLE:
		if h.count > 0 {
			h.toks = append(h.toks, uint32(h.count)<<1, h.v)
		}
	case runPacked:
		if h.gn > 0 {
			for ; h.gn < 8; h.gn++ {
				h.toks = append(h.toks, 0)
			}
			h.groups++
		}
		h.endPacked()
	}
	h.mode, h.count, h.gn = runUndecided, 0, 0
}

// reset empties the runs for the next page.
func (h *hybridRuns) reset() {
	*h = hybridRuns{pend: h.pend[:0], toks: h.toks[:0], limit: h.limit}
}

// encode appends the values added in the RLE/bit-packing hybrid at
// width bits a value (without a length before them), the bytes
// appendHybrid appends for them: from pend by appendHybrid if no value
// was made into runs, else from the runs, finished.
func (h *hybridRuns) encode(b []byte, width int) []byte {
	if h.n == 0 {
		return appendHybrid(b, h.pend, width)
	}
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
