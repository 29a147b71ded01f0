package costreport

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// Key is a grouping key of a report.
type Key string

// The grouping keys.
const (
	// Provider groups by the usage table's provider column.
	Provider Key = "provider"
	// Agent groups by agent_id (the message's agentId, else the
	// conversation's).
	Agent Key = "agent"
	// Day groups by created_at truncated to its UTC date, YYYY-MM-DD.
	Day Key = "day"
	// Role groups by the message's role.
	Role Key = "role"
	// Conversation groups by document, what identifies one in every table:
	// (source_file, source_line). Its group shows the conversation_id with
	// them, so the same id in two documents (the same archive given twice,
	// a duplicate-id) makes two groups, never one of doubled sums.
	Conversation Key = "conversation"
)

// Keys lists every grouping key, in the order help texts show them.
var Keys = []Key{Provider, Agent, Day, Role, Conversation}

// Labels of null key values.
const (
	// None stands for a null provider, agent_id or role. A provider or
	// agent literally named "(none)" falls in the same group.
	None = "(none)"
	// UnknownDay stands for a null created_at.
	UnknownDay = "unknown"
)

// Column returns the usage-table column whose value names the key's group
// (for Conversation, conversation_id; Columns lists every column read).
func (k Key) Column() string {
	switch k {
	case Provider:
		return tabledef.ColProvider
	case Agent:
		return tabledef.ColAgentID
	case Day:
		return tabledef.ColCreatedAt
	case Role:
		return tabledef.ColRole
	case Conversation:
		return tabledef.ColConversationID
	}
	return ""
}

// Columns returns the usage-table columns the key reads, one per field.
func (k Key) Columns() []string {
	if k == Conversation {
		return []string{tabledef.ColConversationID, tabledef.ColSourceFile, tabledef.ColSourceLine}
	}
	return []string{k.Column()}
}

// Fields returns the names of the columns the key shows in a report: its
// own name, and for Conversation also source_file and source_line.
func (k Key) Fields() []string {
	if k == Conversation {
		return []string{string(k), tabledef.ColSourceFile, tabledef.ColSourceLine}
	}
	return []string{string(k)}
}

// usage is the usage table's declaration: the report reads the columns
// by their declared names and labels them by their declared types.
var usage = tabledef.MustLookup(tabledef.Usage)

// declaredType is the declared type of the usage column name, 0 when the
// usage table has no such column.
func declaredType(name string) tabledef.Type {
	c, _ := usage.Column(name)
	return c.Type
}

// The metric columns of the usage table, which a report sums: cost as a
// float64 and the token counts as int64s, their declared types.
const metricCost = tabledef.ColCost

var metricTokens = []string{tabledef.ColTokensInput, tabledef.ColTokensOutput}

var (
	// ErrUnknownKey is wrapped by ParseKeys' error for a key it does not
	// know.
	ErrUnknownKey = errors.New("unknown grouping key")
	// ErrNoUsageTable is wrapped by Parts' error when the output directory
	// holds no usage table (a run with --tables none or without usage, or
	// not a convbatch output directory).
	ErrNoUsageTable = errors.New("no usage table")
	// ErrOverflow is wrapped by the error of a token sum past 2^63-1.
	ErrOverflow = errors.New("token sum overflows int64")
)

