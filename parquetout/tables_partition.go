package parquetout

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/convbatch/convbatch/sink"
)

// Partitioning is how the tables are split into Hive-style partitions
// (docs/TABLES.md, "Partitioned datasets").
type Partitioning string

const (
	// PartitionNone writes each table as one directory of parts,
	// OUT/tables/<name>/part-NNNNN.parquet. The zero value means the same.
	PartitionNone Partitioning = "none"
	// PartitionDay writes each table's rows into one directory per UTC
	// day of its partition time, OUT/tables/<name>/day=YYYY-MM-DD/.
	PartitionDay Partitioning = "day"
)

// ParsePartitioning parses the --partition-by flag: "none" or "day".
func ParsePartitioning(s string) (Partitioning, error) {
	switch p := Partitioning(s); p {
	case PartitionNone, PartitionDay:
		return p, nil
	}
	return "", fmt.Errorf("unknown partitioning %q (want none or day)", s)
}

// NullPartition is the value, in a partition directory's name, of the rows
// whose partition time is null: Hive's default partition, which DuckDB,
// Spark, pyarrow and Polars read back as NULL (and DuckDB writes itself).
const NullPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionColumn is the name of the partition key in the directory names.
const PartitionColumn = "day"

// DefaultMaxOpenPartitions is the default of TableOptions.MaxOpenPartitions.
const DefaultMaxOpenPartitions = 8

// nullDay is the day key of the null partition.
const nullDay = math.MinInt64

const microsPerDay = 86_400_000_000

// dayOf returns the day key (days since 1970-01-01, UTC) of a time in
// microseconds since the epoch, or nullDay.
func dayOf(us int64, valid bool) int64 {
	if !valid {
		return nullDay
	}
	d := us / microsPerDay
	if us%microsPerDay < 0 {
		d--
	}
	return d
}

// DayPartition returns the name of the directory holding the rows whose
// partition time is us microseconds since the epoch (valid false: null):
// "day=2026-11-29", the UTC date, or "day=__HIVE_DEFAULT_PARTITION__". A
// year outside 0000-9999, which RFC 3339 reaches only through an offset
// or a leap second at the ends of its range, is written in decimal with
// its sign ("day=10000-01-01", "day=-1-12-31").
func DayPartition(us int64, valid bool) string {
	return dayName(dayOf(us, valid))
}

func dayName(day int64) string {
	if day == nullDay {
		return PartitionColumn + "=" + NullPartition
	}
	y, m, d := time.Unix(day*86400, 0).UTC().Date()
	if y < 0 || y > 9999 {
		return fmt.Sprintf("%s=%d-%02d-%02d", PartitionColumn, y, m, d)
	}
	return fmt.Sprintf("%s=%04d-%02d-%02d", PartitionColumn, y, m, d)
}

// partitions are the partitions of one table: a tableWriter per partition
// directory, each numbering its own parts from 00000.
//
// At most MaxOpenPartitions of them are open at once (an open partition
// holds a record builder and a Parquet writer with its buffered row
// group); opening one more closes the least recently used, whose part
// ends there: its next rows, if any come, start its next part. Rows of all
// the open partitions are handed to their Parquet writers together, every
// BatchRows rows in all, so the builders hold no more rows than one
// unpartitioned table's; and once the row groups buffered by the open
// partitions reach RowGroupBytes in all (Arrow size), the least recently
// used ones are closed until they fall below it, so the buffered row groups
// take no more memory than one unpartitioned table's either (besides the
// last row group of the partition evicted last, which its encoder may
// still be writing: evicting the next one waits for it). Archives in
// time order thus close a day's part soon after the day ends; only rows
// that keep returning to many days at once make many small parts.
type partitions struct {
	name string
	txn  *sink.Txn
	opts TableOptions
	info tableInfo
	enc  encoderConfig

	byDay map[int64]*tableWriter
	// closing is the partition evicted last, whose encoder may still be
	// writing its part.
	closing *tableWriter
	// open are the open partitions, least recently used first.
	open []*tableWriter
	// pending counts the rows in the open partitions' builders.
	pending int
	// maxOpen is the most partitions that were open at once.
	maxOpen int
}

func newPartitions(name string, txn *sink.Txn, opts TableOptions, info tableInfo, enc encoderConfig) *partitions {
	return &partitions{name: name, txn: txn, opts: opts, info: info, enc: enc, byDay: map[int64]*tableWriter{}}
}

