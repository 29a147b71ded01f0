package sha256x16

import (
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"hash"
	"math/bits"
	"sync"
)

const (
	// lanes is the number of messages the kernel hashes side by side.
	lanes = 16

	// maxSteps caps the block steps of one kernel call; it is the length
	// of the mask array of a Hasher.
	maxSteps = 256

	// copyMax is the length up to which a message is short: copied whole,
	// with its padding, to the staging buffer and hashed in a group of 16
	// messages of about as many blocks. A longer one is read in place but
	// for its last partial block, copied and padded to its lane's buffer.
	copyMax = 1024

	// chunkMsgs is the number of short messages staged and sorted at a
	// time; it bounds the staging buffer (about 1.1 MB at worst, 220 KB
	// for messages of ~170 bytes).
	chunkMsgs = 1024

	// drainLanes is the number of busy lanes at or below which, once no
	// message waits for a lane, the lanes whose state covers whole blocks
	// of their message leave the kernel and crypto/sha256 (SHA-NI on this
	// machine) finishes them: the kernel costs the same per step however
	// few lanes are busy, and one lane's block on SHA-NI costs an eighth
	// of a 16-lane step here (36.5 ns against 298 ns, see doc.go). Short
	// messages left over from the groups of 16 go to crypto/sha256 as well
	// when they are this few.
	drainLanes = 8
)

// Initial hash values of SHA-256 (FIPS 180-4, 5.3.3).
var iv = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// Round constants of SHA-256 (FIPS 180-4, 4.2.2).
var roundK = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// table is roundK laid out for the kernel: each constant 16 times, and a
// 65th row that the kernel reads and does not use.
var table = func() (t [520]uint64) {
	for r, k := range roundK {
		for j := range 8 {
			t[r*8+j] = uint64(k)<<32 | uint64(k)
		}
	}
	return t
}()

// lane is what a Hasher knows of one of its 16 lanes while it hashes
// long messages.
type lane struct {
	msg   int    // index of the message in the lane
	seg   []byte // the blocks of the current run not yet hashed
	tail  int    // blocks in the lane's buffer to hash after seg; 0 when seg is the last run
	inBuf bool   // whether seg is in the lane's buffer (the padded end of the message)
	done  int    // bytes of the message in the lane's state (counted while !inBuf)
}

// A Hasher computes SHA-256 digests of batches of messages, 16 at a
// time in AVX-512 lanes where the CPU has them. It keeps the state and
// buffers of the lanes between calls, so that SumMany allocates nothing
// once the Hasher has been used on batches as large. The zero value is
// ready to use. A Hasher must not be used by two goroutines at once.
type Hasher struct {
	digests [512]byte // the 16 states, transposed (see sha256X16Avx512)
	scratch [512]byte
	masks   [maxSteps]uint64
	inputs  [lanes][]byte
	lane    [lanes]lane
	buf     [lanes][128]byte // the padded ends of long messages

	// A chunk of short messages: their indices, where each starts in
	// stage and how many blocks it takes there, and the positions in the
	// chunk sorted by blocks.
	chunk  [chunkMsgs]int32
	off    [chunkMsgs]int32
	blocks [chunkMsgs]uint8
	sorted [chunkMsgs]int16
	stage  []byte

	long []int32 // indices of the long messages

	ni    hash.Hash // crypto/sha256, for the lanes that leave the kernel
	state [4 + 32 + 64 + 8]byte
}

var pool = sync.Pool{New: func() any { return new(Hasher) }}

// SumMany sets sums[i] to sha256.Sum256(msgs[i]) for every i. Where the
// CPU has AVX-512 it hashes up to 16 messages at once, each in a lane of
// its own, with a Hasher from a pool; elsewhere it calls crypto/sha256 for
// one message after another. It allocates nothing in the steady state.
// It panics if len(sums) < len(msgs).
func SumMany(msgs [][]byte, sums [][32]byte) {
	if !useKernel || len(msgs) <= drainLanes {
		sumEach(msgs, sums)
		return
	}
	h := pool.Get().(*Hasher)
	h.SumMany(msgs, sums)
	pool.Put(h)
}

// SumMany sets sums[i] to sha256.Sum256(msgs[i]) for every i, as the
// function SumMany does, with h's lanes and buffers. It panics if
// len(sums) < len(msgs).
func (h *Hasher) SumMany(msgs [][]byte, sums [][32]byte) {
	if len(sums) < len(msgs) {
		panic("sha256x16: len(sums) < len(msgs)")
	}
	if !useKernel || len(msgs) <= drainLanes {
		sumEach(msgs, sums)
		return
	}
	h.sum16(msgs, sums)
}