func keyList() string {
	names := make([]string, len(Keys))
	for i, k := range Keys {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ParseKeys parses a comma-separated list of keys ("provider,day"). A key
// named twice counts once; an unknown key is refused with an error listing
// the valid ones (there is no model key: the usage table has no model
// column).
func ParseKeys(s string) ([]Key, error) {
	var out []Key
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		k := Key(name)
		if !slices.Contains(Keys, k) {
			hint := ""
			if name == "model" {
				hint = "; the usage table has no model column"
			}
			return nil, fmt.Errorf("%w %q (valid keys: %s%s)", ErrUnknownKey, name, keyList(), hint)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no grouping key given (valid keys: %s)", keyList())
	}
	return out, nil
}

// Row is one group of a report, or its total.
type Row struct {
	// Values holds the group's key values, one per Report.Fields (one per
	// key, three for Conversation), with nulls shown as None or UnknownDay.
	// It is nil in the total row.
	Values []string
	// Messages is the number of usage rows (messages carrying usage fields)
	// in the group.
	Messages int64
	// TokensInput and TokensOutput sum the non-null tokens_input and
	// tokens_output cells.
	TokensInput, TokensOutput int64
	// Cost sums the non-null cost cells exactly: each cell is taken as the
	// shortest decimal that reads back as its double (DecimalFromFloat),
	// which is the archive's literal when that has at most 15 significant
	// digits, and the decimals are added with no rounding, so the sum does
	// not depend on the order of the rows.
	Cost Decimal
}

func (r *Row) add(o *Row) error {
	var ok1, ok2 bool
	r.Messages += o.Messages
	r.TokensInput, ok1 = addInt(r.TokensInput, o.TokensInput)
	r.TokensOutput, ok2 = addInt(r.TokensOutput, o.TokensOutput)
	r.Cost = r.Cost.Add(o.Cost)
	if !ok1 || !ok2 {
		return ErrOverflow
	}
	return nil
}

// addInt adds two non-negative counts, reporting overflow.
func addInt(a, b int64) (int64, bool) {
	if b > math.MaxInt64-a {
		return math.MaxInt64, false
	}
	return a + b, true
}

// Report is the result of an aggregation.
type Report struct {
	// Keys are the grouping keys, in the order asked.
	Keys []Key
	// Rows holds one row per group, by cost descending, then by key values
	// (source_line as a number; equal costs are equal decimals, so the
	// order is the same whatever the order of the rows read). With the Day
	// key, rows are by day first, oldest first, UnknownDay last.
	Rows []Row
	// Total sums every row.
	Total Row
	// Parts is the number of Parquet parts read.
	Parts int
	// Overview holds the groupings the HTML page charts when the report
	// was made WithOverview, else nil.
	Overview *Overview
	// Omitted sums the groups Top left out, and OmittedGroups counts
	// them; both are zero when Top was not called or left nothing out.
	Omitted       Row
	OmittedGroups int
	// Since and Until are the UTC days of WithDateRange, "" for an open
	// end or without it; Dated says whether it was given.
	Dated        bool
	Since, Until string
}

// Top keeps the n groups of highest cost (ties broken by key values, as
// Rows are sorted without the Day key), in the order of Rows, and sums
// the others into Omitted. Total still sums every group. n < 1 keeps
// every group.
func (r *Report) Top(n int) {
	if n < 1 || len(r.Rows) <= n {
		return
	}
	byCost := make([]int, len(r.Rows))
	for i := range byCost {
		byCost[i] = i
	}
	numeric := make([]bool, 0, len(r.Fields()))
	for _, f := range r.Fields() {
		numeric = append(numeric, numericField(f))
	}
	slices.SortStableFunc(byCost, func(i, j int) int {
		x, y := &r.Rows[i], &r.Rows[j]
		if c := y.Cost.Cmp(x.Cost); c != 0 {
			return c
		}
		return compareValues(x.Values, y.Values, numeric)
	})
	keep := make([]bool, len(r.Rows))
	for _, i := range byCost[:n] {
		keep[i] = true
	}
	rows := make([]Row, 0, n)
	for i := range r.Rows {
		if keep[i] {
			rows = append(rows, r.Rows[i])
			continue
		}
		// Sums of groups of one report do not overflow: Total holds them.
		_ = r.Omitted.add(&r.Rows[i])
		r.OmittedGroups++
	}
	r.Rows = rows
}

// Fields returns the names of the key columns of each row: each key's
// Fields, in the order of Keys.
func (r *Report) Fields() []string { return keyFields(r.Keys) }

// keyFields returns each key's Fields, in the order of keys.
func keyFields(keys []Key) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.Fields()...)
	}
	return out
}

