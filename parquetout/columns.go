package parquetout

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// A table's columns are declared once, in package tabledef: name, type,
// nullability, dictionary hint and partition column. Each table_*.go binds
// a getter to every declared column, by name (declare): how a row's value
// is read. The Arrow schema is derived from the declaration and the
// appenders from the getters, and declare refuses a declared column
// without a getter, a getter for a column that is not declared and a
// getter whose kind does not hold the declared type, so a column cannot
// be added in one place only.
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

// kindNames name the kinds in declare's errors, with their article.
var kindNames = [...]string{
	kindUTF8:         "a utf8",
	kindOptUTF8:      "a nullable utf8",
	kindInt32:        "an int32",
	kindOptInt32:     "a nullable int32",
	kindInt64:        "an int64",
	kindOptInt64:     "a nullable int64",
	kindFloat64:      "a float64",
	kindOptFloat64:   "a nullable float64",
	kindBool:         "a bool",
	kindOptTimestamp: "a nullable timestamp",
	kindUTF8List:     "a list<utf8>",
	kindOptBytes:     "a nullable utf8 (bytes)",
	kindTokens:       "a tokens map",
}

// String names the kind, with its article ("an int64").
func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// column is one column of a table whose rows are of type R. Exactly the
// reader of its kind is set; the constructors (utf8Col, ...) set the kind
// and the reader, declare the field and the dictionary hint from the
// table's declaration.
type column[R any] struct {
	field arrow.Field
	kind  kind
	// dictionary asks for dictionary encoding (tabledef.Column.Dictionary).
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

// table is one declared table with the getters of its rows, of type R.
type table[R any] struct {
	name    string
	columns []column[R]
	schema  *arrow.Schema
	// partitionTime is the time whose UTC day is a row's partition under
	// PartitionDay (docs/TABLES.md, "Partitioned datasets").
	partitionTime func(R) transform.Opt[int64]
}

// getters are the columns of a table whose rows are of type R, by the
// declared name of each (tabledef.Col...), their fields not yet set.
type getters[R any] map[string]column[R]

// declare binds the getters to the declared columns of the named table,
// in the declared order, and derives the table's Arrow schema from the
// declaration. The partition time is the getter of the declared partition
// column; a table declared without one (partitioned by its document's
// time) gives it as docTime, which is nil for every other. Every declared
// column must have a getter whose kind holds its type and nullability,
// and every getter a declared column.
func declare[R any](name string, cols getters[R], docTime func(R) transform.Opt[int64]) (*table[R], error) {
	decl, ok := tabledef.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("table %s is not declared", name)
	}
	t := &table[R]{name: name, columns: make([]column[R], len(decl.Columns))}
	fields := make([]arrow.Field, len(decl.Columns))
	for i, dc := range decl.Columns {
		c, ok := cols[dc.Name]
		if !ok {
			return nil, fmt.Errorf("table %s: declared column %s has no getter", name, dc.Name)
		}
		if !c.kind.holds(dc) {
			return nil, fmt.Errorf("table %s column %s: %s getter cannot fill a column of type %s (nullable %v)", name, dc.Name, c.kind, dc.Type, dc.Nullable)
		}
		c.field = arrow.Field{Name: dc.Name, Type: arrowType(dc.Type), Nullable: dc.Nullable}
		c.dictionary = dc.Dictionary
		t.columns[i], fields[i] = c, c.field
	}
	for _, n := range slices.Sorted(maps.Keys(cols)) {
		if _, ok := decl.Column(n); !ok {
			return nil, fmt.Errorf("table %s: getter for column %s, which is not declared", name, n)
		}
	}
	t.schema = arrow.NewSchema(fields, nil)
	switch p := decl.PartitionColumn; {
	case p != "" && docTime != nil:
		return nil, fmt.Errorf("table %s: partitioned by its column %s, and given a document's time too", name, p)
	case p != "":
		// The declaration makes it a Timestamp column, which only a
		// kindOptTimestamp getter holds.
		t.partitionTime = cols[p].optInt64
	case docTime == nil:
		return nil, fmt.Errorf("table %s: declared without a partition column, and given no document's time", name)
	default:
		t.partitionTime = docTime
	}
	return t, nil
}

// mustDeclare is declare for the package's tables, whose declarations are
// known at build time: a mismatch panics when the package is loaded, so
// that every test of the package and every run fails on it at once.
func mustDeclare[R any](name string, cols getters[R], docTime func(R) transform.Opt[int64]) *table[R] {
	t, err := declare(name, cols, docTime)
	if err != nil {
		panic("parquetout: " + err.Error())
	}
	return t
}

