package parquetout

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// Partitioning is how the tables are split into Hive-style partitions:
// tabledef.Partitioning, declared there since it is part of OUT's layout
// (package outdir reads it too).
type Partitioning = tabledef.Partitioning

// The partitionings, NullPartition and PartitionColumn are tabledef's
// (PartitionNone, PartitionDay, NullPartition, PartitionKey).
const (
	PartitionNone   = tabledef.PartitionNone
	PartitionDay    = tabledef.PartitionDay
	NullPartition   = tabledef.NullPartition
	PartitionColumn = tabledef.PartitionKey
)

// ParsePartitioning parses the --partition-by flag: "none" or "day"
// (tabledef.ParsePartitioning).
func ParsePartitioning(s string) (Partitioning, error) { return tabledef.ParsePartitioning(s) }

// DefaultMaxOpenPartitions is the default of TableOptions.MaxOpenPartitions,
// which is unused (kept for the callers that set it).
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

// partitions write one table partitioned by day: at most one part per
// partition (more only where a part reaches PartBytes, as unpartitioned
// parts roll), however the rows of the days arrive, in the memory of about
// one unpartitioned table.
//
// The rows of every day are built together, in arrival order, in one
// record builder, and the day of each row is kept beside it. Every
// BatchRows rows the builder's rows become a record, held in memory. Once
// the held records reach RowGroupBytes (their Arrow size), they are sorted
// by day, stably, into one record (concatenated, then taken in day order)
// and spilled to a temporary Arrow IPC file, one IPC batch per day, an
// index keeping each day's batches in order (spill). Close then writes the
// partitions, the days in order and the null partition last, through the
// table's one tableWriter: each day's spilled batches in spill order, then
// the day's rows still held, sorted the same way. A day's rows thus keep
// their arrival order, its part is opened once, and only one part file is
// open at a time. Close does this on a goroutine of its own (writeAll),
// so that the tables write their partitions at once; wait waits for it.
//
// Memory is the builder's rows, the held records (RowGroupBytes, twice
// while they are sorted), the index (a few words per day and spill) and,
// while writing, what the tableWriter holds: one part's buffered row group
// and the encoder's queue.
type partitions struct {
	name string
	txn  *sink.Txn
	opts TableOptions
	info tableInfo

	// w writes every partition's parts, one partition after the other.
	w *tableWriter

	rb   *recordBuilder
	rows int
	// days are the days of the rows in rb.
	days []int64
	// held are the records built and not spilled, heldBytes their Arrow
	// size.
	held      []heldRecord
	heldBytes int64
	// spill holds the spilled rows, nil before the first spill and after
	// the end; spilled counts its batches.
	spill   *spillFile
	spilled int

	// done is closed when writeAll has ended, err is its error; stop asks
	// it to end early (Abort).
	done chan struct{}
	err  error
	stop atomic.Bool
}

// heldRecord is a record of rows and the day of each.
type heldRecord struct {
	rec  arrow.RecordBatch
	days []int64
}

func newPartitions(name string, txn *sink.Txn, opts TableOptions, info tableInfo, enc encoderConfig) *partitions {
	return &partitions{name: name, txn: txn, opts: opts, info: info,
		w: &tableWriter{name: name, txn: txn, opts: opts, info: info, enc: enc}}
}

func (p *partitions) builder() *recordBuilder {
	if p.rb == nil {
		p.rb = newRecordBuilder(p.info.tableSchema())
	}
	return p.rb
}

// rowAdded is called after a row of the day was added to the builder.
func (p *partitions) rowAdded(day int64) error {
	p.days = append(p.days, day)
	p.rows++
	if p.rows < p.opts.BatchRows {
		return nil
	}
	return p.build()
}

// build makes the builder's rows a held record, and spills the held
// records once they reach the table's memory budget.
func (p *partitions) build() error {
	if p.rows > 0 {
		rec := p.builder().NewRecord()
		p.heldBytes += recordSize(rec)
		p.held = append(p.held, heldRecord{rec: rec, days: p.days})
		p.days, p.rows = make([]int64, 0, p.opts.BatchRows), 0
	}
	if p.heldBytes < p.opts.RowGroupBytes || len(p.held) == 0 {
		return nil
	}
	return p.spillHeld()
}