// numericField reports whether a key field holds integers, which sort and
// print as numbers: a field named as a usage column of an integer type
// (source_line).
func numericField(name string) bool {
	t := declaredType(name)
	return t == tabledef.Int64 || t == tabledef.Int32
}

// FileError is the error of a part that cannot be read: not Parquet, a
// damaged file, or not a usage table.
type FileError struct {
	Path string
	Err  error
}

// Error names the file and the cause.
func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// Option configures an Aggregator.
type Option func(*options) error

type options struct {
	batchRows int64
	mem       memory.Allocator
	overview  bool
	// dated: only rows whose created_at falls on a UTC day from since to
	// until (day numbers since the epoch, inclusive) are summed.
	dated        bool
	since, until int64
}

// WithDateRange sums only the usage rows whose created_at falls on a UTC
// day from since to until, both included; a zero time leaves that end
// open. Only the dates of since and until (in UTC) count. Rows with no
// created_at are left out, as they fall on no day.
func WithDateRange(since, until time.Time) Option {
	return func(o *options) error {
		o.dated, o.since, o.until = true, math.MinInt64, math.MaxInt64
		if !since.IsZero() {
			o.since = floorDiv(since.Unix(), 86400)
		}
		if !until.IsZero() {
			o.until = floorDiv(until.Unix(), 86400)
		}
		if o.since > o.until {
			return fmt.Errorf("costreport: date range %s to %s: the start is after the end",
				since.UTC().Format(time.DateOnly), until.UTC().Format(time.DateOnly))
		}
		return nil
	}
}

// WithOverview makes the aggregation also sum the groupings the HTML page
// charts (OverviewKeys), in the same pass over the parts; Report.Overview
// then holds them.
func WithOverview() Option {
	return func(o *options) error {
		o.overview = true
		return nil
	}
}

// OverviewKeys are the groupings of an Overview, in its field order: by
// provider, by agent, and by day and provider.
var OverviewKeys = [][]Key{{Provider}, {Agent}, {Day, Provider}}

// Overview holds the groupings the HTML page draws, summed in the same
// pass as the report (see WithOverview).
type Overview struct {
	// ByProvider, ByAgent and ByDayProvider are the reports grouped by
	// provider, by agent, and by day and provider.
	ByProvider, ByAgent, ByDayProvider *Report
}

// WithBatchRows sets how many rows are decoded at a time (default 65536).
func WithBatchRows(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("costreport: batch rows %d: must be at least 1", n)
		}
		o.batchRows = int64(n)
		return nil
	}
}

// WithAllocator sets the Arrow allocator (default memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option {
	return func(o *options) error {
		if mem == nil {
			return errors.New("costreport: nil allocator")
		}
		o.mem = mem
		return nil
	}
}

// Aggregator sums usage rows by group. Feed it parts with AddFile or
// record batches with AddRecord, then take the Report. After the first
// error every call returns that error.
type Aggregator struct {
	keys   []Key
	opts   options
	groups map[string]*Row
	total  Row
	parts  int
	err    error

	buf     []byte
	vals    []string      // the current row's labels, one per field
	numeric []bool        // per field: it holds integers (numericField)
	subs    []*Aggregator // the OverviewKeys groupings, WithOverview
	lastDay int64
	dayStr  string
}

// NewAggregator returns an aggregator grouping by keys (at least one).
func NewAggregator(keys []Key, opts ...Option) (*Aggregator, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("no grouping key given (valid keys: %s)", keyList())
	}
	for _, k := range keys {
		if !slices.Contains(Keys, k) {
			return nil, fmt.Errorf("%w %q (valid keys: %s)", ErrUnknownKey, k, keyList())
		}
	}
	o := options{batchRows: 1 << 16, mem: memory.DefaultAllocator}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return newAggregator(keys, o), nil
}

