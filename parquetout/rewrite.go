package parquetout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/parquetout/tinyparquet"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// A part shared by many inputs (one part per table per group of small
// inputs) is read back by its source_file column, which every table
// declares: SourceFiles lists the inputs a part holds rows of, Rewrite
// copies a part without the rows of some of them. Both read a part row
// group by row group and never hold more than one of its row groups.

// SourceFiles returns the distinct values of the source_file column of the
// Parquet part at path (a local file), sorted: the inputs, as named, that
// the part holds rows of; empty for a part with no rows.
//
// Only the source_file column is read, one row group at a time: memory is
// that column's compressed chunk in one row group (a dictionary page and
// the pages of its indices) plus the distinct values, whatever the size of
// the part. An error, a damaged or truncated part among them, names the
// file and wraps the cause.
//
// A caller about to Rewrite a part can decide from SourceFiles alone: when
// drop reports false for every file, the rewrite would copy every row and
// can be skipped; when true for every one, it would keep none.
func SourceFiles(path string) ([]string, error) {
	files, err := sourceFiles(path)
	if err != nil {
		return nil, fmt.Errorf("parquet part %s: %w", path, err)
	}
	return files, nil
}

func sourceFiles(path string) (files []string, err error) {
	defer recoverPanic(&err)
	p, err := openPart(path)
	if err != nil {
		return nil, err
	}
	defer p.close()
	seen := map[string]struct{}{}
	for rg := range p.rdr.NumRowGroups() {
		err := p.sourceRuns(rg, func(_, _ int64, file string) {
			seen[file] = struct{}{}
		})
		if err != nil {
			return nil, err
		}
	}
	files = slices.Sorted(maps.Keys(seen))
	if files == nil {
		files = []string{}
	}
	return files, nil
}

// Rewrite writes into txn, as the file rel, a copy of the Parquet part at
// src, a part of the named table (a tabledef name), without the rows whose
// source_file drop reports true, and returns the rows it kept. drop is
// called once per run of rows of one source_file (so once per input of
// the part when its rows are contiguous, as the pipeline writes them);
// its answers are not cached (a cache took 40 MB on a part of 300,000
// inputs).
//
// The copy is a part as the table's own writer (NewTables) writes it with
// opts: the table's schema and column order (src must have them: another
// schema is an error), and the same writer properties (compression,
// dictionary columns, encodings, root repetition, and the created_by of
// opts.Version, not src's). The rows kept stay in their order; row groups
// are cut as the writer cuts them, once the Arrow size of their rows
// reaches opts.RowGroupBytes, so rows of several row groups of src may
// share one. opts.PartBytes is not used: the copy is the one file rel. A
// partitioned table's part is rewritten the same (its partition is in its
// path, not its schema). With no row kept, rel is still written, a valid
// part with the schema and no row group; the caller decides whether to
// publish it. SourceFiles tells beforehand whether a rewrite would drop
// anything (see there).
//
// Memory is bounded by what one row group takes, never the whole part:
// src is read one row group at a time (its compressed column chunks, and
// its source_file column once more to find the rows kept), decoded
// opts.BatchRows rows at a time; the copy's row group being written is
// buffered until it is cut, as by the table's writer, with one batch
// queued to its encoder while it encodes another. Rewriting a 110 MB
// part of 3M rows with the default options took at most 118 MiB of heap.
//
// An error names src and rel and wraps the cause; rel is then left
// incomplete in txn, which the caller aborts, as after a failed Tables.
func Rewrite(txn *sink.Txn, rel string, src string, table string, opts TableOptions, drop func(sourceFile string) bool) (kept int64, err error) {
	kept, err = rewrite(txn, rel, src, table, opts, func(p *part, rg int) ([]rowRun, error) {
		var runs []rowRun
		err := p.sourceRuns(rg, func(start, end int64, file string) {
			if !drop(file) {
				runs = addRun(runs, start, end)
			}
		})
		return runs, err
	})
	if err != nil {
		return 0, fmt.Errorf("rewriting parquet part %s as %s: %w", src, rel, err)
	}
	return kept, nil
}

