package tabledef_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
)

// docColumn is one row of a column table in docs/TABLES.md.
type docColumn struct {
	name, typ string
	nullable  bool
}

var tableName = regexp.MustCompile(`^[a-z_]+$`)

// docTables reads docs/TABLES.md: the column tables, for each "## name"
// section the rows "| `column` | type | nullable | meaning |" in order;
// and the table of partition times, for each table its "partitioned by"
// cell.
func docTables(t *testing.T) (order []string, tables map[string][]docColumn, partitionedBy map[string]string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "TABLES.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables, partitionedBy = map[string][]docColumn{}, map[string]string{}
	partitionRow := regexp.MustCompile(`^ *\| ([a-z_]+) \| (.*) \|$`)
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := partitionRow.FindStringSubmatch(line); m != nil && slices.Contains(tabledef.Names, m[1]) {
			partitionedBy[m[1]] = m[2]
			continue
		}
		if strings.HasPrefix(line, "#") {
			// A table's section is "## name"; other headings end it.
			section = ""
			if name, ok := strings.CutPrefix(line, "## "); ok && tableName.MatchString(name) {
				section = name
			}
			continue
		}
		if section == "" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 4 {
			t.Fatalf("TABLES.md, section %q: column row %q has %d cells", section, line, len(cells))
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name := strings.Trim(cells[0], "`")
		if _, ok := tables[section]; !ok {
			order = append(order, section)
		}
		var nullable bool
		switch cells[2] {
		case "yes":
			nullable = true
		case "no":
		default:
			t.Fatalf("TABLES.md, %s.%s: nullable %q, want yes or no", section, name, cells[2])
		}
		tables[section] = append(tables[section], docColumn{name: name, typ: cells[1], nullable: nullable})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return order, tables, partitionedBy
}

// TestDeclarationsMatchDoc holds every declaration to docs/TABLES.md: the
// tables in the documented order; for each column its name, position,
// type and nullability; and each table's partition time.
func TestDeclarationsMatchDoc(t *testing.T) {
	order, doc, partitionedBy := docTables(t)
	if !slices.Equal(order, tabledef.Names) {
		t.Errorf("TABLES.md documents the tables %v, tabledef.Names is %v", order, tabledef.Names)
	}
	for _, name := range tabledef.Names {
		decl := tabledef.MustLookup(name)
		cols := doc[name]
		if len(decl.Columns) != len(cols) {
			t.Errorf("table %s: %d columns declared, TABLES.md documents %d", name, len(decl.Columns), len(cols))
		}
		for i := range min(len(decl.Columns), len(cols)) {
			c, d := decl.Columns[i], cols[i]
			if c.Name != d.name || c.Type.String() != d.typ || c.Nullable != d.nullable {
				t.Errorf("table %s column %d: declared %s %s nullable=%v; TABLES.md: %s %s nullable=%v",
					name, i, c.Name, c.Type, c.Nullable, d.name, d.typ, d.nullable)
			}
		}
		// "its `created_at`" names the table's own column; the tables
		// without one are partitioned by "the document's `createdAt`".
		want := "the document's `createdAt`"
		if decl.PartitionColumn != "" {
			want = "its `" + decl.PartitionColumn + "`"
		}
		if got, ok := partitionedBy[name]; !ok || !strings.HasPrefix(got, want) {
			t.Errorf("table %s: TABLES.md says partitioned by %q, want it to start with %q", name, got, want)
		}
	}
}

// TestDeclarationsWellFormed checks what the writer and the readers rely
// on: unique table and column names, known types, dictionary encoding only
// for strings, and a partition column that is a timestamp of the table.
func TestDeclarationsWellFormed(t *testing.T) {
	if len(slices.Compact(slices.Sorted(slices.Values(tabledef.Names)))) != len(tabledef.Names) {
		t.Errorf("table names repeated: %v", tabledef.Names)
	}
	for _, name := range tabledef.Names {
		decl := tabledef.MustLookup(name)
		if decl.Name != name {
			t.Errorf("Lookup(%q).Name = %q", name, decl.Name)
		}
		seen := map[string]bool{}
		for _, c := range decl.Columns {
			if seen[c.Name] {
				t.Errorf("table %s: column %s declared twice", name, c.Name)
			}
			seen[c.Name] = true
			if strings.HasPrefix(c.Type.String(), "Type(") {
				t.Errorf("table %s column %s: unknown type %d", name, c.Name, c.Type)
			}
			if c.Dictionary && c.Type != tabledef.UTF8 {
				t.Errorf("table %s column %s: dictionary encoding on %s", name, c.Name, c.Type)
			}
		}
		if p := decl.PartitionColumn; p != "" {
			if c, ok := decl.Column(p); !ok || c.Type != tabledef.Timestamp {
				t.Errorf("table %s: partition column %s is not a timestamp column of the table", name, p)
			}
		}
	}
	// The tables without a time of their own are partitioned by
	// conversations.created_at.
	if c, ok := tabledef.MustLookup(tabledef.Conversations).Column(tabledef.ColCreatedAt); !ok || c.Type != tabledef.Timestamp {
		t.Errorf("conversations.created_at is %+v, want a timestamp column", c)
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ok      bool
		columns int
	}{
		{tabledef.Usage, true, 13},
		{tabledef.Conversations, true, 20},
		{tabledef.ToolCalls, true, 9},
		{tabledef.Receipts, true, 16},
		{tabledef.Transcripts, true, 5},
		{tabledef.ReceiptStatements, true, 13},
		{"Usage", false, 0},
		{"bogus", false, 0},
	} {
		decl, ok := tabledef.Lookup(tc.name)
		if ok != tc.ok || len(decl.Columns) != tc.columns {
			t.Errorf("Lookup(%q): %d columns, %v; want %d, %v", tc.name, len(decl.Columns), ok, tc.columns, tc.ok)
		}
	}
	// A caller's change to its copy is its own.
	a := tabledef.MustLookup(tabledef.Usage)
	a.Columns[0].Name = "changed"
	if b := tabledef.MustLookup(tabledef.Usage); b.Columns[0].Name != tabledef.ColConversationID {
		t.Errorf("Lookup shares its columns: %s", b.Columns[0].Name)
	}
}

func TestColumn(t *testing.T) {
	usage := tabledef.MustLookup(tabledef.Usage)
	for _, tc := range []struct {
		name     string
		typ      tabledef.Type
		nullable bool
		ok       bool
	}{
		{tabledef.ColCost, tabledef.Float64, true, true},
		{tabledef.ColSourceLine, tabledef.Int64, false, true},
		{tabledef.ColCreatedAt, tabledef.Timestamp, true, true},
		{tabledef.ColTitle, 0, false, false},
	} {
		c, ok := usage.Column(tc.name)
		if ok != tc.ok || c.Type != tc.typ || c.Nullable != tc.nullable || (ok && c.Name != tc.name) {
			t.Errorf("usage.Column(%q) = %+v, %v; want %s nullable=%v, %v", tc.name, c, ok, tc.typ, tc.nullable, tc.ok)
		}
	}
	if got := strings.Join(tabledef.MustLookup(tabledef.Transcripts).ColumnNames(), ","); got != "conversation_id,sha256,canonical_bytes,source_file,source_line" {
		t.Errorf("transcripts.ColumnNames() = %s", got)
	}
}

func TestTypeString(t *testing.T) {
	for _, tc := range []struct {
		typ  tabledef.Type
		want string
	}{
		{tabledef.UTF8, "utf8"},
		{tabledef.Int32, "int32"},
		{tabledef.Int64, "int64"},
		{tabledef.Float64, "float64"},
		{tabledef.Bool, "bool"},
		{tabledef.Timestamp, "timestamp[us, UTC]"},
		{tabledef.UTF8List, "list<utf8>"},
		{tabledef.TokensMap, "map<utf8, int64>"},
		{0, "Type(0)"},
		{200, "Type(200)"},
	} {
		if got := tc.typ.String(); got != tc.want {
			t.Errorf("Type(%d).String() = %q, want %q", uint8(tc.typ), got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	all := strings.Join(tabledef.Names, ",")
	for _, tc := range []struct {
		in   string
		want string
		err  bool
	}{
		{"all", all, false},
		{"", all, false},
		{"ALL", all, false},
		{"none", "", false},
		{"usage,conversations", "usage,conversations", false},
		{"Usage, CONVERSATIONS,usage", "usage,conversations", false},
		{"tool_calls", "tool_calls", false},
		{"usage,nope", "", true},
		{"usage,,receipts", "", true},
		{"receipts", "receipts", false},
		{"Receipt_Statements,receipts", "receipt_statements,receipts", false},
	} {
		got, err := tabledef.Parse(tc.in)
		if (err != nil) != tc.err || strings.Join(got, ",") != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
	// The list is the caller's.
	got, _ := tabledef.Parse("all")
	got[0] = "changed"
	if tabledef.Names[0] != tabledef.Usage {
		t.Errorf("Parse(all) shares Names: %v", tabledef.Names)
	}
}

func TestFromReceipts(t *testing.T) {
	for _, name := range tabledef.Names {
		want := name == tabledef.Receipts || name == tabledef.ReceiptStatements
		if got := tabledef.FromReceipts(name); got != want {
			t.Errorf("FromReceipts(%q) = %v, want %v", name, got, want)
		}
	}
	if tabledef.FromReceipts("bogus") {
		t.Error("FromReceipts(bogus) = true")
	}
}

func TestSelect(t *testing.T) {
	var docs []string
	for _, name := range tabledef.Names {
		if !tabledef.FromReceipts(name) {
			docs = append(docs, name)
		}
	}
	for _, tc := range []struct {
		names []string
		src   tabledef.Source
		want  string
	}{
		{tabledef.Names, tabledef.FromDocument, strings.Join(docs, ",")},
		{tabledef.Names, tabledef.FromResolvedReceipts, "receipts,receipt_statements"},
		{[]string{"receipt_statements", "bogus", "usage", "receipts"}, tabledef.FromResolvedReceipts, "receipt_statements,receipts"},
		{[]string{"receipt_statements", "bogus", "usage"}, tabledef.FromDocument, "usage"},
		{nil, tabledef.FromDocument, ""},
	} {
		if got := strings.Join(tabledef.Select(tc.names, tc.src), ","); got != tc.want {
			t.Errorf("Select(%v, %d) = %s, want %s", tc.names, tc.src, got, tc.want)
		}
	}
	if !slices.Contains(docs, tabledef.Usage) || !slices.Contains(docs, tabledef.Transcripts) {
		t.Errorf("tables of documents %v", docs)
	}
}

// TestHelpTexts: List and Summaries name every table, in the order of
// Names, a summary each.
func TestHelpTexts(t *testing.T) {
	if got := tabledef.List(", "); got != strings.Join(tabledef.Names, ", ") || !strings.HasPrefix(got, "usage, conversations, tool_calls, receipts") {
		t.Errorf("List = %s", got)
	}
	lines := strings.Split(strings.TrimSuffix(tabledef.Summaries(), "\n"), "\n")
	if len(lines) != len(tabledef.Names) {
		t.Fatalf("Summaries has %d lines, want %d:\n%s", len(lines), len(tabledef.Names), tabledef.Summaries())
	}
	col := -1
	for i, name := range tabledef.Names {
		rest, ok := strings.CutPrefix(lines[i], "  "+name+":")
		summary := strings.TrimLeft(rest, " ")
		at := len(lines[i]) - len(summary)
		if col < 0 {
			col = at
		}
		if !ok || summary == "" || at != col {
			t.Errorf("Summaries line %d %q: want %q, a summary at column %d", i, lines[i], name+":", col)
		}
	}
}

// TestDocsListNoTables: the README and docs/SCALE-OUT.md do not list the
// tables by name (the --tables flag, OUT's layout): they point to the
// help, which lists the declarations, and to docs/TABLES.md, which
// TestDeclarationsMatchDoc holds to them. A list by hand is one more place
// a new table must be added (issue 46 item 1: at most three files).
func TestDocsListNoTables(t *testing.T) {
	name := "(?:" + strings.Join(tabledef.Names, "|") + ")"
	list := regexp.MustCompile("\\b" + name + "`?\\s*,\\s*`?" + name + "`?\\s*,\\s*`?" + name + "\\b")
	for _, file := range []string{"README.md", "docs/SCALE-OUT.md"} {
		b, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for l := range strings.Lines(string(b)) {
			n++
			if m := list.FindString(l); m != "" {
				t.Errorf("%s:%d lists tables by hand (%q): point to `convbatch run --help` and docs/TABLES.md", file, n, m)
			}
		}
	}
}
