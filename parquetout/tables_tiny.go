package parquetout

import "github.com/apache/arrow-go/v18/arrow"

// TinyPartBytes is the Arrow size up to which a partition's rows are
// written as one small file by package tinyparquet (one PLAIN,
// uncompressed page a column) rather than by pqarrow, whose set-up of
// some 0.3 ms a file is most of the time of a run with many small
// partitions (docs/TABLES.md, "Partitioned datasets").
const TinyPartBytes = 64 << 10

// tinyGate holds back the records of a part while they stay within
// TinyPartBytes, for the part to be written whole by tinyparquet; once
// they outgrow it, or when it is off, the caller writes them with pqarrow.
type tinyGate struct {
	on        bool
	held      []arrow.RecordBatch
	sizes     []int64
	heldBytes int64
}

// hold keeps rec, of Arrow size size, and returns true, if the gate is on
// and the records held stay within TinyPartBytes with it; otherwise it
// turns the gate off and returns false.
func (g *tinyGate) hold(rec arrow.RecordBatch, size int64) bool {
	if g.on && g.heldBytes+size <= TinyPartBytes {
		g.held, g.sizes = append(g.held, rec), append(g.sizes, size)
		g.heldBytes += size
		return true
	}
	g.on = false
	return false
}

// take returns the records held and their sizes, which the caller then
// owns, and holds none.
func (g *tinyGate) take() ([]arrow.RecordBatch, []int64) {
	held, sizes := g.held, g.sizes
	g.held, g.sizes, g.heldBytes = nil, nil, 0
	return held, sizes
}

// release releases the records held.
func (g *tinyGate) release() {
	held, _ := g.take()
	releaseAll(held)
}

// writeAll writes recs, of Arrow sizes sizes, with write; it releases
// those it did not get to after an error, and rec too.
func writeAll(recs []arrow.RecordBatch, sizes []int64, rec arrow.RecordBatch, write func(arrow.RecordBatch, int64) error) error {
	for i, r := range recs {
		if err := write(r, sizes[i]); err != nil {
			releaseAll(recs[i+1:])
			rec.Release()
			return err
		}
	}
	return nil
}

// dayWriter writes one partition's records through the table's writer:
// held back while they stay within TinyPartBytes, to be written as one
// tiny part, or once they outgrow it, as pqarrow parts.
type dayWriter struct {
	w    *tableWriter
	gate tinyGate
}

// write writes rec, which it owns, of Arrow size size.
func (d *dayWriter) write(rec arrow.RecordBatch, size int64) error {
	if d.gate.hold(rec, size) {
		return nil
	}
	held, sizes := d.gate.take()
	if err := writeAll(held, sizes, rec, d.w.write); err != nil {
		return err
	}
	return d.w.write(rec, size)
}

// close ends the partition: its tiny part, or its last pqarrow part.
func (d *dayWriter) close() error {
	if held, _ := d.gate.take(); len(held) > 0 {
		return d.w.writeTiny(held)
	}
	if d.w.partOpen {
		return d.w.closePart()
	}
	return nil
}

// release releases the records held back.
func (d *dayWriter) release() { d.gate.release() }

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
