package stream

import (
	"encoding/binary"
	"math/bits"
)

// xxh64 is XXH64 with seed 0, the hash whose low 32 bits are a zstd
// frame's content checksum (RFC 8878, 3.1.1). The Reader checks frame
// checksums itself, instead of leaving it to the decoder, because the
// decoder stops at the first frame whose checksum fails and does not hand
// over that frame's last block.
type xxh64 struct {
	v     [4]uint64
	total uint64
	buf   [32]byte
	n     int // bytes in buf
}

const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

func (h *xxh64) reset() {
	p1, p2 := xxPrime1, xxPrime2 // variables: the sums wrap, as they must
	*h = xxh64{v: [4]uint64{p1 + p2, p2, 0, -p1}}
}

func xxRound(acc, in uint64) uint64 {
	return bits.RotateLeft64(acc+in*xxPrime2, 31) * xxPrime1
}

func xxMerge(acc, v uint64) uint64 {
	return (acc^xxRound(0, v))*xxPrime1 + xxPrime4
}

func (h *xxh64) write(p []byte) {
	h.total += uint64(len(p))
	if h.n > 0 {
		k := copy(h.buf[h.n:], p)
		h.n += k
		p = p[k:]
		if h.n < 32 {
			return
		}
		h.blocks(h.buf[:])
		h.n = 0
	}
	if len(p) >= 32 {
		m := len(p) &^ 31
		h.blocks(p[:m])
		p = p[m:]
	}
	h.n = copy(h.buf[:], p)
}

// blocks folds whole 32-byte stripes into the four lanes.
func (h *xxh64) blocks(p []byte) {
	v1, v2, v3, v4 := h.v[0], h.v[1], h.v[2], h.v[3]
	for ; len(p) >= 32; p = p[32:] {
		v1 = xxRound(v1, binary.LittleEndian.Uint64(p))
		v2 = xxRound(v2, binary.LittleEndian.Uint64(p[8:]))
		v3 = xxRound(v3, binary.LittleEndian.Uint64(p[16:]))
		v4 = xxRound(v4, binary.LittleEndian.Uint64(p[24:]))
	}
	h.v = [4]uint64{v1, v2, v3, v4}
}

func (h *xxh64) sum64() uint64 {
	var acc uint64
	if h.total >= 32 {
		v1, v2, v3, v4 := h.v[0], h.v[1], h.v[2], h.v[3]
		acc = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		acc = xxMerge(acc, v1)
		acc = xxMerge(acc, v2)
		acc = xxMerge(acc, v3)
		acc = xxMerge(acc, v4)
	} else {
		acc = xxPrime5
	}
	acc += h.total
	p := h.buf[:h.n]
	for ; len(p) >= 8; p = p[8:] {
		acc ^= xxRound(0, binary.LittleEndian.Uint64(p))
		acc = bits.RotateLeft64(acc, 27)*xxPrime1 + xxPrime4
	}
	if len(p) >= 4 {
		acc ^= uint64(binary.LittleEndian.Uint32(p)) * xxPrime1
		acc = bits.RotateLeft64(acc, 23)*xxPrime2 + xxPrime3
		p = p[4:]
	}
	for _, b := range p {
		acc ^= uint64(b) * xxPrime5
		acc = bits.RotateLeft64(acc, 11) * xxPrime1
	}
	acc ^= acc >> 33
	acc *= xxPrime2
	acc ^= acc >> 29
	acc *= xxPrime3
	acc ^= acc >> 32
	return acc
}