// sumEach is the fallback: crypto/sha256, one message after another.
func sumEach(msgs [][]byte, sums [][32]byte) {
	if len(sums) < len(msgs) {
		panic("sha256x16: len(sums) < len(msgs)")
	}
	for i, m := range msgs {
		sums[i] = sha256.Sum256(m)
	}
}

// sum16 is SumMany on the kernel, in two phases.
//
// The short messages (up to copyMax bytes) are taken in chunks of
// chunkMsgs; those of a chunk are copied and padded to the staging buffer
// in their order, sorted by their number of blocks, and hashed 16 at a
// time: one kernel call for 16 messages of (mostly) equal numbers of
// blocks.
//
// The long ones, longest first (roughly: by powers of two), go through
// lanes that take the next message as soon as they are idle; each kernel
// call runs as many block steps as the busy lane with the shortest run
// left needs, so that no busy lane idles in a call. When no message waits
// and few lanes are busy, the rest goes to crypto/sha256 (see drainLanes).
func (h *Hasher) sum16(msgs [][]byte, sums [][32]byte) {
	h.digests = ivDigests
	h.long = h.long[:0]
	n := 0
	for i, m := range msgs {
		if len(m) > copyMax {
			h.long = append(h.long, int32(i))
			continue
		}
		h.chunk[n] = int32(i)
		if n++; n == chunkMsgs {
			h.shorts(msgs, sums, h.chunk[:n])
			n = 0
		}
	}
	if n > 0 {
		h.shorts(msgs, sums, h.chunk[:n])
	}
	if len(h.long) > 0 {
		h.refill(msgs, sums, h.sortLong(msgs))
	}
	// Keep no reference to the caller's messages.
	for l := range lanes {
		h.inputs[l] = nil
		h.lane[l] = lane{}
	}
}

// shorts hashes the short messages whose indices are chunk.
func (h *Hasher) shorts(msgs [][]byte, sums [][32]byte, chunk []int32) {
	const keys = (copyMax+8)/64 + 1 // blocks of a short message: 1..keys
	var count [keys + 2]int16
	total := 0
	for j, i := range chunk {
		b := (len(msgs[i]) + 8 + 64) / 64
		h.blocks[j] = uint8(b)
		count[b+1]++
		total += b * 64
	}
	if len(h.stage) < total {
		h.stage = make([]byte, total+total/4)
	}
	off := 0
	for j, i := range chunk {
		h.off[j] = int32(off)
		off += pad(h.stage[off:], msgs[i], len(msgs[i])) * 64
	}
	for k := 1; k < len(count); k++ {
		count[k] += count[k-1]
	}
	sorted := h.sorted[:len(chunk)]
	for j := range chunk {
		b := h.blocks[j]
		sorted[count[b]] = int16(j)
		count[b]++
	}
	g := 0
	for ; g+lanes <= len(sorted); g += lanes {
		h.group(sums, chunk, sorted[g:g+lanes])
	}
	if left := sorted[g:]; len(left) > drainLanes {
		h.group(sums, chunk, left)
	} else {
		for _, j := range left {
			i := chunk[j]
			sums[i] = sha256.Sum256(msgs[i])
		}
	}
}

// group hashes up to 16 staged short messages, at the positions pos of
// chunk, one a lane, in one kernel call of as many block steps as the
// longest needs.
func (h *Hasher) group(sums [][32]byte, chunk []int32, pos []int16) {
	steps := 0
	for l, j := range pos {
		b := int(h.blocks[j])
		steps = max(steps, b)
		h.inputs[l] = h.stage[h.off[j]:][:b*64]
	}
	for k := range steps {
		var mask uint64
		for l, j := range pos {
			if int(h.blocks[j]) > k {
				mask |= 1 << l
			}
		}
		h.masks[k] = mask
	}
	sha256X16Avx512(&h.digests, &h.scratch, &table, h.masks[:steps], h.inputs)
	for l, j := range pos {
		h.laneSum(l, &sums[chunk[j]])
	}
	h.digests = ivDigests
}

// sortLong sorts h.long by bits.Len of the messages' lengths, descending
// (a counting sort, stable), and returns it.
func (h *Hasher) sortLong(msgs [][]byte) []int32 {
	if len(h.long) < 2 {
		return h.long
	}
	var count [66]int32
	key := func(i int32) int { return 64 - bits.Len(uint(len(msgs[i]))) }
	for _, i := range h.long {
		count[key(i)+1]++
	}
	for k := 1; k < len(count); k++ {
		count[k] += count[k-1]
	}
	n := len(h.long)
	if cap(h.long) < 2*n {
		h.long = append(h.long, make([]int32, n)...)
	}
	in, out := h.long[:n], h.long[n:2*n]
	for _, i := range in {
		k := key(i)
		out[count[k]] = i
		count[k]++
	}
	return out
}

