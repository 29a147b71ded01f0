package docindex

import "encoding/binary"

// idSet is a set of ids without Go pointers per id: open addressing
// (linear probing) over slots that hold an id's offset in one byte arena
// (plus one; 0 is empty) beside its 64-bit hash. About 45 bytes per id
// of ten bytes, at most half the slots used.
type idSet struct {
	slots  []uint64
	hashes []uint64
	arena  []byte
	n      int
}

func (s *idSet) reset() {
	clear(s.slots)
	s.arena = s.arena[:0]
	s.n = 0
}

// add puts id (whose fnv1a is h) in the set and reports whether it was
// new.
func (s *idSet) add(id []byte, h uint64) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := mix(h) & mask; ; i = (i + 1) & mask {
		off := s.slots[i]
		if off == 0 {
			s.slots[i] = uint64(len(s.arena)) + 1
			s.hashes[i] = h
			s.arena = binary.AppendUvarint(s.arena, uint64(len(id)))
			s.arena = append(s.arena, id...)
			s.n++
			return true
		}
		if s.hashes[i] == h && string(s.at(off)) == string(id) {
			return false
		}
	}
}

// at returns the id stored at slot value off.
func (s *idSet) at(off uint64) []byte {
	b := s.arena[off-1:]
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)]
}

func (s *idSet) grow() {
	size := max(1024, 2*len(s.slots))
	slots, hashes := make([]uint64, size), make([]uint64, size)
	mask := uint64(size - 1)
	for i, off := range s.slots {
		if off == 0 {
			continue
		}
		j := mix(s.hashes[i]) & mask
		for slots[j] != 0 {
			j = (j + 1) & mask
		}
		slots[j], hashes[j] = off, s.hashes[i]
	}
	s.slots, s.hashes = slots, hashes
}

// mix spreads FNV-1a's bits over the low ones that index the slots.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
