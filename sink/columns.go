package sink

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/convbatch/convbatch/transform"
)

// A table is declared once, as a list of columns (table_*.go): each column
// gives its name, its Arrow type and nullability (by the constructor used)
// and how a row's value is read. The schema and the appenders are both
// derived from that list, so a column cannot be in one and not the other.
//
// Appending runs per row on the writer goroutine. A column keeps its value
// reader typed by kind, and a bound column its builder typed, so appending
// a cell is a switch on the kind, one call of the reader and a direct call
// of the builder's append: no interface conversion or type assertion per
// cell, and no second indirect call as a closure around the reader would
// make. The utf8 and fixed-width columns have builders of their own
// (colbuilders.go), cheaper per cell than Arrow's.

// kind is how a column's value is read and appended.
type kind uint8

const (
	kindUTF8 kind = iota
	kindOptUTF8
	kindInt32
	kindOptInt32
	kindInt64
	kindOptInt64
	kindFloat64
	kindOptFloat64
	kindBool
	kindOptTimestamp
	kindUTF8List
	// kindOptBytes is a nullable utf8 column read as bytes.
	kindOptBytes
	// kindTokens is a nullable map<utf8, int64> of token counters.
	kindTokens
)

// column is one column of a table whose rows are of type R. Exactly the
// reader of its kind is set.
type column[R any] struct {
	field arrow.Field
	kind  kind
	// dictionary asks for dictionary encoding: only for low-cardinality
	// columns (a profile showed the dictionary hash tables of ids, hashes,
	// counts and times as a third of the live heap, for values that rarely
	// repeat).
	dictionary bool

	utf8       func(R) string
	optUTF8    func(R) transform.Opt[string]
	int32      func(R) int32
	optInt32   func(R) transform.Opt[int32]
	int64      func(R) int64
	optInt64   func(R) transform.Opt[int64] // also kindOptTimestamp
	float64    func(R) float64
	optFloat64 func(R) transform.Opt[float64]
	bool       func(R) bool
	utf8List   func(R) ([]string, bool)
	optBytes   func(R) ([]byte, bool)
	tokens     func(R) ([]transform.TokenCount, bool)
}

// dict returns the column with dictionary encoding.
func (c column[R]) dict() column[R] {
	c.dictionary = true
	return c
}

// table is the declaration of one table.
type table[R any] struct {
	name    string
	columns []column[R]
	schema  *arrow.Schema
	// partitionTime is the time whose UTC day is a row's partition under
	// PartitionDay (docs/TABLES.md, "Partitioned datasets").
	partitionTime func(R) transform.Opt[int64]
}

// partitionedBy returns the table with its partition time.
func (t *table[R]) partitionedBy(get func(R) transform.Opt[int64]) *table[R] {
	t.partitionTime = get
	return t
}

// newTable derives the table's schema from its columns.
func newTable[R any](name string, columns ...column[R]) *table[R] {
	fields := make([]arrow.Field, len(columns))
	for i, c := range columns {
		fields[i] = c.field
	}
	return &table[R]{name: name, columns: columns, schema: arrow.NewSchema(fields, nil)}
}

func (t *table[R]) tableName() string { return t.name }

func (t *table[R]) tableSchema() *arrow.Schema { return t.schema }

// dictionaryColumns names the columns written with dictionary encoding.
func (t *table[R]) dictionaryColumns() []string {
	var out []string
	for _, c := range t.columns {
		if c.dictionary {
			out = append(out, c.field.Name)
		}
	}
	return out
}

// boundColumn is a column with its builder, asserted to the builder type of
// its kind once.
type boundColumn[R any] struct {
	*column[R]
	utf8    *utf8Builder
	int32   *fixedBuilder[int32]
	int64   *fixedBuilder[int64] // also kindOptTimestamp
	float64 *fixedBuilder[float64]
	bool    *array.BooleanBuilder
	list    *utf8ListBuilder
	tokens  *tokensBuilder
}

// bind binds every column to its builder in rb.
func (t *table[R]) bind(rb *recordBuilder) []boundColumn[R] {
	out := make([]boundColumn[R], len(t.columns))
	for i := range t.columns {
		c, b, cb := &t.columns[i], rb.Field(i), rb.Column(i)
		bc := boundColumn[R]{column: c}
		switch c.kind {
		case kindUTF8, kindOptUTF8, kindOptBytes:
			bc.utf8 = cb.(*utf8Builder)
		case kindInt32, kindOptInt32:
			bc.int32 = cb.(*fixedBuilder[int32])
		case kindInt64, kindOptInt64, kindOptTimestamp:
			bc.int64 = cb.(*fixedBuilder[int64])
		case kindFloat64, kindOptFloat64:
			bc.float64 = cb.(*fixedBuilder[float64])
		case kindBool:
			bc.bool = b.(*array.BooleanBuilder)
		case kindUTF8List:
			bc.list = cb.(*utf8ListBuilder)
		case kindTokens:
			bc.tokens = cb.(*tokensBuilder)
		}
		out[i] = bc
	}
	return out
}