// newAggregator returns an aggregator of valid keys and options.
func newAggregator(keys []Key, o options) *Aggregator {
	a := &Aggregator{keys: slices.Clone(keys), opts: o, groups: map[string]*Row{}, lastDay: math.MinInt64}
	for _, k := range keys {
		for _, f := range k.Fields() {
			a.numeric = append(a.numeric, numericField(f))
		}
	}
	a.vals = make([]string, len(a.numeric))
	if o.overview {
		// The overview's groupings are filtered by the rows' mask the
		// aggregator computes (add), not by their own.
		sub := o
		sub.overview, sub.dated = false, false
		for _, keys := range OverviewKeys {
			a.subs = append(a.subs, newAggregator(keys, sub))
		}
	}
	return a
}

// Parts returns the usage table's part files under the output directory
// out (out/tables/usage/*.parquet, and out/tables/usage/day=*/*.parquet
// for a run with --partition-by day; the data files of the current
// snapshot for an Iceberg table), in name order. It returns an error
// wrapping ErrNoUsageTable when there are none.
func Parts(out string) ([]string, error) {
	dir := filepath.Join(out, filepath.FromSlash(outdir.TableDir(tabledef.Usage)))
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w in %s (expected %s from convbatch run or extract with the usage table)", ErrNoUsageTable, out, filepath.Join(dir, "part-*.parquet"))
	}
	if v, err := icebergout.Version(dir); err != nil || v > 0 {
		if err != nil {
			return nil, err
		}
		return icebergParts(out)
	}
	parts, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		return nil, err
	}
	nested, err := filepath.Glob(filepath.Join(dir, "*=*", "*.parquet"))
	if err != nil {
		return nil, err
	}
	parts = append(parts, nested...)
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w in %s: %s holds no .parquet part", ErrNoUsageTable, out, dir)
	}
	slices.Sort(parts)
	return parts, nil
}

// icebergParts returns the data files of the current snapshot of the usage
// table under out, an Iceberg table (--table-format iceberg), in name
// order.
func icebergParts(out string) ([]string, error) {
	root, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	rels, err := icebergout.CurrentFiles(context.Background(), root, outdir.TableDir(tabledef.Usage))
	if err != nil {
		return nil, fmt.Errorf("%w in %s: %w", ErrNoUsageTable, out, err)
	}
	parts := make([]string, len(rels))
	for i, r := range rels {
		parts[i] = filepath.Join(out, filepath.FromSlash(r))
	}
	slices.Sort(parts)
	return parts, nil
}

// Aggregate reads every part of the usage table under the output directory
// out and returns its totals grouped by keys.
func Aggregate(ctx context.Context, out string, keys []Key, opts ...Option) (*Report, error) {
	a, err := NewAggregator(keys, opts...)
	if err != nil {
		return nil, err
	}
	parts, err := Parts(out)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := a.AddFile(ctx, p); err != nil {
			return nil, err
		}
	}
	return a.Report()
}

// AddFile streams one Parquet part of the usage table into the totals,
// reading only the columns the keys and the metrics need.
func (a *Aggregator) AddFile(ctx context.Context, path string) (err error) {
	if a.err != nil {
		return a.err
	}
	defer func() {
		// A damaged file can make the Parquet decoder panic; it is this
		// file's error, not a crash.
		if r := recover(); r != nil {
			err = &FileError{Path: path, Err: fmt.Errorf("damaged Parquet file: %v", r)}
		}
		if err != nil {
			a.err = err
		}
	}()
	pr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return &FileError{Path: path, Err: err}
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: a.opts.batchRows}, a.opts.mem)
	if err != nil {
		return &FileError{Path: path, Err: err}
	}
	schema := pr.MetaData().Schema
	var cols []int
	for _, name := range a.columns() {
		idx := schema.ColumnIndexByName(name)
		if idx < 0 {
			return &FileError{Path: path, Err: fmt.Errorf("not a usage table: no column %s", name)}
		}
		if !slices.Contains(cols, idx) {
			cols = append(cols, idx)
		}
	}
	slices.Sort(cols)
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return &FileError{Path: path, Err: err}
	}
	defer rr.Release()
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.addFiltered(rr.RecordBatch()); err != nil {
			return &FileError{Path: path, Err: err}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return &FileError{Path: path, Err: err}
	}
	a.parts++
	return nil
}

