package convbeam

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// memRuns numbers the memfs directories of TestMemFS and TestFetchShards:
// Beam's memfs lives as long as the process, so each run of a test (go
// test -count=N) writes to a directory of its own.
var memRuns atomic.Int64

// TestIcebergSameAsConvbatchRun checks convbeam --table_format iceberg
// against convbatch run --table-format iceberg on the same inputs: every
// table an Iceberg table that iceberg-go reads by path, whose current
// snapshot (the job's one, a new table numbered after the metadata
// versions OUT held) has the same rows, read by iceberg-go's scan, and
// holds exactly the data files the report lists; on a local output, and
// on a local output that held an earlier job's tables. On object storage:
// TestObjectOut.
func TestIcebergSameAsConvbatchRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inputs, keys := beamtest.Nights(t, filepath.Join(dir, "in"))
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB", "--table-format", "iceberg"}, inputs...)...)
	wantRows := map[string][]string{}
	for _, name := range tabledef.Names {
		tbl := beamtest.IcebergTable(t, icebergout.Location(want, outdir.TableDir(name)), 1, icebergio.LocalFS{})
		wantRows[name] = beamtest.IcebergRows(t, tbl)
		if name == tabledef.Receipts {
			wantRows[name] = beamtest.WithoutWitness(t, wantRows[name])
		}
	}
	if len(wantRows[tabledef.Receipts]) == 0 || len(wantRows[tabledef.Usage]) == 0 {
		t.Fatalf("the reference tables are empty: %d receipts, %d usage rows", len(wantRows[tabledef.Receipts]), len(wantRows[tabledef.Usage]))
	}
	globs := []string{filepath.Join(dir, "in", "night-*", "*.json*")}

	for _, tc := range []struct {
		name string
		out  func(t *testing.T) string
		// earlier are metadata versions each table holds before the job:
		// an earlier job's tables, copied from convbatch run's.
		earlier int
	}{
		{"local", func(*testing.T) string { return filepath.Join(dir, "local") }, 0},
		{"local, over an earlier job's tables", func(*testing.T) string { return filepath.Join(dir, "again") }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out(t)
			if tc.earlier > 0 {
				if err := os.CopyFS(filepath.Join(out, outdir.DirTables), os.DirFS(filepath.Join(want, outdir.DirTables))); err != nil {
					t.Fatal(err)
				}
			}
			if err := runJob(t, job{globs: globs, out: out, keys: keys, format: "iceberg", shardBytes: 64 << 10, maxDoc: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			rep, err := ReadReport(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Settings.TableFormat != string(outdir.FormatIceberg) || !rep.AccountingOK {
				t.Errorf("report: table_format %q, accounting_ok %v", rep.Settings.TableFormat, rep.AccountingOK)
			}
			var fsys icebergio.IO = icebergio.LocalFS{}
			root := icebergout.Location(out, "")
			version := tc.earlier + 1
			for _, name := range tabledef.Names {
				tbl := beamtest.IcebergTable(t, icebergout.BaseLocation(root, outdir.TableDir(name)), version, fsys)
				got := beamtest.IcebergRows(t, tbl)
				if name == tabledef.Receipts {
					got = beamtest.WithoutWitness(t, got)
				}
				if !reflect.DeepEqual(got, wantRows[name]) {
					t.Errorf("table %s: %d rows, convbatch run's %d, or they differ", name, len(got), len(wantRows[name]))
				}
				snap := tbl.CurrentSnapshot()
				if snap == nil {
					t.Fatalf("table %s: no current snapshot", name)
				}
				if got := snap.Summary.Properties[icebergout.RunProperty]; got != "1" || len(tbl.Metadata().Snapshots()) != 1 {
					t.Errorf("table %s: %d snapshots, run %q; want a new table of one snapshot, run 1", name, len(tbl.Metadata().Snapshots()), got)
				}
				files := snapshotFiles(t, tbl.CurrentSnapshot(), fsys, root)
				var listed []string
				for _, p := range rep.Tables[name].Parts {
					listed = append(listed, p.Path)
				}
				slices.Sort(listed)
				if !slices.Equal(files, listed) {
					t.Errorf("table %s: the snapshot holds %d files, the report lists %d, or they differ (%v, %v)", name, len(files), len(listed), files[:min(3, len(files))], listed[:min(3, len(listed))])
				}
				for _, f := range files {
					if !strings.HasPrefix(f, fmt.Sprintf("%s/part-v%06d-", outdir.TableDataDir(name), version)) {
						t.Errorf("table %s: data file %s not named for metadata version %d", name, f, version)
					}
				}
				hint, err := readAll(ctx, join(out, outdir.TableDir(name), icebergout.MetadataDir, icebergout.VersionHintFile))
				if err != nil || string(hint) != strconv.Itoa(version) {
					t.Errorf("table %s: version hint %q (%v), want %d", name, hint, err, version)
				}
			}
			if tc.earlier == 0 {
				beamtest.CompareOutputs(t, want, out)
			}
		})
	}
}

// snapshotFiles returns the data files of snap, relative to the output
// directory at root (a location), sorted.
func snapshotFiles(t *testing.T, snap *table.Snapshot, fsys icebergio.IO, root string) []string {
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
			rel, ok := strings.CutPrefix(e.DataFile().FilePath(), strings.TrimSuffix(root, "/")+"/")
			if !ok {
				t.Errorf("data file %s is outside %s", e.DataFile().FilePath(), root)
			}
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}
