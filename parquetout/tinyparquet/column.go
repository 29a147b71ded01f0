package tinyparquet

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/parquet"
)

// Parquet's thrift enum values the File writer writes besides the Writer's.
const (
	encodingDeltaBinaryPacked    = 5
	encodingDeltaLengthByteArray = 6
	encodingRLEDictionary        = 8
	pageTypeDictionary           = 2
	codecZstd                    = 6
)

// numStats are the minimum and maximum of numeric values: integers and
// booleans in minI and maxI, floats in minF and maxF; has tells there is
// a min and max (NaN is no value of them). A File's stats and a Writer's
// leaf share them.
type numStats struct {
	has        bool
	minI, maxI int64
	minF, maxF float64
}

func (s *numStats) int(v int64) {
	if !s.has {
		s.minI, s.maxI, s.has = v, v, true
		return
	}
	s.minI, s.maxI = min(s.minI, v), max(s.maxI, v)
}

func (s *numStats) float(v float64) {
	if math.IsNaN(v) {
		return
	}
	if !s.has {
		s.minF, s.maxF, s.has = v, v, true
		return
	}
	s.minF, s.maxF = math.Min(s.minF, v), math.Max(s.maxF, v)
}

// stats are the statistics of a page's or a column chunk's values: those
// of numStats, the nulls, and byte arrays' min and max in minB and maxB.
type stats struct {
	numStats
	nulls      int64
	minB, maxB []byte
}

func (s *stats) reset() { s.has, s.nulls = false, 0 }

func (s *stats) bytes(v []byte) {
	if !s.has {
		s.minB, s.maxB, s.has = append(s.minB[:0], v...), append(s.maxB[:0], v...), true
		return
	}
	if bytes.Compare(v, s.minB) < 0 {
		s.minB = append(s.minB[:0], v...)
	} else if bytes.Compare(v, s.maxB) > 0 {
		s.maxB = append(s.maxB[:0], v...)
	}
}

// merge adds the statistics o of values of physical type phys.
func (s *stats) merge(o *stats, phys parquet.Type) {
	s.nulls += o.nulls
	if !o.has {
		return
	}
	switch phys {
	case parquet.Types.ByteArray:
		s.bytes(o.minB)
		s.bytes(o.maxB)
	case parquet.Types.Double:
		s.float(o.minF)
		s.float(o.maxF)
	default:
		s.int(o.minI)
		s.int(o.maxI)
	}
}