// columns lists the usage columns the aggregation reads.
func (a *Aggregator) columns() []string {
	out := append([]string{metricCost}, metricTokens...)
	for _, k := range a.keys {
		out = append(out, k.Columns()...)
	}
	for _, s := range a.subs {
		out = append(out, s.columns()...)
	}
	if a.opts.dated {
		out = append(out, tabledef.ColCreatedAt)
	}
	return out
}

// AddRecord adds one record batch of the usage table (it must hold the
// columns the keys and the metrics read; others are ignored).
func (a *Aggregator) AddRecord(rec arrow.RecordBatch) error {
	if a.err != nil {
		return a.err
	}
	if err := a.addFiltered(rec); err != nil {
		a.err = err
		return err
	}
	return nil
}

// addFiltered adds the rows of rec that the date range keeps (all
// without WithDateRange).
func (a *Aggregator) addFiltered(rec arrow.RecordBatch) error {
	if !a.opts.dated {
		return a.add(rec, nil)
	}
	arr, err := column(rec, tabledef.ColCreatedAt)
	if err != nil {
		return err
	}
	ts, ok := arr.(*array.Timestamp)
	if !ok {
		return fmt.Errorf("column %s is %s, want timestamp", tabledef.ColCreatedAt, arr.DataType())
	}
	perDay := unitsPerDay(ts.DataType().(*arrow.TimestampType).Unit)
	keep := make([]bool, rec.NumRows())
	for i := range keep {
		if !ts.IsNull(i) {
			d := floorDiv(int64(ts.Value(i)), perDay)
			keep[i] = d >= a.opts.since && d <= a.opts.until
		}
	}
	return a.add(rec, keep)
}

// stringColumn is a string array of either offset width.
type stringColumn interface {
	IsNull(i int) bool
	Value(i int) string
}

// column returns the column of rec named name; a usage table has exactly one.
func column(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("not a usage table: no column %s", name)
	}
	return rec.Column(idx[0]), nil
}

// add sums the rows of one record batch into their groups and the total,
// and into the overview's groupings: every row when keep is nil, else the
// rows i with keep[i].
func (a *Aggregator) add(rec arrow.RecordBatch, keep []bool) error {
	for _, s := range a.subs {
		if err := s.add(rec, keep); err != nil {
			return err
		}
	}
	metrics, err := metricColumnsOf(rec)
	if err != nil {
		return err
	}
	labels, err := a.labelers(rec)
	if err != nil {
		return err
	}
	for i := range int(rec.NumRows()) {
		if keep != nil && !keep[i] {
			continue
		}
		g := a.group(labels, i)
		r, err := metrics.row(i)
		if err != nil {
			return err
		}
		if err := g.add(&r); err != nil {
			shown := make([]string, len(g.Values))
			for i, v := range g.Values {
				shown[i] = printable(v) // labels come from the archive
			}
			return fmt.Errorf("group %s: %w", strings.Join(shown, ","), err)
		}
		if err := a.total.add(&r); err != nil {
			return fmt.Errorf("total: %w", err)
		}
	}
	return nil
}

// metricColumns are the usage table's columns a report sums.
type metricColumns struct {
	cost                *array.Float64
	tokensIn, tokensOut *array.Int64
}

