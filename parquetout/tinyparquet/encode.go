package tinyparquet

import (
	"encoding/binary"
	"math/bits"
)

// The value and level encodings of the File writer (see File): Parquet's
// RLE/bit-packing hybrid for levels and dictionary indices, and
// DELTA_BINARY_PACKED for integers and the lengths of
// DELTA_LENGTH_BYTE_ARRAY.

// hybridMaxGroups caps the groups of 8 values of one bit-packed run, so
// that its header stays one byte (as parquet-cpp writes them).
const hybridMaxGroups = 63

// runAt returns the length of the run of equal values starting at
// vals[i], counted up to 8.
func runAt(vals []uint32, i int) int {
	n := 1
	for i+n < len(vals) && n < 8 && vals[i+n] == vals[i] {
		n++
	}
	return n
}

// appendHybrid appends vals, each below 1<<width, in the RLE/bit-packing
// hybrid (without a length before it): a run of 8 or more equal values,
// or the last values when they are all equal, as an RLE run; other values
// bit-packed in groups of 8, the last group padded with zeros.
func appendHybrid(b []byte, vals []uint32, width int) []byte {
	byteWidth := (width + 7) / 8
	for i := 0; i < len(vals); {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if j-i >= 8 || j == len(vals) {
			b = binary.AppendUvarint(b, uint64(j-i)<<1)
			for k := range byteWidth {
				b = append(b, byte(vals[i]>>(8*k)))
			}
			i = j
			continue
		}
		start, groups := i, 0
		for i < len(vals) && groups < hybridMaxGroups {
			if groups > 0 && runAt(vals, i) >= 8 {
				break
			}
			i += 8
			groups++
		}
		i = min(i, len(vals))
		b = binary.AppendUvarint(b, uint64(groups)<<1|1)
		b = appendPacked(b, vals[start:i], groups*8, width)
	}
	return b
}

// appendPacked appends count values bit-packed at width bits each, least
// significant bit first: vals, then zeros up to count. width is at most
// 32.
func appendPacked(b []byte, vals []uint32, count, width int) []byte {
	if width == 0 {
		return b
	}
	var acc uint64
	nb := 0
	for k := range count {
		var v uint64
		if k < len(vals) {
			v = uint64(vals[k])
		}
		acc |= v << nb
		nb += width
		for nb >= 8 {
			b = append(b, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	if nb > 0 {
		b = append(b, byte(acc))
	}
	return b
}

// appendPacked64 appends vals bit-packed at width bits each (up to 64),
// least significant bit first.
func appendPacked64(b []byte, vals []uint64, width int) []byte {
	var acc uint64
	nb := 0
	for _, v := range vals {
		for w := width; w > 0; {
			t := min(w, 56)
			acc |= (v & (1<<t - 1)) << nb
			nb += t
			v >>= t
			w -= t
			for nb >= 8 {
				b = append(b, byte(acc))
				acc >>= 8
				nb -= 8
			}
		}
	}
	if nb > 0 {
		b = append(b, byte(acc))
	}
	return b
}

// DELTA_BINARY_PACKED's block: 128 values in 4 miniblocks of 32.
const (
	deltaBlock      = 128
	deltaMiniBlocks = 4
	deltaMini       = deltaBlock / deltaMiniBlocks
)

// deltaInts encodes a page's integers as DELTA_BINARY_PACKED, a block at a
// time as they come, so that its size is known as it grows.
type deltaInts struct {
	n           int
	first, prev int64
	// pend are the deltas of the block being filled.
	pend [deltaBlock]int64
	np   int
	// body are the blocks done.
	body []byte
	mini [deltaMini]uint64
}

func (d *deltaInts) reset() { d.n, d.np, d.body = 0, 0, d.body[:0] }

// add appends v.
func (d *deltaInts) add(v int64) {
	if d.n == 0 {
		d.first = v
	} else {
		d.pend[d.np] = v - d.prev
		d.np++
		if d.np == deltaBlock {
			d.block()
		}
	}
	d.prev = v
	d.n++
}

// size is an estimate of the encoded size.
func (d *deltaInts) size() int { return len(d.body) + 8*d.np + 16 }

// block encodes the pending deltas as a block: their minimum, the bit
// widths of the miniblocks, the miniblocks (none past the last delta).
func (d *deltaInts) block() {
	pend := d.pend[:d.np]
	minDelta := pend[0]
	for _, v := range pend[1:] {
		minDelta = min(minDelta, v)
	}
	d.body = binary.AppendVarint(d.body, minDelta)
	widths := len(d.body)
	d.body = append(d.body, make([]byte, deltaMiniBlocks)...)
	for m := range deltaMiniBlocks {
		lo := m * deltaMini
		if lo >= len(pend) {
			break
		}
		hi := min(lo+deltaMini, len(pend))
		var or uint64
		for k := lo; k < hi; k++ {
			u := uint64(pend[k] - minDelta)
			d.mini[k-lo] = u
			or |= u
		}
		clear(d.mini[hi-lo:])
		w := bits.Len64(or)
		d.body[widths+m] = byte(w)
		d.body = appendPacked64(d.body, d.mini[:], w)
	}
	d.np = 0
}

// finish appends the encoding of the values added to b: the header
// (block size, miniblocks, count, first value), then the blocks.
func (d *deltaInts) finish(b []byte) []byte {
	if d.np > 0 {
		d.block()
	}
	b = binary.AppendUvarint(b, deltaBlock)
	b = binary.AppendUvarint(b, deltaMiniBlocks)
	b = binary.AppendUvarint(b, uint64(d.n))
	b = binary.AppendVarint(b, d.first)
	return append(b, d.body...)
}