// RewriteRows is Rewrite with the rows dropped one by one, by their
// source_file and source_line: drop is called for every row. The
// receipts table's rows are dropped so (a receipt is one row at the
// position of its document), when a later run resolved them again.
func RewriteRows(txn *sink.Txn, rel string, src string, table string, opts TableOptions, drop func(sourceFile string, sourceLine int64) bool) (kept int64, err error) {
	kept, err = rewrite(txn, rel, src, table, opts, func(p *part, rg int) ([]rowRun, error) {
		return p.keptRows(rg, drop)
	})
	if err != nil {
		return 0, fmt.Errorf("rewriting parquet part %s as %s: %w", src, rel, err)
	}
	return kept, nil
}

// HasRows reports whether the Parquet part at path holds a row that match
// reports true for, by its source_file and source_line: whether
// RewriteRows would drop any. Only those two columns are read, one row
// group at a time.
func HasRows(path string, match func(sourceFile string, sourceLine int64) bool) (found bool, err error) {
	defer recoverPanic(&err)
	p, err := openPart(path)
	if err != nil {
		return false, fmt.Errorf("parquet part %s: %w", path, err)
	}
	defer p.close()
	for rg := range p.rdr.NumRowGroups() {
		kept, err := p.keptRows(rg, match)
		if err != nil {
			return false, fmt.Errorf("parquet part %s: %w", path, err)
		}
		var n int64
		for _, r := range kept {
			n += r.end - r.start
		}
		if n < p.rdr.RowGroup(rg).NumRows() {
			return true, nil
		}
	}
	return false, nil
}

// addRun appends the rows start to end to runs, merged with the last run
// when they follow it.
func addRun(runs []rowRun, start, end int64) []rowRun {
	if len(runs) > 0 && runs[len(runs)-1].end == start {
		runs[len(runs)-1].end = end
		return runs
	}
	return append(runs, rowRun{start, end})
}