// spillHeld sorts the held records by day and appends them to the spill
// file, one IPC batch per day.
func (p *partitions) spillHeld() error {
	s, err := sortByDay(p.held)
	p.releaseHeld()
	if err != nil {
		return fmt.Errorf("table %s: %w", p.name, err)
	}
	defer s.rec.Release()
	if p.spill == nil {
		dir := p.opts.SpillDir
		if dir == "" && p.txn != nil {
			dir = p.txn.Path("")
		}
		if p.spill, err = newSpillFile(dir, p.name, p.info.tableSchema()); err != nil {
			return fmt.Errorf("table %s: %w", p.name, err)
		}
	}
	for _, r := range s.runs {
		if err := p.spill.write(r.day, s.rec.NewSlice(r.start, r.end)); err != nil {
			return fmt.Errorf("table %s: spill: %w", p.name, err)
		}
	}
	return nil
}

func (p *partitions) releaseHeld() {
	for _, h := range p.held {
		h.rec.Release()
	}
	p.held, p.heldBytes = nil, 0
}

// close builds the last rows and starts writeAll; wait waits for it.
func (p *partitions) close() error {
	if p.rows > 0 {
		rec := p.builder().NewRecord()
		p.held = append(p.held, heldRecord{rec: rec, days: p.days})
		p.days, p.rows = nil, 0
	}
	if p.rb != nil {
		p.rb.Release()
		p.rb = nil
	}
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		p.err = p.writeAll()
	}()
	return nil
}

// writeAll writes every partition, the days in order and the null
// partition last, and ends the encoder's queue.
func (p *partitions) writeAll() error {
	w := p.w
	defer func() {
		if w.encoder != nil {
			w.encoder.finish()
		}
	}()
	s, err := sortByDay(p.held)
	p.releaseHeld()
	if err != nil {
		return fmt.Errorf("table %s: %w", p.name, err)
	}
	if s.rec != nil {
		defer s.rec.Release()
	}
	var spilled map[int64][]int
	if p.spill != nil {
		if spilled, err = p.spill.finish(); err != nil {
			return fmt.Errorf("table %s: spill: %w", p.name, err)
		}
	}
	days := make([]int64, 0, len(s.runs)+len(spilled))
	inMemory := make(map[int64]dayRun, len(s.runs))
	for _, r := range s.runs {
		inMemory[r.day] = r
		days = append(days, r.day)
	}
	for d := range spilled {
		if _, ok := inMemory[d]; !ok {
			days = append(days, d)
		}
	}
	slices.SortFunc(days, compareDays)
	if len(days) == 0 && !p.opts.NoEmptyPart {
		w.partition = dayName(nullDay)
		if err := w.open(); err != nil {
			return err
		}
		return w.closePart()
	}
	// The Arrow size of a slice of the sorted record, in proportion to its
	// rows: the slice's buffers are the whole record's.
	perRow := 0.0
	if s.rec != nil && s.rec.NumRows() > 0 {
		n := s.rec.NumRows()
		perRow = float64(recordSize(s.rec)) / float64(n)
	}
	for _, day := range days {
		w.partition, w.part = dayName(day), 0
		d := dayWriter{w: w, gate: tinyGate{on: w.tinyWriter() != nil}}
		for _, i := range spilled[day] {
			if p.stop.Load() {
				d.release()
				return fmt.Errorf("table %s: aborted", p.name)
			}
			rec, err := p.spill.read(i)
			if err != nil {
				d.release()
				return fmt.Errorf("table %s: spill: %w", p.name, err)
			}
			if err := d.write(rec, recordSize(rec)); err != nil {
				return err
			}
		}
		if r, ok := inMemory[day]; ok {
			if p.stop.Load() {
				d.release()
				return fmt.Errorf("table %s: aborted", p.name)
			}
			if err := d.write(s.rec.NewSlice(r.start, r.end), int64(perRow*float64(r.end-r.start))); err != nil {
				return err
			}
		}
		if err := d.close(); err != nil {
			return err
		}
	}
	return nil
}

