package tabledef

import (
	"fmt"
	"slices"
	"strings"
)

// Type is the logical type of a column (docs/TABLES.md, "Types"); String
// spells it as docs/TABLES.md does.
type Type uint8

const (
	// UTF8 is a string.
	UTF8 Type = iota + 1
	// Int32 is a signed 32-bit integer.
	Int32
	// Int64 is a signed 64-bit integer.
	Int64
	// Float64 is an IEEE-754 double.
	Float64
	// Bool is a boolean.
	Bool
	// Timestamp is microseconds since the Unix epoch, in UTC.
	Timestamp
	// UTF8List is a list of strings.
	UTF8List
	// TokensMap is a map from a token counter's name to its count, in
	// document order, a count null when the counter is invalid.
	TokensMap
)

var typeNames = map[Type]string{
	UTF8:      "utf8",
	Int32:     "int32",
	Int64:     "int64",
	Float64:   "float64",
	Bool:      "bool",
	Timestamp: "timestamp[us, UTC]",
	UTF8List:  "list<utf8>",
	TokensMap: "map<utf8, int64>",
}

// String returns the type as docs/TABLES.md names it ("utf8",
// "timestamp[us, UTC]", ...).
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Column is the declaration of one column.
type Column struct {
	// Name is the column's name, one of the Col constants.
	Name string
	// Type is its logical type.
	Type Type
	// Nullable tells whether a cell may be null ("nullable: yes"); a
	// column that is not is Parquet required.
	Nullable bool
	// Dictionary asks the writer for dictionary encoding: only for
	// low-cardinality columns (a profile showed the dictionary hash tables
	// of ids, hashes, counts and times as a third of the writer's live
	// heap, for values that rarely repeat).
	Dictionary bool
	// Handlers names the handlers of package transform that compute the
	// column's values (transform.Needed runs them for a table asked
	// for); none for a column that comes from the record alone
	// (source_file, source_line). A handler's own requirements are not
	// repeated here: the registry adds them. Shared between the tables'
	// declarations: read it, do not change it.
	Handlers []string
}

// Source is where a table's rows come from.
type Source uint8

const (
	// FromDocument tables get their rows from each document as it is
	// read (usage, conversations, tool_calls, transcripts).
	FromDocument Source = iota
	// FromResolvedReceipts tables get theirs from the receipts resolved
	// at the end of a run (receipts, receipt_statements).
	FromResolvedReceipts
)

// Table is the declaration of one table: everything the handlers, the
// writers, the Iceberg schema, the commands' help and convbeam know of it
// but how its rows are built (package parquetout, table_<name>.go).
type Table struct {
	// Name is the table's name, one of Names.
	Name string
	// Summary says in a few words what a row is, for help texts.
	Summary string
	// Source is where the table's rows come from.
	Source Source
	// Columns are the table's columns, in their order in the files.
	Columns []Column
	// PartitionColumn is the Timestamp column whose UTC day is a row's
	// partition under --partition-by day (docs/TABLES.md, "Partitioned
	// datasets"). It is empty for the tables of a document's parts that
	// have no time column of their own (tool_calls, transcripts): they
	// are partitioned by the document's created_at, the column
	// conversations.created_at, so that a document's rows in the three
	// tables are in one partition.
	PartitionColumn string
}

// Column returns the table's column of that name.
func (t Table) Column(name string) (Column, bool) {
	i := slices.IndexFunc(t.Columns, func(c Column) bool { return c.Name == name })
	if i < 0 {
		return Column{}, false
	}
	return t.Columns[i], true
}

// ColumnNames returns the names of the table's columns, in order.
func (t Table) ColumnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// Names lists every table in the order docs/TABLES.md describes them: the
// order of their declarations.
var Names = func() []string {
	out := make([]string, len(declared))
	for i, t := range declared {
		out[i] = t.Name
	}
	return out
}()

// FromReceipts reports whether the named table is written from the
// resolved receipts at the end of a run (Source FromResolvedReceipts:
// receipts, receipt_statements), not from each document as it is read.
func FromReceipts(name string) bool {
	t, ok := lookup(name)
	return ok && t.Source == FromResolvedReceipts
}

// Select returns the tables of names whose rows come from src, in the
// order of names; names that are not declared are left out.
func Select(names []string, src Source) []string {
	var out []string
	for _, name := range names {
		if t, ok := lookup(name); ok && t.Source == src {
			out = append(out, name)
		}
	}
	return out
}

// List is the tables' names joined by sep, in the order of Names: for
// help texts and errors.
func List(sep string) string { return strings.Join(Names, sep) }

// Summaries is one line per table, "name: summary", in the order of
// Names: for help texts.
func Summaries() string {
	var b strings.Builder
	for _, t := range declared {
		fmt.Fprintf(&b, "  %-*s %s\n", width()+1, t.Name+":", t.Summary)
	}
	return b.String()
}

// width is the length of the longest table name.
func width() int {
	n := 0
	for _, t := range declared {
		n = max(n, len(t.Name))
	}
	return n
}

// lookup returns the declaration of the named table, shared: not to be
// changed.
func lookup(name string) (*Table, bool) {
	for i := range declared {
		if declared[i].Name == name {
			return &declared[i], true
		}
	}
	return nil, false
}

// Lookup returns the declaration of the named table (a copy: changing it
// changes no other caller's).
func Lookup(name string) (Table, bool) {
	t, ok := lookup(name)
	if !ok {
		return Table{}, false
	}
	c := *t
	c.Columns = slices.Clone(t.Columns)
	return c, true
}

// MustLookup is Lookup for a name known to be declared, such as one of
// the table constants; it panics on any other.
func MustLookup(name string) Table {
	t, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("tabledef: no table %q", name))
	}
	return t
}

// Parse parses the --tables flag: "all", "none", or a comma-separated
// list of names, in any case; each name once, in the order given.
func Parse(s string) ([]string, error) {
	s = strings.ToLower(s)
	switch s {
	case "all", "":
		return slices.Clone(Names), nil
	case "none":
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(Names, name) {
			return nil, fmt.Errorf("unknown table %q (tables: %s, or all, none)", name, List(", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}
