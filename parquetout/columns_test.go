package parquetout

import (
	"strings"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// TestDeclare: declare binds getters to exactly the declared columns, in
// the declared order, with kinds that hold the declared types, and takes
// the partition time from the declared partition column or, for a table
// declared without one, from the document's time.
func TestDeclare(t *testing.T) {
	type row struct {
		s   string
		n   transform.Opt[int64]
		doc transform.Opt[int64]
	}
	docTime := func(r row) transform.Opt[int64] { return r.doc }
	// transcripts: conversation_id, sha256, canonical_bytes, source_file,
	// source_line; no partition column.
	transcripts := func() getters[row] {
		return getters[row]{
			tabledef.ColConversationID: utf8Col(func(r row) string { return r.s }),
			tabledef.ColSHA256:         optBytesCol(func(r row) ([]byte, bool) { return []byte(r.s), true }),
			tabledef.ColCanonicalBytes: optInt64Col(func(r row) transform.Opt[int64] { return r.n }),
			tabledef.ColSourceFile:     utf8Col(func(r row) string { return r.s }),
			tabledef.ColSourceLine:     int64Col(func(r row) int64 { return 1 }),
		}
	}
	with := func(change func(getters[row])) getters[row] {
		g := transcripts()
		change(g)
		return g
	}
	for _, tc := range []struct {
		name    string
		table   string
		getters getters[row]
		docTime func(row) transform.Opt[int64]
		errHas  string
	}{
		{"complete", tabledef.Transcripts, transcripts(), docTime, ""},
		{"undeclared table", "nope", transcripts(), docTime, "table nope is not declared"},
		{"getter missing", tabledef.Transcripts, with(func(g getters[row]) { delete(g, tabledef.ColSHA256) }), docTime,
			"declared column sha256 has no getter"},
		{"getter of an undeclared column", tabledef.Transcripts, with(func(g getters[row]) { g["sha512"] = utf8Col(func(r row) string { return r.s }) }), docTime,
			"getter for column sha512, which is not declared"},
		{"not nullable for nullable", tabledef.Transcripts, with(func(g getters[row]) { g[tabledef.ColCanonicalBytes] = int64Col(func(r row) int64 { return 0 }) }), docTime,
			"column canonical_bytes: an int64 getter cannot fill a column of type int64 (nullable true)"},
		{"nullable for not nullable", tabledef.Transcripts, with(func(g getters[row]) {
			g[tabledef.ColSourceFile] = optUTF8Col(func(r row) transform.Opt[string] { return transform.Some(r.s) })
		}), docTime, "column source_file: a nullable utf8 getter cannot fill a column of type utf8 (nullable false)"},
		{"another type", tabledef.Transcripts, with(func(g getters[row]) { g[tabledef.ColSourceLine] = int32Col(func(r row) int32 { return 1 }) }), docTime,
			"column source_line: an int32 getter cannot fill a column of type int64 (nullable false)"},
		{"no document time", tabledef.Transcripts, transcripts(), nil, "declared without a partition column, and given no document's time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := declare(tc.table, tc.getters, tc.docTime)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("declare = %v; want an error with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			decl := tabledef.MustLookup(tc.table)
			for i, c := range tb.columns {
				if c.field.Name != decl.Columns[i].Name || c.field.Nullable != decl.Columns[i].Nullable || c.dictionary != decl.Columns[i].Dictionary {
					t.Errorf("column %d: %+v, dictionary %v; declared %+v", i, c.field, c.dictionary, decl.Columns[i])
				}
			}
			if got := tb.partitionTime(row{doc: transform.Some[int64](7)}); got != transform.Some[int64](7) {
				t.Errorf("partition time %v, want the document's", got)
			}
		})
	}
}

// TestDeclarePartitionColumn: a table declared with a partition column
// takes its partition time from that column's getter, and refuses a
// document's time besides.
func TestDeclarePartitionColumn(t *testing.T) {
	cols := getters[usageRow]{}
	for _, c := range tables[tabledef.Usage].(docBinding[usageRow]).columns {
		cols[c.field.Name] = c
	}
	tb, err := declare(tabledef.Usage, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := usageRow{row: &transform.UsageRow{CreatedAt: transform.Some[int64](42)}}
	if got := tb.partitionTime(row); got != transform.Some[int64](42) {
		t.Errorf("usage partition time %v, want created_at 42", got)
	}
	if _, err := declare(tabledef.Usage, cols, func(usageRow) transform.Opt[int64] { return transform.Opt[int64]{} }); err == nil ||
		!strings.Contains(err.Error(), "partitioned by its column created_at, and given a document's time too") {
		t.Errorf("declare with both partition times: %v", err)
	}
}