// appendRow appends row r to every column.
func appendRow[R any](cols []boundColumn[R], r R) {
	for i := range cols {
		c := &cols[i]
		switch c.kind {
		case kindUTF8:
			c.utf8.append(c.column.utf8(r))
		case kindOptUTF8:
			if v := c.optUTF8(r); v.Valid {
				c.utf8.append(v.V)
			} else {
				c.utf8.appendNull()
			}
		case kindOptBytes:
			if v, ok := c.optBytes(r); ok {
				c.utf8.appendBytes(v)
			} else {
				c.utf8.appendNull()
			}
		case kindInt32:
			c.int32.append(c.column.int32(r))
		case kindOptInt32:
			if v := c.optInt32(r); v.Valid {
				c.int32.append(v.V)
			} else {
				c.int32.appendNull()
			}
		case kindInt64:
			c.int64.append(c.column.int64(r))
		case kindOptInt64, kindOptTimestamp:
			if v := c.optInt64(r); v.Valid {
				c.int64.append(v.V)
			} else {
				c.int64.appendNull()
			}
		case kindFloat64:
			c.float64.append(c.column.float64(r))
		case kindOptFloat64:
			if v := c.optFloat64(r); v.Valid {
				c.float64.append(v.V)
			} else {
				c.float64.appendNull()
			}
		case kindBool:
			c.bool.Append(c.column.bool(r))
		case kindUTF8List:
			c.list.append(c.utf8List(r))
		case kindTokens:
			c.tokens.append(c.column.tokens(r))
		}
	}
}

// The Arrow types of the columns (docs/TABLES.md, "Types").
var (
	utf8Type      = arrow.BinaryTypes.String
	int32Type     = arrow.PrimitiveTypes.Int32
	int64Type     = arrow.PrimitiveTypes.Int64
	float64Type   = arrow.PrimitiveTypes.Float64
	boolType      = arrow.FixedWidthTypes.Boolean
	timestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	utf8ListType  = arrow.ListOf(arrow.BinaryTypes.String)
	tokensType    = arrow.MapOfWithMetadata(utf8Type, arrow.Metadata{}, int64Type, arrow.Metadata{})
)

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

// utf8Col is a non-nullable utf8 column.
func utf8Col[R any](name string, get func(R) string) column[R] {
	return column[R]{field: field(name, utf8Type, false), kind: kindUTF8, utf8: get}
}

// optUTF8Col is a nullable utf8 column: null where the value is not valid.
func optUTF8Col[R any](name string, get func(R) transform.Opt[string]) column[R] {
	return column[R]{field: field(name, utf8Type, true), kind: kindOptUTF8, optUTF8: get}
}

// int32Col is a non-nullable int32 column.
func int32Col[R any](name string, get func(R) int32) column[R] {
	return column[R]{field: field(name, int32Type, false), kind: kindInt32, int32: get}
}

// optInt32Col is a nullable int32 column.
func optInt32Col[R any](name string, get func(R) transform.Opt[int32]) column[R] {
	return column[R]{field: field(name, int32Type, true), kind: kindOptInt32, optInt32: get}
}

// int64Col is a non-nullable int64 column.
func int64Col[R any](name string, get func(R) int64) column[R] {
	return column[R]{field: field(name, int64Type, false), kind: kindInt64, int64: get}
}

// optInt64Col is a nullable int64 column.
func optInt64Col[R any](name string, get func(R) transform.Opt[int64]) column[R] {
	return column[R]{field: field(name, int64Type, true), kind: kindOptInt64, optInt64: get}
}

// float64Col is a non-nullable float64 column.
func float64Col[R any](name string, get func(R) float64) column[R] {
	return column[R]{field: field(name, float64Type, false), kind: kindFloat64, float64: get}
}

// optFloat64Col is a nullable float64 column.
func optFloat64Col[R any](name string, get func(R) transform.Opt[float64]) column[R] {
	return column[R]{field: field(name, float64Type, true), kind: kindOptFloat64, optFloat64: get}
}

// boolCol is a non-nullable bool column.
func boolCol[R any](name string, get func(R) bool) column[R] {
	return column[R]{field: field(name, boolType, false), kind: kindBool, bool: get}
}

// optTimestampCol is a nullable timestamp[us, UTC] column; get returns
// microseconds since the Unix epoch.
func optTimestampCol[R any](name string, get func(R) transform.Opt[int64]) column[R] {
	return column[R]{field: field(name, timestampType, true), kind: kindOptTimestamp, optInt64: get}
}

// utf8ListCol is a list<utf8> column; get returns the list and whether it
// is valid (a null list when not). A non-nullable column's get always
// returns true.
func utf8ListCol[R any](name string, nullable bool, get func(R) ([]string, bool)) column[R] {
	return column[R]{field: field(name, utf8ListType, nullable), kind: kindUTF8List, utf8List: get}
}

// optBytesCol is a nullable utf8 column read as bytes: null where get
// returns false.
func optBytesCol[R any](name string, get func(R) ([]byte, bool)) column[R] {
	return column[R]{field: field(name, utf8Type, true), kind: kindOptBytes, optBytes: get}
}

// tokensMapCol is a map<utf8, int64> column of token counters, in their
// order; get returns them and whether the map is valid (a null map when
// not). An invalid counter is a null value.
func tokensMapCol[R any](name string, get func(R) ([]transform.TokenCount, bool)) column[R] {
	return column[R]{field: field(name, tokensType, true), kind: kindTokens, tokens: get}
}
