package tinyparquet

// A column chunk's pages are kept in blocks rather than in one slice that
// append grows (issue 46 item 2): a chunk grows to its row group's
// compressed size, and append grows a large slice by a quarter at a time,
// each time into a new array and copying what it holds, so that a chunk
// of n bytes allocated some 5n and copied some 4n, paid again by every
// fresh Table (a run's first row groups) and more the larger the row
// group: the write's cost per value grew with the row group (bench/
// RESULTS.md, "Writer options"). Blocks are filled and never copied, and
// kept for the next chunk.

// Block sizes: the first block of a chunk is chunkBlockMin bytes, each
// next one twice the one before, up to chunkBlockMax (a small column's
// chunk stays small; a large one's blocks are few).
const (
	chunkBlockMin = 4 << 10
	chunkBlockMax = 256 << 10
)

// chunkBuf is the bytes of a column chunk, in blocks: blocks[:used] hold
// them, each but the last full; the blocks past used are kept empty for
// reuse.
type chunkBuf struct {
	blocks [][]byte
	used   int
	n      int
}

// Len returns the bytes held.
func (c *chunkBuf) Len() int { return c.n }

// write appends p.
func (c *chunkBuf) write(p []byte) {
	c.n += len(p)
	for len(p) > 0 {
		if c.used == 0 || len(c.blocks[c.used-1]) == cap(c.blocks[c.used-1]) {
			c.next()
		}
		b := c.blocks[c.used-1]
		k := min(len(p), cap(b)-len(b))
		c.blocks[c.used-1] = append(b, p[:k]...)
		p = p[k:]
	}
}

// next makes the next block the last one in use, allocating it if none
// is kept.
func (c *chunkBuf) next() {
	if c.used == len(c.blocks) {
		size := chunkBlockMin
		if c.used > 0 {
			size = min(2*cap(c.blocks[c.used-1]), chunkBlockMax)
		}
		c.blocks = append(c.blocks, make([]byte, 0, size))
	}
	c.used++
}

// each calls emit with the blocks in use, in order.
func (c *chunkBuf) each(emit func([]byte)) {
	for _, b := range c.blocks[:c.used] {
		emit(b)
	}
}

// reset empties the chunk, keeping its blocks.
func (c *chunkBuf) reset() {
	for i := range c.blocks[:c.used] {
		c.blocks[i] = c.blocks[i][:0]
	}
	c.used, c.n = 0, 0
}