// refill hashes the long messages queue through lanes that take the next
// message as soon as they are idle.
func (h *Hasher) refill(msgs [][]byte, sums [][32]byte, queue []int32) {
	var busy uint32 // bit l: lane l is busy
	for {
		for free := ^busy & (1<<lanes - 1); free != 0 && len(queue) > 0; free &= free - 1 {
			l := bits.TrailingZeros32(free)
			h.start(l, int(queue[0]), msgs[queue[0]])
			queue = queue[1:]
			busy |= 1 << l
		}
		if busy == 0 {
			return
		}
		if len(queue) == 0 && bits.OnesCount32(busy) <= drainLanes {
			busy = h.drain(msgs, sums, busy)
			if busy == 0 {
				return
			}
		}

		steps := maxSteps
		for b := busy; b != 0; b &= b - 1 {
			l := bits.TrailingZeros32(b)
			steps = min(steps, len(h.lane[l].seg)/64)
			h.inputs[l] = h.lane[l].seg
		}
		for k := range steps {
			h.masks[k] = uint64(busy)
		}
		sha256X16Avx512(&h.digests, &h.scratch, &table, h.masks[:steps], h.inputs)

		n := steps * 64
		for b := busy; b != 0; b &= b - 1 {
			l := bits.TrailingZeros32(b)
			ln := &h.lane[l]
			ln.seg = ln.seg[n:]
			if !ln.inBuf {
				ln.done += n
			}
			if len(ln.seg) > 0 {
				continue
			}
			if ln.tail > 0 {
				ln.seg, ln.tail, ln.inBuf = h.buf[l][:ln.tail*64], 0, true
				continue
			}
			h.laneSum(l, &sums[ln.msg])
			h.resetLane(l)
			busy &^= 1 << l
		}
	}
}

// start puts the long message i, m, in lane l, whose state is the
// initial one: its whole blocks in place, then its padded end from the
// lane's buffer.
func (h *Hasher) start(l, i int, m []byte) {
	full := len(m) &^ 63
	h.lane[l] = lane{msg: i, seg: m[:full], tail: pad(h.buf[l][:], m[full:], len(m))}
}

// pad writes end, the last bytes of a message of n bytes, to dst and pads
// it as SHA-256 does (0x80, zeros, the length in bits as 8 big-endian
// bytes, to a whole number of blocks). It returns the number of blocks.
func pad(dst, end []byte, n int) int {
	k := copy(dst, end)
	blocks := (k + 8 + 64) / 64
	dst[k] = 0x80
	clear(dst[k+1 : blocks*64-8])
	binary.BigEndian.PutUint64(dst[blocks*64-8:], uint64(n)<<3)
	return blocks
}

// ivDigests is the initial hash values in all 16 lanes.
var ivDigests = func() (d [512]byte) {
	for w, v := range iv {
		for l := range lanes {
			binary.LittleEndian.PutUint32(d[64*w+4*l:], v)
		}
	}
	return d
}()

// resetLane sets the state of lane l to the initial hash values.
func (h *Hasher) resetLane(l int) {
	for w, v := range iv {
		binary.LittleEndian.PutUint32(h.digests[64*w+4*l:], v)
	}
}

// laneSum writes the state of lane l, as a digest, to sum.
func (h *Hasher) laneSum(l int, sum *[32]byte) {
	d := h.digests[4*l:]
	for w := range 8 {
		binary.BigEndian.PutUint32(sum[4*w:], binary.LittleEndian.Uint32(d[64*w:]))
	}
}

// drain hands to crypto/sha256 every busy lane whose state covers whole
// blocks of its message and nothing else, and returns the lanes still
// busy: those in the padded end of their message, which stay in the
// kernel for their last few blocks.
func (h *Hasher) drain(msgs [][]byte, sums [][32]byte, busy uint32) uint32 {
	if h.ni == nil {
		h.ni = sha256.New()
	}
	for b := busy; b != 0; b &= b - 1 {
		l := bits.TrailingZeros32(b)
		ln := &h.lane[l]
		if ln.inBuf {
			continue
		}
		// The state in the form of crypto/sha256's MarshalBinary: magic,
		// the 8 words, a block of buffered bytes (none), the length.
		s := h.state[:]
		copy(s, "sha\x03")
		for w := range 8 {
			binary.BigEndian.PutUint32(s[4+4*w:], binary.LittleEndian.Uint32(h.digests[64*w+4*l:]))
		}
		clear(s[36:100])
		binary.BigEndian.PutUint64(s[100:], uint64(ln.done))
		if err := h.ni.(encoding.BinaryUnmarshaler).UnmarshalBinary(s); err != nil {
			panic("sha256x16: crypto/sha256 refused a state: " + err.Error())
		}
		h.ni.Write(msgs[ln.msg][ln.done:])
		h.ni.Sum(sums[ln.msg][:0])
		h.resetLane(l)
		busy &^= 1 << l
	}
	return busy
}