// encode returns the min (which 0) or max (1) in PLAIN encoding, in buf.
func (s *stats) encode(phys parquet.Type, which int, buf []byte) []byte {
	b := buf[:0]
	switch phys {
	case parquet.Types.Boolean:
		return append(b, byte([2]int64{s.minI, s.maxI}[which]))
	case parquet.Types.Int32:
		return binary.LittleEndian.AppendUint32(b, uint32(int32([2]int64{s.minI, s.maxI}[which])))
	case parquet.Types.Int64:
		return binary.LittleEndian.AppendUint64(b, uint64([2]int64{s.minI, s.maxI}[which]))
	case parquet.Types.Double:
		// The Parquet spec's rule for zeros: a min of zero is -0, a max
		// of zero is +0.
		v := [2]float64{s.minF, s.maxF}[which]
		if v == 0 {
			v = math.Copysign(0, float64(which)-0.5)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return [2][]byte{s.minB, s.maxB}[which]
}

// write writes the Statistics struct as field id, as pqarrow does: the
// null count; the min and max, when there are values and neither is
// longer than limit bytes, as min_value and max_value, and for a signed
// sort order also as min and max.
func (s *stats) write(w *compactWriter, id int16, phys parquet.Type, signed bool, limit int, scratch *[2][8]byte) {
	w.beginStruct(id)
	var lo, hi []byte
	has := s.has
	if has {
		lo, hi = s.encode(phys, 0, scratch[0][:]), s.encode(phys, 1, scratch[1][:])
		has = len(lo) <= limit && len(hi) <= limit
	}
	if has && signed {
		w.binary(1, hi)
		w.binary(2, lo)
	}
	w.i64(3, s.nulls)
	if has {
		w.binary(5, hi)
		w.binary(6, lo)
	}
	w.endStruct()
}

// valueEncoding is how a column's values are encoded.
type valueEncoding uint8

const (
	encPlain       valueEncoding = iota
	encDelta                     // DELTA_BINARY_PACKED (integers)
	encDeltaLength               // DELTA_LENGTH_BYTE_ARRAY (byte arrays)
	encDict                      // RLE_DICTIONARY, a PLAIN dictionary page (byte arrays)
)

// column builds one column chunk of a row group: its data pages, cut at
// the page size, compressed, each with its header and statistics, and its
// dictionary.
type column struct {
	*leaf // the column's schema (its buffers unused)
	enc   valueEncoding
	cfg   *fileConfig
	// statsOn writes statistics, of at most statsLimit bytes a value.
	statsOn    bool
	statsLimit int

	// The page being built: levels (rows counts those at repetition 0)
	// and values, the levels and dictionary indices as their runs (see
	// hybridRuns).
	def, rep     hybridRuns
	levels, rows int
	plain        []byte
	bools        int
	idx          hybridRuns
	delta        deltaInts
	raw          []byte
	pst          stats

	// The chunk: its data pages (headers and bodies), statistics and
	// sizes.
	chunk               chunkBuf
	cst                 stats
	values              int64
	uncompressed        int64
	dictPages, plainPgs int
	// The dictionary: value to index, the values PLAIN encoded.
	dict      map[string]uint32
	dictPlain []byte
	dictN     int
	fallback  bool
	// dictUncompressed is the dictionary page's size, header included,
	// uncompressed.
	dictUncompressed int64
	// last is the last value looked up in the dictionary, lastID its
	// index; lastOK tells there is one.
	last   []byte
	lastID uint32
	lastOK bool

	body, comp []byte
	hdr        compactWriter
	scratch    [2][8]byte
}

// pageEncoding is the encoding of the page being built.
func (c *column) pageEncoding() valueEncoding {
	if c.enc == encDict && c.fallback {
		return encPlain
	}
	return c.enc
}

// level adds a level; null is true when it has no value.
func (c *column) level(def, rep int16, null bool) {
	if c.maxDef > 0 {
		c.def.add(uint32(def))
	}
	if c.maxRep > 0 {
		c.rep.add(uint32(rep))
	}
	if rep == 0 {
		c.rows++
	}
	c.levels++
	if null {
		c.pst.nulls++
	}
}

func (c *column) int64(v int64) {
	if c.enc == encDelta {
		c.delta.add(v)
	} else {
		c.plain = binary.LittleEndian.AppendUint64(c.plain, uint64(v))
	}
	c.pst.int(v)
}

func (c *column) int32(v int32) {
	c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(v))
	c.pst.int(int64(v))
}

func (c *column) float64(v float64) {
	c.plain = binary.LittleEndian.AppendUint64(c.plain, math.Float64bits(v))
	c.pst.float(v)
}

func (c *column) bool(v bool) {
	if c.bools%8 == 0 {
		c.plain = append(c.plain, 0)
	}
	if v {
		c.plain[len(c.plain)-1] |= 1 << (c.bools % 8)
	}
	c.bools++
	c.pst.int(int64(b2i(v)))
}

func (c *column) bytes(v []byte) {
	switch c.pageEncoding() {
	case encDict:
		// The last value's index first: dictionary columns repeat
		// (a run's source file, a conversation's role and agent).
		if c.lastOK && string(v) == string(c.last) {
			c.idx.add(c.lastID)
			break
		}
		id, ok := c.dict[string(v)]
		if !ok {
			id = uint32(c.dictN)
			c.dict[string(v)] = id
			c.dictPlain = binary.LittleEndian.AppendUint32(c.dictPlain, uint32(len(v)))
			c.dictPlain = append(c.dictPlain, v...)
			c.dictN++
		}
		c.idx.add(id)
		c.last, c.lastID, c.lastOK = append(c.last[:0], v...), id, true
	case encDeltaLength:
		c.delta.add(int64(len(v)))
		c.raw = append(c.raw, v...)
	default:
		c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(len(v)))
		c.plain = append(c.plain, v...)
	}
	if c.statsOn {
		c.pst.bytes(v)
	}
}

