package parquetout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
	"github.com/convbatch/convbatch/verify"
)

// rewriteFiles are the inputs of rewriteInput, with the documents each
// has: "f.jsonl" has no usage rows, "g.jsonl" no receipts, and
// "dir/b.jsonl.zst" comes back after the others (a part's rows of one
// input need not be contiguous).
var rewriteFiles = []struct {
	name string
	docs int
}{
	{"a.jsonl", 1}, {"dir/b.jsonl.zst", 37}, {"c d.jsonl", 3}, {"ü/e.jsonl", 24},
	{"f.jsonl", 61}, {"g.jsonl", 8}, {"dir/b.jsonl.zst", 5},
}

// rewriteInput is a run over the inputs of rewriteFiles: documents whose
// rows set and null every kind of column, in time order over four days
// (every eleventh document has no time: the null partition), and a
// receipt for every other document.
type rewriteInput struct {
	docs     []parquetout.Doc
	receipts []verify.ReceiptResult
}

func newRewriteInput() *rewriteInput {
	in := &rewriteInput{}
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC).UnixMicro()
	total := 0
	for _, f := range rewriteFiles {
		total += f.docs
	}
	some := transform.Some[string]
	i := 0
	for _, f := range rewriteFiles {
		for line := range f.docs {
			at := transform.Opt[int64]{V: base + int64(i*4/total)*microsPerDay + int64(i)*1000, Valid: i%11 != 5}
			rows := &transform.Rows{
				Conversation: transform.ConversationRow{
					CreatedAt: at, MessageCount: int32(i % 9), ExtensionsValid: i%5 != 0, TokensInputTotal: int64(i * 3),
					CostTotal: float64(i) / 8, ImageCount: int32(i % 2), HasReceipt: i%2 == 0,
				},
				CanonicalBytes: int64(100 + i),
			}
			if i%3 != 0 {
				rows.Conversation.Title = some(fmt.Sprintf("title %d", i))
				rows.Conversation.Extensions = []string{"usage-metadata", fmt.Sprintf("x-%d", i%4)}
				rows.Conversation.SkillIDs, rows.Conversation.SkillIDsValid = []string{"s1"}, true
				rows.Conversation.LeaderID = some("lead")
			}
			if f.name != "f.jsonl" {
				for m := range i%4 + 1 {
					u := transform.UsageRow{MessageIndex: int32(m), Role: []string{"user", "assistant", "tool"}[m%3], CreatedAt: at}
					if m%2 == 1 {
						u.MessageID, u.Provider = some(fmt.Sprintf("m-%d-%d", i, m)), some("openai")
						u.TokensInput, u.TokensOutput = transform.Some(int64(10*i+m)), transform.Some(int64(m))
						u.Tokens = []transform.TokenCount{{Name: "input", Count: int64(10*i + m), Valid: true}, {Name: "bad", Valid: false}}
						u.TokensValid, u.Cost = true, transform.Some(float64(m)/4)
					}
					rows.Usage = append(rows.Usage, u)
				}
			}
			for c := range i % 3 {
				tc := transform.ToolCallRow{MessageIndex: int32(c + 1), ArgumentsBytes: int64(c * 7)}
				if c == 1 {
					tc.CallID, tc.Name, tc.ResultMessageIndex, tc.Answered = some("k"), some("search"), transform.Some(int32(c+2)), true
				}
				rows.ToolCalls = append(rows.ToolCalls, tc)
			}
			d := parquetout.Doc{File: f.name, Line: int64(line + 1), ID: fmt.Sprintf("conv-%d", i), Hashed: i%4 != 1, Rows: rows}
			d.Hash[0], d.Hash[31] = byte(i), 0x5a
			in.docs = append(in.docs, d)
			if i%2 == 0 && f.name != "g.jsonl" {
				r := verify.ReceiptResult{ConversationID: d.ID, Status: verify.StatusValid, Reasons: []string{}, File: f.name, Line: d.Line, QuorumK: 1, QuorumN: 2,
					Statements: []verify.StatementKey{{Index: 0, AgentID: "a1", SignatureValid: true}, {Index: 1, AgentID: fmt.Sprintf("a%d", i%5), Status: verify.KeyStatusRevoked}}}
				if i%4 == 2 {
					r.Status, r.Reasons = verify.StatusInvalid, []string{"receipt-malformed"}
				}
				if at.Valid {
					r.SignedAt, r.SignedAtMicros = "t", at.V
				}
				in.receipts = append(in.receipts, r)
			}
			i++
		}
	}
	return in
}

