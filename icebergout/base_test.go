package icebergout_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// receiptsPart writes a receipts table part of n rows under dir and
// returns its path.
func receiptsPart(t *testing.T, dir string, n int) string {
	t.Helper()
	txn, err := sink.NewTxn(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rs []verify.ReceiptResult
	for i := range n {
		rs = append(rs, verify.ReceiptResult{File: "in.jsonl", Line: int64(i + 1), ConversationID: fmt.Sprintf("c%d", i), Status: verify.StatusValid, Reasons: []string{}})
	}
	tb := parquetout.NewTables(txn, []string{tabledef.Receipts}, parquetout.TableOptions{})
	err = tb.AddReceipts(rs)
	if cerr := tb.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = txn.Commit()
	}
	if err != nil {
		t.Fatal(err)
	}
	parts := tb.Counts()[tabledef.Receipts].Parts
	if len(parts) != 1 {
		t.Fatalf("%d parts", len(parts))
	}
	return txn.Path(parts[0].Path)
}

// output is an output directory as Stage and a reader see it.
type output struct {
	// snap has Root, or Base and IO, set.
	snap icebergout.Snapshot
	// loc is the location of rel; put publishes a file there.
	loc func(rel string) string
	put func(t *testing.T, rel string, b []byte)
	// read is the file system a reader by path reads it through.
	read icebergio.IO
}

func localOutput(t *testing.T) output {
	root := t.TempDir()
	return output{
		snap: icebergout.Snapshot{Root: root},
		loc:  func(rel string) string { return icebergout.Location(root, rel) },
		put: func(t *testing.T, rel string, b []byte) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		read: icebergio.LocalFS{},
	}
}

func memOutput(t *testing.T) output {
	m := icebergio.NewMemFS()
	base := "mem://bucket/" + strings.ReplaceAll(t.Name(), "/", "-") + "/"
	return output{
		snap: icebergout.Snapshot{Base: base, IO: m},
		loc:  func(rel string) string { return icebergout.BaseLocation(base, rel) },
		put: func(t *testing.T, rel string, b []byte) {
			if err := m.WriteFile(icebergout.BaseLocation(base, rel), b); err != nil {
				t.Fatal(err)
			}
		},
		read: m,
	}
}

// TestStageOutputs stages two snapshots of a table, a new table that adds
// a file and one that replaces it by another, in a local output
// directory and in one at a location base (an object store's), where the
// second snapshot reads the first's metadata through Snapshot.IO and a
// data file is described by the footer ReadFooter read on the machine
// that wrote it. After each snapshot's files are published, iceberg-go
// reads the table by path: its current snapshot holds the files it
// should, with their rows, and the first snapshot is still there.
func TestStageOutputs(t *testing.T) {
	ctx := context.Background()
	const dir = "tables/receipts"
	for _, tc := range []struct {
		name   string
		out    func(*testing.T) output
		footer bool // describe the data files by footer, not local copy
	}{
		{"local", localOutput, false},
		{"local, footers", localOutput, true},
		{"location base", memOutput, true},
		{"location base, local copies", memOutput, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out(t)
			rows := []int{3, 5}
			var rels []string
			for run, n := range rows {
				local := receiptsPart(t, t.TempDir(), n)
				rel := fmt.Sprintf("%s/data/part-v%06d-00000.parquet", dir, run+1)
				rels = append(rels, rel)
				df := icebergout.DataFile{Rel: rel, Local: local}
				if tc.footer {
					b, size, err := icebergout.ReadFooter(local)
					if err != nil {
						t.Fatal(err)
					}
					df = icebergout.DataFile{Rel: rel, Footer: b, Size: size}
				}
				b, err := os.ReadFile(local)
				if err != nil {
					t.Fatal(err)
				}
				out.put(t, rel, b)
				s := out.snap
				s.Table, s.Dir, s.Fresh, s.Add, s.Run = tabledef.Receipts, dir, run == 0, []icebergout.DataFile{df}, run+1
				if run > 0 {
					s.Remove = rels[:run]
				}
				txn, err := sink.NewTxn(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				st, err := icebergout.Stage(ctx, txn, s)
				if err != nil {
					t.Fatal(err)
				}
				if err := txn.Commit(); err != nil {
					t.Fatal(err)
				}
				if st.Version != run+1 || !strings.HasSuffix(st.Files[len(st.Files)-1], icebergout.VersionHintFile) ||
					st.Files[len(st.Files)-2] != dir+"/"+icebergout.MetadataFile(run+1) {
					t.Fatalf("staged version %d, files %v", st.Version, st.Files)
				}
				for _, f := range st.Files {
					b, err := os.ReadFile(txn.Path(f))
					if err != nil {
						t.Fatal(err)
					}
					out.put(t, f, b)
				}

				fsF := func(context.Context) (icebergio.IO, error) { return out.read, nil }
				tbl, err := table.NewFromLocation(ctx, table.Identifier{tabledef.Receipts}, out.loc(dir+"/"+icebergout.MetadataFile(run+1)), fsF, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(tbl.Metadata().Snapshots()); got != run+1 {
					t.Errorf("%d snapshots, want %d", got, run+1)
				}
				if got := dataFiles(t, tbl.CurrentSnapshot(), out.read); !slices.Equal(got, []string{out.loc(rel)}) {
					t.Errorf("current snapshot holds %v, want %s", got, out.loc(rel))
				}
				if first := tbl.Metadata().Snapshots()[0]; run > 0 && !slices.Equal(dataFiles(t, &first, out.read), []string{out.loc(rels[0])}) {
					t.Errorf("the first snapshot no longer holds %s", rels[0])
				}
				tab, err := tbl.Scan().ToArrowTable(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if tab.NumRows() != int64(n) {
					t.Errorf("scan: %d rows, want %d", tab.NumRows(), n)
				}
				tab.Release()
			}
		})
	}
}

// TestStageBaseErrors: an output at a location base that Stage cannot
// list, and a data file it cannot describe, are errors that name them.
func TestStageBaseErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		snap icebergout.Snapshot
		want string
	}{
		{"no IO", icebergout.Snapshot{Base: "s3://b/out", Table: tabledef.Receipts, Dir: "tables/receipts", Fresh: true},
			"iceberg table receipts: iceberg: cannot list s3://b/out/tables/receipts: its file system lists no directory"},
		{"a data file with neither a copy nor a footer", icebergout.Snapshot{Base: "mem://b/out", IO: icebergio.NewMemFS(), Table: tabledef.Receipts, Dir: "tables/receipts", Fresh: true,
			Add: []icebergout.DataFile{{Rel: "tables/receipts/data/x.parquet"}}},
			"iceberg table receipts: data file tables/receipts/data/x.parquet: neither a local copy nor a footer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			txn, err := sink.NewTxn(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer txn.Abort()
			_, err = icebergout.Stage(ctx, txn, tc.snap)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// dataFiles returns the locations of the data files of snap.
func dataFiles(t *testing.T, snap *table.Snapshot, fsys icebergio.IO) []string {
	t.Helper()
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range manifests {
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.DataFile().FilePath())
		}
	}
	slices.Sort(out)
	return out
}