// keptRows returns the rows of row group rg that drop keeps, as runs: it
// reads the source_file and source_line columns of the row group whole.
func (p *part) keptRows(rg int, drop func(file string, line int64) bool) ([]rowRun, error) {
	var files []string
	err := p.sourceRuns(rg, func(start, end int64, file string) {
		for range end - start {
			files = append(files, file)
		}
	})
	if err != nil {
		return nil, err
	}
	sc := p.rdr.MetaData().Schema
	i := sc.ColumnIndexByName(tabledef.ColSourceLine)
	if i < 0 {
		return nil, fmt.Errorf("no %s column", tabledef.ColSourceLine)
	}
	cr, err := p.rdr.RowGroup(rg).Column(i)
	if err != nil {
		return nil, fmt.Errorf("row group %d: %w", rg, err)
	}
	col, ok := cr.(*file.Int64ColumnChunkReader)
	if !ok || sc.Column(i).MaxDefinitionLevel() != 0 {
		return nil, fmt.Errorf("row group %d: column %s read as %T, want a required int64", rg, tabledef.ColSourceLine, cr)
	}
	lines := make([]int64, len(files))
	for read := 0; read < len(lines); {
		_, n, err := col.ReadBatch(int64(len(lines)-read), lines[read:], nil, nil)
		if err != nil {
			return nil, fmt.Errorf("row group %d: column %s: %w", rg, tabledef.ColSourceLine, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("row group %d: column %s ends after %d of %d rows (a damaged page?)", rg, tabledef.ColSourceLine, read, len(lines))
		}
		read += n
	}
	var runs []rowRun
	for r, f := range files {
		if !drop(f, lines[r]) {
			runs = addRun(runs, int64(r), int64(r)+1)
		}
	}
	return runs, nil
}

// Merge writes into txn, as the file rel, the rows of the Parquet parts
// srcs of the named table (a tabledef name), every row of each, in the
// order of srcs and each part's rows in their order, and returns how many
// it wrote. The merged part is written as Rewrite writes its copy (the
// table's schema, which every src must have, and opts' writer
// properties; row groups cut at opts.RowGroupBytes, across the parts), so
// that the source_file and source_line columns still tell which input
// each row came from: a later Rewrite of the merged part drops one
// input's rows from it. The parts are read one after the other, one row
// group at a time, each closed before the next is opened: memory is that
// of Rewrite, whatever the number of parts.
//
// An error names the part it is about and rel, and wraps the cause; rel
// is then left incomplete in txn, which the caller aborts.
func Merge(txn *sink.Txn, rel string, srcs []string, table string, opts TableOptions) (rows int64, err error) {
	if len(srcs) == 0 {
		return 0, fmt.Errorf("merging parquet parts as %s: no part to merge", rel)
	}
	rows, err = rewriteParts(txn, rel, srcs, table, opts, func(p *part, rg int) ([]rowRun, error) {
		n := p.rdr.MetaData().RowGroup(rg).NumRows()
		if n == 0 {
			return nil, nil
		}
		return []rowRun{{0, n}}, nil
	})
	if err != nil {
		return 0, fmt.Errorf("merging parquet parts as %s: %w", rel, err)
	}
	return rows, nil
}

// rewrite copies the part src of table to rel in txn, keeping the rows
// that keep returns for each row group, as runs.
func rewrite(txn *sink.Txn, rel string, src string, table string, opts TableOptions, keep func(p *part, rg int) ([]rowRun, error)) (kept int64, err error) {
	return rewriteParts(txn, rel, []string{src}, table, opts, keep)
}

// rewriteParts copies the parts srcs of table, one after the other, to
// rel in txn, keeping the rows that keep returns for each row group of
// each, as runs. An error about one of several parts names it.
func rewriteParts(txn *sink.Txn, rel string, srcs []string, table string, opts TableOptions, keep func(p *part, rg int) ([]rowRun, error)) (kept int64, err error) {
	info := tables[table]
	if info == nil {
		return 0, fmt.Errorf("unknown table %q", table)
	}
	opts.defaults()
	defer recoverPanic(&err)
	// The copy is written with the engine of the tables' parts.
	enc, err := withEngine(defaultEncoderConfig)
	if err != nil {
		return 0, err
	}
	schema := info.tableSchema()
	props := parquet.NewWriterProperties(writerProperties(info, opts)...)
	w := &rewriter{table: table, schema: schema, opts: opts, rel: rel, enc: newEncoder(table, txn, schema, props, enc)}
	if opts.PartitionBy == PartitionDay {
		// A partition's part, written as the table's writer writes it:
		// whole by tinyparquet while its rows are few.
		if t, err := tinyparquet.New(schema, props, arrowWriterProperties()); err == nil {
			w.tiny, w.gate.on = t, true
		}
	}
	defer func() {
		// Run before recoverPanic's (registered first): a panic is made
		// an error here, and the encoder stopped.
		if r := recover(); r != nil {
			err = panicError(r)
		}
		if err != nil {
			w.gate.release()
			w.enc.abort()
		}
	}()
	for _, src := range srcs {
		n, err := w.copyPart(src, keep)
		kept += n
		if err != nil {
			if len(srcs) > 1 {
				return 0, fmt.Errorf("parquet part %s: %w", src, err)
			}
			return 0, err
		}
	}
	if err := w.finish(); err != nil {
		return 0, err
	}
	if err := w.enc.wait(); err != nil {
		return 0, err
	}
	return kept, nil
}

// copyPart queues the rows keep returns of every row group of the part
// src, which must have the copy's schema, and returns how many it queued.
// The part is closed when it returns: the rows queued are the encoder's.
func (w *rewriter) copyPart(src string, keep func(p *part, rg int) ([]rowRun, error)) (kept int64, err error) {
	p, err := openPart(src)
	if err != nil {
		return 0, err
	}
	defer p.close()
	fr, err := pqarrow.NewFileReader(p.rdr, pqarrow.ArrowReadProperties{BatchSize: int64(w.opts.BatchRows)}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	have, err := fr.Schema()
	if err != nil {
		return 0, err
	}
	if diff := fieldsDiff(have, w.schema); diff != "" {
		return 0, fmt.Errorf("not a part of table %s: %s", w.table, diff)
	}
	w.fr = fr
	for rg := range p.rdr.NumRowGroups() {
		// The rows kept, as runs of row numbers within the row group.
		runs, err := keep(p, rg)
		if err != nil {
			return kept, err
		}
		if len(runs) == 0 {
			continue // nothing of it kept: not decoded
		}
		n, err := w.copyRowGroup(rg, runs)
		kept += n
		if err != nil {
			return kept, fmt.Errorf("row group %d: %w", rg, err)
		}
	}
	return kept, nil
}

// rowRun is the rows start to end (excluded) of a row group.
type rowRun struct{ start, end int64 }

// rewriter copies the rows kept of a part's row groups to an encoder,
// cutting the copy's row groups as tableWriter.flush does.
type rewriter struct {
	// table is the table's name; fr reads the part being copied.
	table  string
	fr     *pqarrow.FileReader
	schema *arrow.Schema
	opts   TableOptions
	enc    *encoder
	// rel is the copy's name; opened tells that the encoder opened it.
	rel    string
	opened bool
	// gate holds back the rows of a partition's part while they are few
	// enough for tiny to write the copy whole (see tinyGate).
	gate tinyGate
	tiny *tinyparquet.Writer
	// rgBytes is the Arrow size of the rows in the open row group; cut
	// asks for a new row group before the next rows.
	rgBytes int64
	cut     bool
}

// finish ends the copy: written whole by tiny from the rows held back, or
// the encoder's part closed (opened first if no row was kept: the copy
// is an empty part).
func (w *rewriter) finish() error {
	if held, _ := w.gate.take(); len(held) > 0 {
		return w.enc.send(encodeOp{kind: opTiny, rel: w.rel, recs: held, tiny: w.tiny})
	}
	if !w.opened {
		if err := w.open(); err != nil {
			return err
		}
	}
	return w.enc.send(encodeOp{kind: opClose})
}

func (w *rewriter) open() error {
	w.opened = true
	return w.enc.send(encodeOp{kind: opOpen, rel: w.rel})
}

// copyRowGroup queues the rows of row group rg in runs, in batches of at
// most BatchRows rows, and returns how many it queued.
func (w *rewriter) copyRowGroup(rg int, runs []rowRun) (kept int64, err error) {
	rr, err := w.fr.GetRecordReader(context.Background(), nil, []int{rg})
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var row int64 // the first row of the batch, within the row group
	for rr.Next() {
		rec := rr.RecordBatch()
		n := rec.NumRows()
		// The runs' pieces in this batch, relative to it.
		var pieces []rowRun
		for len(runs) > 0 && runs[0].start < row+n {
			if s, e := max(runs[0].start, row), min(runs[0].end, row+n); s < e {
				pieces = append(pieces, rowRun{s - row, e - row})
			}
			if runs[0].end > row+n {
				break
			}
			runs = runs[1:]
		}
		if len(pieces) > 0 {
			out, err := keptRecord(w.schema, rec, pieces)
			if err != nil {
				return kept, err
			}
			kept += out.NumRows()
			// The Arrow size of the rows kept, in proportion to the batch's:
			// a slice shares the batch's buffers.
			var size int64
			for _, col := range rec.Columns() {
				size += dataSize(col.Data())
			}
			if err := w.write(out, size*out.NumRows()/n); err != nil {
				return kept, err
			}
		}
		row += n
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return kept, err
	}
	if want := w.fr.ParquetReader().MetaData().RowGroup(rg).NumRows(); row != want {
		// arrow-go (v17, and v18.8.0 still: TestRewriteDamaged) ends
		// a column at a page it cannot read, without an error.
		return kept, fmt.Errorf("the columns end after %d of the %d rows the footer gives (a damaged page?)", row, want)
	}
	return kept, nil
}

// write queues rec, of Arrow size size, cutting the row group before it if
// the rows before reached RowGroupBytes: the next row group starts with
// the next rows, so the part never ends with an empty one.
func (w *rewriter) write(rec arrow.RecordBatch, size int64) error {
	if w.gate.hold(rec, size) {
		return nil
	}
	held, sizes := w.gate.take()
	if err := writeAll(held, sizes, rec, w.encode); err != nil {
		return err
	}
	return w.encode(rec, size)
}

// encode queues rec, of Arrow size size, to the encoder's part, opening
// it first if needed.
func (w *rewriter) encode(rec arrow.RecordBatch, size int64) error {
	if !w.opened {
		if err := w.open(); err != nil {
			rec.Release()
			return err
		}
	}
	op := encodeOp{kind: opWrite, rec: rec, newRowGroup: w.cut}
	w.cut = false
	if err := w.enc.send(op); err != nil {
		return err
	}
	w.rgBytes += size
	if w.rgBytes >= w.opts.RowGroupBytes {
		w.rgBytes, w.cut = 0, true
	}
	return nil
}

// keptRecord returns the rows of rec in pieces (sorted, disjoint) as one
// record of schema, which the caller owns: a slice of rec for one piece,
// their concatenation for several.
func keptRecord(schema *arrow.Schema, rec arrow.RecordBatch, pieces []rowRun) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	for _, p := range pieces {
		rows += p.end - p.start
	}
	for i, col := range rec.Columns() {
		if len(pieces) == 1 {
			cols[i] = array.NewSlice(col, pieces[0].start, pieces[0].end)
			continue
		}
		parts := make([]arrow.Array, len(pieces))
		for j, p := range pieces {
			parts[j] = array.NewSlice(col, p.start, p.end)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		for _, a := range parts {
			a.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

// fieldsDiff tells how the fields of have differ from those of
// want (names, types and nullability, in order; not metadata): the first
// difference, or "" when there is none.
func fieldsDiff(have, want *arrow.Schema) string {
	field := func(f arrow.Field) string {
		if f.Nullable {
			return fmt.Sprintf("%s %s (nullable)", f.Name, f.Type)
		}
		return fmt.Sprintf("%s %s", f.Name, f.Type)
	}
	for i := range min(have.NumFields(), want.NumFields()) {
		fh, fw := have.Field(i), want.Field(i)
		if fh.Name != fw.Name || fh.Nullable != fw.Nullable || !arrow.TypeEqual(fh.Type, fw.Type) {
			return fmt.Sprintf("column %d is %s, want %s", i+1, field(fh), field(fw))
		}
	}
	if have.NumFields() != want.NumFields() {
		return fmt.Sprintf("%d columns, want %d", have.NumFields(), want.NumFields())
	}
	return ""
}

// sourceBatch is how many source_file values are decoded at a time.
const sourceBatch = 4096

// part is a Parquet part opened for reading, with its source_file column.
type part struct {
	rdr *file.Reader
	// source is the leaf index of the source_file column.
	source int
	values []parquet.ByteArray
}

// openPart opens the part at path and finds its source_file column, a
// required utf8 column at the top level.
func openPart(path string) (*part, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	sc := rdr.MetaData().Schema
	i := sc.ColumnIndexByName(tabledef.ColSourceFile)
	if i < 0 {
		rdr.Close()
		return nil, fmt.Errorf("no %s column", tabledef.ColSourceFile)
	}
	if c := sc.Column(i); c.PhysicalType() != parquet.Types.ByteArray || c.MaxDefinitionLevel() != 0 || c.MaxRepetitionLevel() != 0 {
		rdr.Close()
		return nil, fmt.Errorf("column %s is %s with definition level %d, want a required utf8", tabledef.ColSourceFile, c.PhysicalType(), c.MaxDefinitionLevel())
	}
	return &part{rdr: rdr, source: i}, nil
}

func (p *part) close() { p.rdr.Close() }

// sourceRuns reads the source_file column of row group rg and calls visit
// for every run of rows with the same value, in order: rows start to end
// (excluded) within the row group, and their file. Rows of one input are
// contiguous in a part, so there are about as many runs as inputs.
func (p *part) sourceRuns(rg int, visit func(start, end int64, file string)) error {
	rgr := p.rdr.RowGroup(rg)
	cr, err := rgr.Column(p.source)
	if err != nil {
		return fmt.Errorf("row group %d: %w", rg, err)
	}
	col, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return fmt.Errorf("row group %d: column %s read as %T", rg, tabledef.ColSourceFile, cr)
	}
	if p.values == nil {
		p.values = make([]parquet.ByteArray, sourceBatch)
	}
	var row, start int64
	var cur string
	for {
		_, n, err := col.ReadBatch(sourceBatch, p.values, nil, nil)
		if err != nil {
			return fmt.Errorf("row group %d: column %s: %w", rg, tabledef.ColSourceFile, err)
		}
		if n == 0 {
			break
		}
		for _, v := range p.values[:n] {
			if row == start || string(v) != cur {
				if row > start {
					visit(start, row, cur)
				}
				cur, start = string(v), row
			}
			row++
		}
	}
	if row > start {
		visit(start, row, cur)
	}
	if want := rgr.NumRows(); row != want {
		// arrow-go (v17, and v18.8.0 still: TestRewriteDamaged) ends
		// a column at a page it cannot read, without an error.
		return fmt.Errorf("row group %d: column %s ends after %d of the %d rows the footer gives (a damaged page?)", rg, tabledef.ColSourceFile, row, want)
	}
	return nil
}

// recoverPanic turns a panic of the Parquet reader, which a damaged part
// can cause, into *err.
func recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = panicError(r)
	}
}

// panicError is the error of a panic r while reading a part.
func panicError(r any) error {
	return fmt.Errorf("panic while reading: %v", r)
}