// metricColumnsOf finds the metric columns of rec and checks their types.
func metricColumnsOf(rec arrow.RecordBatch) (metricColumns, error) {
	var m metricColumns
	costArr, err := column(rec, metricCost)
	if err != nil {
		return m, err
	}
	var ok bool
	if m.cost, ok = costArr.(*array.Float64); !ok {
		return m, fmt.Errorf("column %s is %s, want %s", metricCost, costArr.DataType(), declaredType(metricCost))
	}
	for i, dst := range []**array.Int64{&m.tokensIn, &m.tokensOut} {
		name := metricTokens[i]
		arr, err := column(rec, name)
		if err != nil {
			return m, err
		}
		if *dst, ok = arr.(*array.Int64); !ok {
			return m, fmt.Errorf("column %s is %s, want %s", name, arr.DataType(), declaredType(name))
		}
	}
	return m, nil
}

// row returns row i's metrics: one message, its tokens and its cost (0
// when null). Negative token counts and costs that are not finite are
// refused.
func (m metricColumns) row(i int) (Row, error) {
	r := Row{Messages: 1}
	if !m.tokensIn.IsNull(i) {
		r.TokensInput = m.tokensIn.Value(i)
	}
	if !m.tokensOut.IsNull(i) {
		r.TokensOutput = m.tokensOut.Value(i)
	}
	if r.TokensInput < 0 || r.TokensOutput < 0 {
		return Row{}, fmt.Errorf("negative token count in row %d (the usage table holds counts from 0 to 2^63-1)", i)
	}
	if !m.cost.IsNull(i) {
		c, err := DecimalFromFloat(m.cost.Value(i))
		if err != nil {
			return Row{}, fmt.Errorf("cost in row %d: %w", i, err)
		}
		r.Cost = c
	}
	return r, nil
}

// labelers returns, for each field of the grouping keys, a function giving
// row i's label from the field's column of rec.
func (a *Aggregator) labelers(rec arrow.RecordBatch) ([]func(i int) string, error) {
	var labels []func(i int) string
	for _, k := range a.keys {
		for _, col := range k.Columns() {
			arr, err := column(rec, col)
			if err != nil {
				return nil, err
			}
			var label func(i int) string
			switch t := declaredType(col); t {
			case tabledef.Timestamp:
				label, err = a.dayLabeler(col, arr)
			case tabledef.Int64:
				label, err = intLabeler(col, arr)
			case tabledef.UTF8:
				label, err = stringLabeler(col, arr)
			default:
				err = fmt.Errorf("column %s: the report cannot group by a column of type %s", col, t)
			}
			if err != nil {
				return nil, err
			}
			labels = append(labels, label)
		}
	}
	return labels, nil
}

// dayLabeler labels a row with the UTC day of its timestamp in column
// col, UnknownDay when it has none.
func (a *Aggregator) dayLabeler(col string, arr arrow.Array) (func(i int) string, error) {
	ts, ok := arr.(*array.Timestamp)
	if !ok {
		return nil, fmt.Errorf("column %s is %s, want timestamp", col, arr.DataType())
	}
	perDay := unitsPerDay(ts.DataType().(*arrow.TimestampType).Unit)
	return func(i int) string {
		if ts.IsNull(i) {
			return UnknownDay
		}
		return a.day(floorDiv(int64(ts.Value(i)), perDay))
	}, nil
}

// intLabeler labels a row with the decimal integer in column col, None
// when it is null.
func intLabeler(col string, arr arrow.Array) (func(i int) string, error) {
	n, ok := arr.(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("column %s is %s, want int64", col, arr.DataType())
	}
	return func(i int) string {
		if n.IsNull(i) {
			return None
		}
		return strconv.FormatInt(n.Value(i), 10)
	}, nil
}

// stringLabeler labels a row with the string in column col, None when it
// is null.
func stringLabeler(col string, arr arrow.Array) (func(i int) string, error) {
	s, ok := arr.(stringColumn)
	if !ok || !(arr.DataType().ID() == arrow.STRING || arr.DataType().ID() == arrow.LARGE_STRING) {
		return nil, fmt.Errorf("column %s is %s, want string", col, arr.DataType())
	}
	return func(i int) string {
		if s.IsNull(i) {
			return None
		}
		return s.Value(i)
	}, nil
}