// without returns the input without the documents and receipts of the
// files dropped.
func (in *rewriteInput) without(dropped map[string]bool) *rewriteInput {
	out := &rewriteInput{}
	for _, d := range in.docs {
		if !dropped[d.File] {
			out.docs = append(out.docs, d)
		}
	}
	for _, r := range in.receipts {
		if !dropped[r.File] {
			out.receipts = append(out.receipts, r)
		}
	}
	return out
}

// write writes the input's tables with opts under out/tables and returns
// the parts written, relative to it.
func (in *rewriteInput) write(t *testing.T, out string, opts parquetout.TableOptions) []string {
	t.Helper()
	txn, err := sink.NewTxn(filepath.Join(out, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	tb := parquetout.NewTables(txn, tabledef.Names, opts)
	for i := range in.docs {
		if err := tb.AddDocument(&in.docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	parquetout.FinishTables(t, txn, tb, in.receipts)
	return tb.Parts()
}

// partDirs returns the directories of parts, in order, each once.
func partDirs(parts []string) []string {
	var dirs []string
	for _, p := range parts {
		if d := filepath.ToSlash(filepath.Dir(p)); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// tableOf returns the table a part belongs to.
func tableOf(rel string) string { return strings.SplitN(rel, "/", 2)[0] }

// parquetMeta is what a part's Parquet footer says of how it was written,
// for comparing two parts of one table.
type parquetMeta struct {
	CreatedBy string
	Root      string
	Schema    string
	KeyValues map[string]string
	// Chunks describe each column's chunks, by column path: codec,
	// encodings and whether it has a dictionary page, each distinct
	// description once.
	Chunks map[string][]string
}

func readParquetMeta(t *testing.T, path string) parquetMeta {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	var sch bytes.Buffer
	schema.PrintSchema(md.Schema.Root(), &sch, 2)
	m := parquetMeta{CreatedBy: md.GetCreatedBy(), Root: md.Schema.Root().RepetitionType().String(), Schema: sch.String(),
		KeyValues: map[string]string{}, Chunks: map[string][]string{}}
	kv := md.KeyValueMetadata()
	for i, k := range kv.Keys() {
		m.KeyValues[k] = kv.Values()[i]
	}
	for rg := range len(md.RowGroups) {
		rgm := md.RowGroup(rg)
		for c := range rgm.NumColumns() {
			cc, err := rgm.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			desc := fmt.Sprintf("%s %v dictionary=%v", cc.Compression(), cc.Encodings(), cc.HasDictionaryPage())
			p := cc.PathInSchema().String()
			if !slices.Contains(m.Chunks[p], desc) {
				m.Chunks[p] = append(m.Chunks[p], desc)
			}
		}
	}
	return m
}

// dirParquetMeta reads the Parquet metadata of every part in dir: it must
// be the same in each, but for the chunks, which are their union (a part
// with no rows has none).
func dirParquetMeta(t *testing.T, dir string) parquetMeta {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("%s: parts %v, %v", dir, paths, err)
	}
	var out parquetMeta
	for i, p := range paths {
		m := readParquetMeta(t, p)
		chunks := m.Chunks
		m.Chunks = out.Chunks
		if i == 0 {
			out = m
			out.Chunks = map[string][]string{}
		} else if !reflect.DeepEqual(m, out) {
			t.Fatalf("%s: metadata %+v, the first part's %+v", p, m, out)
		}
		for col, descs := range chunks {
			for _, d := range descs {
				if !slices.Contains(out.Chunks[col], d) {
					out.Chunks[col] = append(out.Chunks[col], d)
				}
			}
		}
	}
	return out
}

// readSourceFiles reads the part at path whole with pqarrow and returns
// the values of its source_file column.
func readSourceFiles(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices(tabledef.ColSourceFile)
	if len(idx) != 1 {
		t.Fatalf("%s: no %s column", path, tabledef.ColSourceFile)
	}
	out := map[string]bool{}
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		s := chunk.(*array.String)
		for i := range s.Len() {
			out[s.Value(i)] = true
		}
	}
	return out
}

// rowGroups returns the row groups of every part of tb.
func rowGroups(tb *pqtest.Table) int {
	n := 0
	for _, p := range tb.Parts {
		n += p.RowGroups
	}
	return n
}

// TestRewrite writes a run over several inputs with small row groups,
// flat and partitioned by day, and rewrites every part without the rows
// of none, one, several or all of the inputs: each copy holds exactly the
// rows, schema and writer properties of the parts NewTables writes from
// the documents kept only, as pqarrow and DuckDB read them.
func TestRewrite(t *testing.T) {
	in := newRewriteInput()
	all := map[string]bool{}
	for _, f := range rewriteFiles {
		all[f.name] = true
	}
	for _, layout := range []struct {
		name string
		opts parquetout.TableOptions
	}{
		{"flat", parquetout.TableOptions{RowGroupBytes: 2 << 10, BatchRows: 16, Version: "1.2.3"}},
		{"day", parquetout.TableOptions{RowGroupBytes: 2 << 10, BatchRows: 16, Version: "1.2.3", PartitionBy: parquetout.PartitionDay}},
	} {
		t.Run(layout.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			parts := in.write(t, src, layout.opts)
			srcTables := filepath.Join(src, "tables")

			// SourceFiles: the files of the rows of each part, as
			// pqarrow reads them; over a flat table, every input with
			// rows in it.
			for _, rel := range parts {
				got, err := parquetout.SourceFiles(filepath.Join(srcTables, rel))
				if err != nil {
					t.Fatal(err)
				}
				if got == nil {
					t.Errorf("%s: SourceFiles returned nil", rel)
				}
				want := readSourceFiles(t, filepath.Join(srcTables, rel))
				if w := slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
					t.Errorf("%s: SourceFiles = %q, want %q", rel, got, w)
				}
				if layout.opts.PartitionBy == "" {
					inputs := slices.Sorted(maps.Keys(all))
					switch tableOf(rel) {
					case tabledef.Usage:
						inputs = slices.DeleteFunc(inputs, func(s string) bool { return s == "f.jsonl" })
					case tabledef.Receipts, tabledef.ReceiptStatements:
						inputs = slices.DeleteFunc(inputs, func(s string) bool { return s == "g.jsonl" })
					case tabledef.ToolCalls:
						inputs = slices.DeleteFunc(inputs, func(s string) bool { return s == "a.jsonl" }) // its one doc has no call
					}
					if !slices.Equal(got, inputs) {
						t.Errorf("%s: SourceFiles = %q, want every input with rows %q", rel, got, inputs)
					}
					if tb := pqtest.ReadTable(t, src, tableOf(rel)); len(tb.Parts) != 1 || tb.Parts[0].RowGroups < 3 {
						t.Errorf("%s: parts %+v, the test wants one with several row groups", rel, tb.Parts)
					}
				}
			}

			for _, tc := range []struct {
				name    string
				dropped []string
			}{
				{"none", nil},
				{"one", []string{"ü/e.jsonl"}},
				{"first-and-last", []string{"a.jsonl", "dir/b.jsonl.zst"}},
				// every other input: the rows kept of a batch are not
				// contiguous
				{"several", []string{"c d.jsonl", "f.jsonl", "a.jsonl"}},
				{"all", slices.Collect(maps.Keys(all))},
				{"unknown", []string{"nowhere.jsonl"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dropped := map[string]bool{}
					for _, f := range tc.dropped {
						dropped[f] = true
					}
					caseDir := filepath.Join(dir, layout.name+"-"+tc.name)
					direct := filepath.Join(caseDir, "direct")
					in.without(dropped).write(t, direct, layout.opts)

					out := filepath.Join(caseDir, "rewrite")
					txn, err := sink.NewTxn(filepath.Join(out, "tables"))
					if err != nil {
						t.Fatal(err)
					}
					keptRows := map[string]int64{}
					for _, rel := range parts {
						asked := map[string]bool{}
						kept, err := parquetout.Rewrite(txn, rel, filepath.Join(srcTables, rel), tableOf(rel), layout.opts, func(f string) bool {
							asked[f] = true
							return dropped[f]
						})
						if err != nil {
							t.Fatal(err)
						}
						if want := readSourceFiles(t, filepath.Join(srcTables, rel)); !reflect.DeepEqual(asked, want) {
							t.Errorf("%s: drop asked about %v, want the part's files %v", rel, asked, want)
						}
						keptRows[filepath.ToSlash(filepath.Dir(rel))] += kept
					}
					if err := txn.Commit(); err != nil {
						t.Fatal(err)
					}

					var sqls []string
					var sqlDirs []string
					for _, d := range partDirs(parts) {
						got := pqtest.ReadTable(t, out, d)
						got.Name = tableOf(d) // the schema of the table, whatever the partition
						pqtest.CheckSchema(t, got)
						pqtest.CheckCellTypes(t, got)
						if keptRows[d] != int64(len(got.Rows)) {
							t.Errorf("%s: Rewrite reported %d rows kept, the copy holds %d", d, keptRows[d], len(got.Rows))
						}
						if _, err := os.Stat(filepath.Join(direct, "tables", d)); errors.Is(err, os.ErrNotExist) {
							// No document kept has rows in this partition.
							if len(got.Rows) != 0 {
								t.Errorf("%s: %d rows, want none", d, len(got.Rows))
							}
							continue
						}
						want := pqtest.ReadTable(t, direct, d)
						pqtest.CompareRows(t, got, want.Rows)
						if got.Schema.String() != want.Schema.String() || !got.Schema.Equal(want.Schema) {
							t.Errorf("%s: Arrow schema\n%s\nwant\n%s", d, got.Schema, want.Schema)
						}
						gm := dirParquetMeta(t, filepath.Join(out, "tables", d))
						wm := dirParquetMeta(t, filepath.Join(direct, "tables", d))
						if !reflect.DeepEqual(gm, wm) {
							t.Errorf("%s: Parquet metadata\n%+v\nwant\n%+v", d, gm, wm)
						}
						if !strings.HasPrefix(gm.CreatedBy, "convbatch version 1.2.3 ") {
							t.Errorf("%s: created_by %q", d, gm.CreatedBy)
						}
						// Row groups cut as the writer cuts them: as many, give
						// or take one (the Arrow sizes of rows read back are
						// not those of rows built). Partitioned, the copy keeps
						// the parts of the source, which the writer cut
						// elsewhere for the rows kept.
						if g, w := rowGroups(got), rowGroups(want); layout.opts.PartitionBy == "" && (g < w-1 || g > w+1) {
							t.Errorf("%s: %d row groups, the writer cut %d", d, g, w)
						}
						if tc.name == "none" {
							t.Logf("%s: %d rows in %d row groups (the writer: %d)", d, len(got.Rows), rowGroups(got), rowGroups(want))
						}
						for _, sub := range []string{out, direct} {
							sqls = append(sqls, "select * from read_parquet("+duckdbtest.Literal(filepath.Join(sub, "tables", d, "*.parquet"))+", hive_partitioning = false)")
						}
						sqlDirs = append(sqlDirs, d)
					}
					if tc.name == "all" {
						for d, n := range keptRows {
							if n != 0 {
								t.Errorf("%s: %d rows kept, want none", d, n)
							}
						}
					}
					if len(sqls) == 0 {
						return
					}
					res := duckdbtest.QueryAll(t, sqls...)
					for i, d := range sqlDirs {
						got, want := res[2*i], res[2*i+1]
						if !reflect.DeepEqual(got.Types, want.Types) || !reflect.DeepEqual(got.Columns, want.Columns) {
							t.Errorf("%s: DuckDB reads columns %v %v, want %v %v", d, got.Columns, got.Types, want.Columns, want.Types)
						}
						if !reflect.DeepEqual(got.Rows, want.Rows) {
							t.Errorf("%s: DuckDB reads %d rows, want %d: %v\nwant %v", d, len(got.Rows), len(want.Rows), got.Rows, want.Rows)
						}
					}
				})
			}
		})
	}
}

// TestSourceFilesEmpty: a part with no rows holds no input, and its copy
// is a part with the schema and no rows.
func TestSourceFilesEmpty(t *testing.T) {
	dir := t.TempDir()
	parts := (&rewriteInput{}).write(t, dir, parquetout.TableOptions{})
	for _, rel := range parts {
		path := filepath.Join(dir, "tables", rel)
		got, err := parquetout.SourceFiles(path)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("%s: SourceFiles = %q, %v; want none", rel, got, err)
		}
		out := filepath.Join(dir, "copy")
		txn, err := sink.NewTxn(filepath.Join(out, "tables"))
		if err != nil {
			t.Fatal(err)
		}
		kept, err := parquetout.Rewrite(txn, rel, path, tableOf(rel), parquetout.TableOptions{}, func(string) bool { return false })
		if err != nil || kept != 0 {
			t.Fatalf("%s: Rewrite = %d, %v", rel, kept, err)
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		tb := pqtest.ReadTable(t, out, tableOf(rel))
		pqtest.CheckSchema(t, tb)
		if len(tb.Rows) != 0 || tb.Parts[0].RowGroups != 0 {
			t.Errorf("%s: copy of an empty part: %d rows, %+v", rel, len(tb.Rows), tb.Parts)
		}
	}
}

// TestRewriteDamaged: a part that is damaged, truncated or not a part of
// the table is an error naming the file, of SourceFiles (which reads only
// the source_file column) and of Rewrite; never a panic, nor rows lost
// without an error.
func TestRewriteDamaged(t *testing.T) {
	dir := t.TempDir()
	in := newRewriteInput()
	opts := parquetout.TableOptions{RowGroupBytes: 2 << 10, BatchRows: 16}
	in.write(t, dir, opts)
	good := filepath.Join(dir, "tables", tabledef.Usage, "part-00000.parquet")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// chunk returns the offset and size of the column's chunk in the
	// second row group of the good part.
	chunk := func(col string) (int64, int64) {
		rdr, err := file.OpenParquetFile(good, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		rg := rdr.MetaData().RowGroup(1)
		cc, err := rg.ColumnChunk(rdr.MetaData().Schema.ColumnIndexByName(col))
		if err != nil {
			t.Fatal(err)
		}
		start := cc.DataPageOffset()
		if cc.HasDictionaryPage() {
			start = cc.DictionaryPageOffset()
		}
		return start, cc.TotalCompressedSize()
	}
	// spoil returns the good part with the second half of a column's
	// chunk overwritten: its last page's compressed bytes at least.
	spoil := func(col string) []byte {
		start, size := chunk(col)
		b := bytes.Clone(data)
		for i := start + size/2; i < start+size; i++ {
			b[i] = 0x55
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		table string
		// sourceOK: SourceFiles reads the file without error (the damage
		// is outside its column).
		sourceOK bool
	}{
		{name: "half", data: data[:len(data)/2]},
		{name: "footer-cut", data: data[:len(data)-3]},
		{name: "magic-only", data: []byte("PAR1")},
		{name: "empty", data: []byte{}},
		{name: "not-parquet", data: []byte(`{"id":"x"}` + "\n")},
		{name: "source-file-spoiled", data: spoil(tabledef.ColSourceFile)},
		{name: "tokens-spoiled", data: spoil(tabledef.ColTokens + ".key_value.key"), sourceOK: true},
		{name: "role-spoiled", data: spoil(tabledef.ColRole), sourceOK: true},
		{name: "other-table", data: data, table: tabledef.Conversations, sourceOK: true},
		{name: "unknown-table", data: data, table: "bogus", sourceOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad part.parquet")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			files, serr := parquetout.SourceFiles(path)
			switch {
			case tc.sourceOK && serr != nil:
				t.Errorf("SourceFiles: %v", serr)
			case !tc.sourceOK && serr == nil:
				t.Errorf("SourceFiles = %q, no error", files)
			case serr != nil && !strings.Contains(serr.Error(), path):
				t.Errorf("SourceFiles: %v, does not name the file", serr)
			}
			table := tc.table
			if table == "" {
				table = tabledef.Usage
			}
			txn, err := sink.NewTxn(filepath.Join(t.TempDir(), "tables"))
			if err != nil {
				t.Fatal(err)
			}
			defer txn.Abort()
			kept, err := parquetout.Rewrite(txn, "usage/part-00000.parquet", path, table, opts, func(f string) bool { return f == "a.jsonl" })
			if err == nil {
				t.Fatalf("Rewrite kept %d rows, no error", kept)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "usage/part-00000.parquet") {
				t.Errorf("Rewrite: %v, does not name the part and its copy", err)
			}
			t.Logf("SourceFiles: %v; Rewrite: %v", serr, err)
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none.parquet")
		if _, err := parquetout.SourceFiles(path); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("SourceFiles: %v, want a not-exist error naming the file", err)
		}
	})
}

// TestRewriteWriteFails: an error of the copy's writer is Rewrite's,
// wrapped, naming the copy.
func TestRewriteWriteFails(t *testing.T) {
	dir := t.TempDir()
	newRewriteInput().write(t, dir, parquetout.TableOptions{BatchRows: 16})
	src := filepath.Join(dir, "tables", tabledef.Conversations, "part-00000.parquet")
	full := errors.New("no space left")
	for _, op := range []string{"open", "write", "close"} {
		t.Run(op, func(t *testing.T) {
			restore := parquetout.SetDefaultEncoding(parquetout.EncoderConfig{Depth: 1, Before: func(kind string) error {
				if kind == op {
					return full
				}
				return nil
			}})
			defer restore()
			txn, err := sink.NewTxn(filepath.Join(t.TempDir(), "tables"))
			if err != nil {
				t.Fatal(err)
			}
			defer txn.Abort()
			_, err = parquetout.Rewrite(txn, "conversations/part-00000.parquet", src, tabledef.Conversations, parquetout.TableOptions{}, func(string) bool { return false })
			if !errors.Is(err, full) || !strings.Contains(err.Error(), "conversations/part-00000.parquet") {
				t.Errorf("Rewrite: %v, want the writer's error naming the copy", err)
			}
		})
	}
}

// slice returns the input's documents [lo, hi) and their receipts.
func (in *rewriteInput) slice(lo, hi int) *rewriteInput {
	out := &rewriteInput{docs: in.docs[lo:hi]}
	ids := map[string]bool{}
	for _, d := range out.docs {
		ids[d.ID] = true
	}
	for _, r := range in.receipts {
		if ids[r.ConversationID] {
			out.receipts = append(out.receipts, r)
		}
	}
	return out
}

// TestMerge: the input written as three runs (three sets of parts), then
// each table's (or partition's) parts merged into one part, in run
// order, holds the rows of the input written in one go, in their order,
// with the table's schema; a part of another table is refused by name.
func TestMerge(t *testing.T) {
	in := newRewriteInput()
	n := len(in.docs)
	cuts := []int{0, n / 5, n * 3 / 5, n}
	for _, layout := range []struct {
		name string
		opts parquetout.TableOptions
	}{
		{"flat", parquetout.TableOptions{RowGroupBytes: 2 << 10, BatchRows: 16, Version: "1.2.3"}},
		{"day", parquetout.TableOptions{RowGroupBytes: 2 << 10, BatchRows: 16, Version: "1.2.3", PartitionBy: parquetout.PartitionDay}},
	} {
		t.Run(layout.name, func(t *testing.T) {
			dir := t.TempDir()
			direct := filepath.Join(dir, "direct")
			in.write(t, direct, layout.opts)
			// The parts of each directory (table or partition), run by run.
			byDir := map[string][]string{}
			for i := range len(cuts) - 1 {
				run := filepath.Join(dir, fmt.Sprintf("run-%d", i))
				for _, rel := range in.slice(cuts[i], cuts[i+1]).write(t, run, layout.opts) {
					d := filepath.ToSlash(filepath.Dir(rel))
					byDir[d] = append(byDir[d], filepath.Join(run, "tables", rel))
				}
			}
			out := filepath.Join(dir, "merged")
			txn, err := sink.NewTxn(filepath.Join(out, "tables"))
			if err != nil {
				t.Fatal(err)
			}
			merged := 0
			for _, d := range slices.Sorted(maps.Keys(byDir)) {
				rows, err := parquetout.Merge(txn, d+"/part-00000.parquet", byDir[d], tableOf(d), layout.opts)
				if err != nil {
					t.Fatal(err)
				}
				want := pqtest.ReadTable(t, direct, d)
				if rows != int64(len(want.Rows)) {
					t.Errorf("%s: Merge reported %d rows, want %d", d, rows, len(want.Rows))
				}
				merged += len(byDir[d])
			}
			if merged <= len(byDir) {
				t.Fatalf("%d parts in %d directories: nothing merged", merged, len(byDir))
			}
			if err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
			for _, d := range slices.Sorted(maps.Keys(byDir)) {
				got := pqtest.ReadTable(t, out, d)
				got.Name = tableOf(d)
				pqtest.CheckSchema(t, got)
				if len(got.Parts) != 1 {
					t.Errorf("%s: %d parts, want the one merged", d, len(got.Parts))
				}
				want := pqtest.ReadTable(t, direct, d)
				pqtest.CompareRows(t, got, want.Rows)
			}

			// A part of another table among the parts: refused, named.
			txn, err = sink.NewTxn(filepath.Join(dir, "bad"))
			if err != nil {
				t.Fatal(err)
			}
			defer txn.Abort()
			var usage, conv string
			for _, d := range slices.Sorted(maps.Keys(byDir)) {
				switch tableOf(d) {
				case tabledef.Usage:
					usage = byDir[d][0]
				case tabledef.Conversations:
					conv = byDir[d][0]
				}
			}
			_, err = parquetout.Merge(txn, "x.parquet", []string{usage, conv}, tabledef.Usage, layout.opts)
			if err == nil || !strings.Contains(err.Error(), conv) || !strings.Contains(err.Error(), "not a part of table usage") {
				t.Errorf("merging a conversations part into usage: %v, want an error naming %s", err, conv)
			}
		})
	}
}