// holds reports whether a getter of kind k fills a column declared as c.
func (k kind) holds(c tabledef.Column) bool {
	switch k {
	case kindUTF8:
		return c.Type == tabledef.UTF8 && !c.Nullable
	case kindOptUTF8, kindOptBytes:
		return c.Type == tabledef.UTF8 && c.Nullable
	case kindInt32:
		return c.Type == tabledef.Int32 && !c.Nullable
	case kindOptInt32:
		return c.Type == tabledef.Int32 && c.Nullable
	case kindInt64:
		return c.Type == tabledef.Int64 && !c.Nullable
	case kindOptInt64:
		return c.Type == tabledef.Int64 && c.Nullable
	case kindFloat64:
		return c.Type == tabledef.Float64 && !c.Nullable
	case kindOptFloat64:
		return c.Type == tabledef.Float64 && c.Nullable
	case kindBool:
		return c.Type == tabledef.Bool && !c.Nullable
	case kindOptTimestamp:
		return c.Type == tabledef.Timestamp && c.Nullable
	case kindUTF8List:
		// A getter of a column that is not nullable always returns true.
		return c.Type == tabledef.UTF8List
	case kindTokens:
		return c.Type == tabledef.TokensMap && c.Nullable
	}
	return false
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

// arrowType is the Arrow type of a declared column type, nil for a type
// that is not declared.
func arrowType(t tabledef.Type) arrow.DataType {
	switch t {
	case tabledef.UTF8:
		return utf8Type
	case tabledef.Int32:
		return int32Type
	case tabledef.Int64:
		return int64Type
	case tabledef.Float64:
		return float64Type
	case tabledef.Bool:
		return boolType
	case tabledef.Timestamp:
		return timestampType
	case tabledef.UTF8List:
		return utf8ListType
	case tabledef.TokensMap:
		return tokensType
	}
	return nil
}

// utf8Col is a non-nullable utf8 column.
func utf8Col[R any](get func(R) string) column[R] {
	return column[R]{kind: kindUTF8, utf8: get}
}

// optUTF8Col is a nullable utf8 column: null where the value is not valid.
func optUTF8Col[R any](get func(R) transform.Opt[string]) column[R] {
	return column[R]{kind: kindOptUTF8, optUTF8: get}
}

// int32Col is a non-nullable int32 column.
func int32Col[R any](get func(R) int32) column[R] {
	return column[R]{kind: kindInt32, int32: get}
}

// optInt32Col is a nullable int32 column.
func optInt32Col[R any](get func(R) transform.Opt[int32]) column[R] {
	return column[R]{kind: kindOptInt32, optInt32: get}
}

// int64Col is a non-nullable int64 column.
func int64Col[R any](get func(R) int64) column[R] {
	return column[R]{kind: kindInt64, int64: get}
}

// optInt64Col is a nullable int64 column.
func optInt64Col[R any](get func(R) transform.Opt[int64]) column[R] {
	return column[R]{kind: kindOptInt64, optInt64: get}
}

// float64Col is a non-nullable float64 column.
func float64Col[R any](get func(R) float64) column[R] {
	return column[R]{kind: kindFloat64, float64: get}
}

// optFloat64Col is a nullable float64 column.
func optFloat64Col[R any](get func(R) transform.Opt[float64]) column[R] {
	return column[R]{kind: kindOptFloat64, optFloat64: get}
}

// boolCol is a non-nullable bool column.
func boolCol[R any](get func(R) bool) column[R] {
	return column[R]{kind: kindBool, bool: get}
}

// optTimestampCol is a nullable timestamp[us, UTC] column; get returns
// microseconds since the Unix epoch.
func optTimestampCol[R any](get func(R) transform.Opt[int64]) column[R] {
	return column[R]{kind: kindOptTimestamp, optInt64: get}
}

// utf8ListCol is a list<utf8> column, nullable or not; get returns the
// list and whether it is valid (a null list when not). The getter of a
// column that is not nullable always returns true.
func utf8ListCol[R any](get func(R) ([]string, bool)) column[R] {
	return column[R]{kind: kindUTF8List, utf8List: get}
}

// optBytesCol is a nullable utf8 column read as bytes: null where get
// returns false.
func optBytesCol[R any](get func(R) ([]byte, bool)) column[R] {
	return column[R]{kind: kindOptBytes, optBytes: get}
}

// tokensMapCol is a map<utf8, int64> column of token counters, in their
// order; get returns them and whether the map is valid (a null map when
// not). An invalid counter is a null value.
func tokensMapCol[R any](get func(R) ([]transform.TokenCount, bool)) column[R] {
	return column[R]{kind: kindTokens, tokens: get}
}