// writer returns the open writer of the partition day, opening it (and
// closing the least recently used one if MaxOpenPartitions are open).
func (p *partitions) writer(day int64) (*tableWriter, error) {
	w := p.byDay[day]
	if w == nil {
		w = &tableWriter{name: p.name, partition: dayName(day), txn: p.txn, opts: p.opts, info: p.info, enc: p.enc, set: p}
		p.byDay[day] = w
	}
	if w.isOpen {
		if i := slices.Index(p.open, w); i != len(p.open)-1 {
			p.open = append(append(p.open[:i], p.open[i+1:]...), w)
		}
		return w, nil
	}
	for len(p.open) >= p.opts.MaxOpenPartitions {
		if err := p.evict(p.open[0]); err != nil {
			return nil, err
		}
	}
	// A partition evicted before ends its encoder before it gets a new
	// one, so that its parts are written one after the other.
	if p.closing == w {
		p.closing = nil
	}
	if err := w.wait(); err != nil {
		return nil, err
	}
	w.isOpen = true
	p.open = append(p.open, w)
	p.maxOpen = max(p.maxOpen, len(p.open))
	return w, nil
}

// rowAdded is called after a row was added to an open partition.
func (p *partitions) rowAdded() error {
	p.pending++
	if p.pending < p.opts.BatchRows {
		return nil
	}
	p.pending = 0
	for _, w := range p.open {
		if w.rows > 0 {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	// Close the least recently used partitions while the row groups held
	// in memory reach the budget of one table.
	for len(p.open) > 1 {
		var held int64
		for _, w := range p.open {
			held += w.rgBytes + w.cutBytes
		}
		if held < p.opts.RowGroupBytes {
			break
		}
		if err := p.evict(p.open[0]); err != nil {
			return err
		}
	}
	return nil
}

// evict closes the open partition w: its rows are queued, its part
// closed, its builder released and its encoder's queue ended. The
// partition evicted before is waited for first, so that at most one
// evicted partition's row group is still being written.
func (p *partitions) evict(w *tableWriter) error {
	p.open = slices.DeleteFunc(p.open, func(o *tableWriter) bool { return o == w })
	w.isOpen = false
	p.pending -= w.rows
	var err error
	if c := p.closing; c != nil && c != w {
		err = c.wait()
	}
	p.closing = w
	if w.rows > 0 {
		if ferr := w.flush(); err == nil {
			err = ferr
		}
	}
	w.release()
	if w.partOpen && w.err == nil {
		if cerr := w.closePart(); err == nil {
			err = cerr
		}
	}
	if w.encoder != nil {
		w.encoder.finish()
	}
	return err
}

// close closes every open partition. A table with no rows at all gets one
// part with its schema and no rows in the null partition, so that readers
// of the partitions' parts see the columns. wait then waits for the
// partitions' encoders.
func (p *partitions) close() error {
	if len(p.byDay) == 0 && p.opts.NoEmptyPart {
		return nil
	}
	if len(p.byDay) == 0 {
		w, err := p.writer(nullDay)
		if err != nil {
			return err
		}
		p.open = nil
		w.isOpen = false
		return w.close()
	}
	var first error
	for len(p.open) > 0 {
		if err := p.evict(p.open[0]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// wait waits for every partition's encoder and returns the first error,
// the partitions taken in the order of writers.
func (p *partitions) wait() error {
	var first error
	for _, w := range p.writers() {
		if err := w.wait(); err != nil && first == nil {
			first = err
		}
	}
	p.closing = nil
	return first
}

// abort releases the partitions' memory and stops their encoders.
func (p *partitions) abort() {
	for _, w := range p.byDay {
		w.abort()
	}
	p.open, p.closing = nil, nil
}

// writers returns every partition's writer, the days in order and the null
// partition last.
func (p *partitions) writers() []*tableWriter {
	days := make([]int64, 0, len(p.byDay))
	for d := range p.byDay {
		days = append(days, d)
	}
	slices.SortFunc(days, func(a, b int64) int {
		switch {
		case a == b:
			return 0
		case a == nullDay:
			return 1
		case b == nullDay:
			return -1
		}
		return cmp.Compare(a, b)
	})
	out := make([]*tableWriter, len(days))
	for i, d := range days {
		out[i] = p.byDay[d]
	}
	return out
}