// group returns the group of row i, made on first sight. Its map key is
// each label, length-prefixed.
func (a *Aggregator) group(labels []func(i int) string, i int) *Row {
	a.buf = a.buf[:0]
	for j, label := range labels {
		a.vals[j] = label(i)
		a.buf = binary.AppendUvarint(a.buf, uint64(len(a.vals[j])))
		a.buf = append(a.buf, a.vals[j]...)
	}
	g := a.groups[string(a.buf)]
	if g == nil {
		g = &Row{Values: make([]string, len(a.vals))}
		for j, v := range a.vals {
			g.Values[j] = strings.Clone(v)
		}
		a.groups[string(a.buf)] = g
	}
	return g
}

// day returns the YYYY-MM-DD label of a day number since the epoch,
// remembering the last one (rows of a run cluster by day).
func (a *Aggregator) day(d int64) string {
	if d != a.lastDay {
		a.lastDay = d
		a.dayStr = time.Unix(d*86400, 0).UTC().Format(time.DateOnly)
	}
	return a.dayStr
}

func unitsPerDay(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 86400
	case arrow.Millisecond:
		return 86400e3
	case arrow.Microsecond:
		return 86400e6
	}
	return 86400e9
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Report returns the totals: one row per group, and the total row. Rows
// are sorted by cost descending and then by key values (source_line as a
// number); a grouping with the Day key is sorted by day first, oldest
// first and UnknownDay last, so that it reads as a time series.
func (a *Aggregator) Report() (*Report, error) {
	if a.err != nil {
		return nil, a.err
	}
	var ov *Overview
	if len(a.subs) > 0 {
		reps := make([]*Report, len(a.subs))
		for i, s := range a.subs {
			s.parts = a.parts
			var err error
			if reps[i], err = s.Report(); err != nil {
				return nil, err
			}
		}
		ov = &Overview{ByProvider: reps[0], ByAgent: reps[1], ByDayProvider: reps[2]}
	}
	rows := make([]Row, 0, len(a.groups))
	for _, g := range a.groups {
		rows = append(rows, *g)
	}
	day := slices.Index(keyFields(a.keys), string(Day))
	slices.SortFunc(rows, func(x, y Row) int {
		if day >= 0 {
			if c := compareDays(x.Values[day], y.Values[day]); c != 0 {
				return c
			}
		}
		if c := y.Cost.Cmp(x.Cost); c != 0 {
			return c
		}
		return compareValues(x.Values, y.Values, a.numeric)
	})
	r := &Report{Keys: slices.Clone(a.keys), Rows: rows, Total: a.total, Parts: a.parts, Overview: ov, Dated: a.opts.dated}
	if a.opts.dated && a.opts.since != math.MinInt64 {
		r.Since = a.day(a.opts.since)
	}
	if a.opts.dated && a.opts.until != math.MaxInt64 {
		r.Until = a.day(a.opts.until)
	}
	return r, nil
}

// compareValues orders two groups' key values field by field, numeric
// fields (integers without leading zeros) as numbers.
func compareValues(x, y []string, numeric []bool) int {
	for j, num := range numeric {
		if num {
			// Integers without leading zeros: the shorter is smaller.
			if c := cmp.Compare(len(x[j]), len(y[j])); c != 0 {
				return c
			}
		}
		if c := strings.Compare(x[j], y[j]); c != 0 {
			return c
		}
	}
	return 0
}

// compareDays orders day labels by date, UnknownDay last. Labels are
// YYYY-MM-DD with a year of four digits or more, so the longer is later.
func compareDays(x, y string) int {
	switch {
	case x == y:
		return 0
	case x == UnknownDay:
		return 1
	case y == UnknownDay:
		return -1
	}
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(x, y)
}