// pageSize estimates the encoded size of the page's values.
func (c *column) pageSize() int {
	switch c.pageEncoding() {
	case encDelta:
		return c.delta.size()
	case encDeltaLength:
		return c.delta.size() + len(c.raw)
	case encDict:
		return 1 + c.idx.Len()*bits.Len(uint(c.dictN))/8
	}
	return len(c.plain)
}

// check cuts the page once it reaches the page size, and falls back to
// PLAIN once the dictionary outgrows its limit (after a page of it).
func (c *column) check() {
	if c.pageEncoding() == encDict && int64(len(c.dictPlain)) > c.cfg.dictLimit {
		c.flushPage()
		c.fallback = true
		return
	}
	if c.pageSize() >= c.cfg.pageBytes {
		c.flushPage()
	}
}

// flushPage appends the page built to the chunk, compressed, after its
// header, and starts the next.
func (c *column) flushPage() {
	if c.levels == 0 {
		return
	}
	enc := c.pageEncoding()
	b := c.body[:0]
	if c.maxRep > 0 {
		b = c.rep.encodeLevels(b, c.maxRep)
	}
	if c.maxDef > 0 {
		b = c.def.encodeLevels(b, c.maxDef)
	}
	code := int32(encodingPlain)
	switch enc {
	case encPlain:
		b = append(b, c.plain...)
		c.plainPgs++
	case encDelta:
		b = c.delta.finish(b)
		code = encodingDeltaBinaryPacked
		c.plainPgs++
	case encDeltaLength:
		b = c.delta.finish(b)
		b = append(b, c.raw...)
		code = encodingDeltaLengthByteArray
		c.plainPgs++
	case encDict:
		w := bits.Len(uint(max(c.dictN-1, 0)))
		b = append(b, byte(w))
		b = c.idx.encode(b, w)
		code = encodingRLEDictionary
		c.dictPages++
	}
	c.body = b
	data := c.compress(b)
	h := &c.hdr
	h.buf, h.last, h.stack = h.buf[:0], 0, h.stack[:0]
	h.i32(1, pageTypeData)
	h.i32(2, int32(len(b)))
	h.i32(3, int32(len(data)))
	h.beginStruct(5)
	h.i32(1, int32(c.levels))
	h.i32(2, code)
	h.i32(3, encodingRLE)
	h.i32(4, encodingRLE)
	if c.statsOn {
		c.pst.write(h, 5, c.phys, c.signed, c.statsLimit, &c.scratch)
	}
	h.endStruct()
	h.buf = append(h.buf, ctStop)
	c.chunk.write(h.buf)
	c.chunk.write(data)
	c.uncompressed += int64(len(h.buf) + len(b))
	c.values += int64(c.levels)
	c.cst.merge(&c.pst, c.phys)
	c.def.reset()
	c.rep.reset()
	c.idx.reset()
	c.plain, c.raw = c.plain[:0], c.raw[:0]
	c.levels, c.rows, c.bools = 0, 0, 0
	c.delta.reset()
	c.pst.reset()
}

// compress returns b compressed with the file's codec.
func (c *column) compress(b []byte) []byte {
	if c.cfg.compress == nil {
		return b
	}
	c.comp = c.cfg.compress(c.comp[:0], b)
	return c.comp
}

// resetChunk starts the next column chunk.
func (c *column) resetChunk() {
	c.chunk.reset()
	c.values, c.uncompressed = 0, 0
	c.dictPages, c.plainPgs = 0, 0
	c.cst.reset()
	if c.enc == encDict {
		clear(c.dict)
		c.dictPlain, c.dictN, c.fallback, c.lastOK = c.dictPlain[:0], 0, false, false
	}
}