// wait waits for writeAll and the encoder, and returns the first error.
func (p *partitions) wait() error {
	var err error
	if p.done != nil {
		<-p.done
		err = p.err
	}
	if werr := p.w.wait(); err == nil {
		err = werr
	}
	p.closeSpill()
	return err
}

// abort stops writeAll, if it runs, and the encoder, and releases the
// memory and the spill file.
func (p *partitions) abort() {
	p.stop.Store(true)
	if p.done != nil {
		<-p.done
	}
	p.w.abort()
	p.releaseHeld()
	if p.rb != nil {
		p.rb.Release()
		p.rb = nil
	}
	p.closeSpill()
}

func (p *partitions) closeSpill() {
	if p.spill != nil {
		p.spilled = p.spill.batches
		p.spill.close()
		p.spill = nil
	}
}

// writers returns the table's one writer, whose parts are those of every
// partition, the days in order and the null partition last.
func (p *partitions) writers() []*tableWriter {
	return []*tableWriter{p.w}
}

// compareDays orders days in time order, the null day last.
func compareDays(a, b int64) int {
	switch {
	case a == b:
		return 0
	case a == nullDay:
		return 1
	case b == nullDay:
		return -1
	}
	return cmp.Compare(a, b)
}

// recordSize is the Arrow size of a record's buffers.
func recordSize(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataSize(col.Data())
	}
	return n
}

// sortedRecord is a record sorted by day and the rows of each day in it,
// the days in order.
type sortedRecord struct {
	rec  arrow.RecordBatch
	runs []dayRun
}

// dayRun is the rows [start, end) of a day in a sortedRecord.
type dayRun struct {
	day        int64
	start, end int64
}

// sortByDay returns the rows of the held records in one record, sorted by
// day (the null day last), each day's rows in their order: a counting
// sort, the days' first rows keeping their order in held. Rows already in
// day order are only concatenated. The held records are not released.
func sortByDay(held []heldRecord) (sortedRecord, error) {
	slot := map[int64]int{}
	var days []int64
	var counts []int64
	total := 0
	for _, h := range held {
		for _, d := range h.days {
			i, ok := slot[d]
			if !ok {
				i = len(days)
				slot[d] = i
				days = append(days, d)
				counts = append(counts, 0)
			}
			counts[i]++
		}
		total += len(h.days)
	}
	order := make([]int, len(days))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareDays(days[a], days[b]) })
	next := make([]int64, len(days))
	runs := make([]dayRun, len(days))
	var at int64
	for k, i := range order {
		runs[k] = dayRun{day: days[i], start: at, end: at + counts[i]}
		next[i] = at
		at += counts[i]
	}
	indices := make([]int64, total)
	sorted := true
	row := int64(0)
	for _, h := range held {
		for _, d := range h.days {
			i := slot[d]
			indices[next[i]] = row
			if next[i] != row {
				sorted = false
			}
			next[i]++
			row++
		}
	}
	rec, err := concatRecords(held)
	if err != nil || rec == nil || sorted {
		return sortedRecord{rec: rec, runs: runs}, err
	}
	defer rec.Release()
	idx := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, total,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(indices))}, nil, 0, 0))
	defer idx.Release()
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	ctx := context.Background()
	for i, c := range rec.Columns() {
		if cols[i], err = compute.TakeArrayOpts(ctx, c, idx, compute.TakeOptions{BoundsCheck: false}); err != nil {
			return sortedRecord{}, fmt.Errorf("sorting rows by day: %w", err)
		}
	}
	return sortedRecord{rec: array.NewRecordBatch(rec.Schema(), cols, int64(total)), runs: runs}, nil
}

// concatRecords returns the rows of the held records as one record (a new
// reference to the only one, if there is one), nil when there are none.
func concatRecords(held []heldRecord) (arrow.RecordBatch, error) {
	switch len(held) {
	case 0:
		return nil, nil
	case 1:
		held[0].rec.Retain()
		return held[0].rec, nil
	}
	schema := held[0].rec.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	parts := make([]arrow.Array, len(held))
	for i := range cols {
		for j, h := range held {
			parts[j] = h.rec.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("concatenating rows: %w", err)
		}
		cols[i] = c
	}
	for _, h := range held {
		rows += h.rec.NumRows()
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}
