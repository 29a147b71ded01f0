package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// TestPartitionByDay runs the same archive with and without --partition-by
// day and reads both with DuckDB: every table's partitions hold exactly the
// rows of the unpartitioned table, each row in the directory of its day,
// the null partition reads back as NULL, and a query on one day reads that
// day's files only (EXPLAIN ANALYZE: "Scanning Files: k/N").
func TestPartitionByDay(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	dir := t.TempDir()
	in := filepath.Join(dir, "p.jsonl.zst")
	// gen spreads createdAt over 2023-2026 (and a leap second in 2016),
	// a third of them null: some hundred days per table.
	genArchive(t, in, "--conversations", "80", "--seed", "61", "--faults", "0.05", "--tamper", "0.3", "--max-doc-bytes", "256KiB")
	flat, day := filepath.Join(dir, "flat"), filepath.Join(dir, "day")
	runOK(t, "run", "-o", flat, "--max-doc-bytes", "256KiB", in)
	runOK(t, "run", "-o", day, "--partition-by", "day", "--max-doc-bytes", "256KiB", in)

	// report.json lists every part on disk, and only parts.
	var rep sink.Report
	readJSON(t, filepath.Join(day, "report.json"), &rep)
	var onDisk []string
	err := filepath.WalkDir(filepath.Join(day, "tables"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(day, path)
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	listed := slices.Clone(rep.Outputs.Tables)
	slices.Sort(listed)
	if !reflect.DeepEqual(listed, onDisk) {
		t.Errorf("report outputs.tables %v\nfiles under tables/ %v", listed, onDisk)
	}
	partName := regexp.MustCompile(`^tables/[a-z_]+/day=(\d{4}-\d\d-\d\d|__HIVE_DEFAULT_PARTITION__)/part-\d{5}\.parquet$`)
	for _, p := range onDisk {
		if !partName.MatchString(p) {
			t.Errorf("%s is not a part of a day partition", p)
		}
	}

	flatOf := func(name string) string {
		return "read_parquet(" + duckdbtest.Literal(filepath.Join(flat, "tables", name, "*.parquet")) + ")"
	}
	dayOf := func(name string) string {
		return "read_parquet(" + duckdbtest.Literal(filepath.Join(day, "tables", name, "*", "*.parquet")) + ", hive_partitioning = true)"
	}
	// The time each table is partitioned by (its declared partition
	// column, held to docs/TABLES.md by package tabledef's test); the
	// tables without one (tool_calls, transcripts) by their document's
	// created_at.
	timeOf := func(name string) string {
		if col := tabledef.MustLookup(name).PartitionColumn; col != "" {
			return "p." + col
		}
		return "c.created_at"
	}
	sqls := []string{"SET TimeZone = 'UTC'"}
	for _, name := range tabledef.Names {
		// A receipt's first_committed_at is each OUT's own commit time.
		except, exceptDay := "", "exclude (day)"
		if name == tabledef.Receipts {
			except, exceptDay = "exclude (first_committed_at)", "exclude (day, first_committed_at)"
		}
		sqls = append(sqls,
			// the same rows, as multisets
			"select (select count(*) from "+flatOf(name)+") as flat, (select count(*) from "+dayOf(name)+") as day,"+
				" (select count(*) from (select * "+exceptDay+" from "+dayOf(name)+" except all select * "+except+" from "+flatOf(name)+")) as extra,"+
				" (select count(*) from (select * "+except+" from "+flatOf(name)+" except all select * "+exceptDay+" from "+dayOf(name)+")) as missing,"+
				" (select any_value(typeof(day)) from "+dayOf(name)+") as type",
			// each row in its day's directory; the null partition is NULL
			"select count(*) as n, count(*) filter (where p.day is distinct from cast("+timeOf(name)+" as date)) as misplaced,"+
				" count(*) filter (where p.day is null) as nulls"+
				" from "+dayOf(name)+" p left join "+flatOf(tabledef.Conversations)+" c using (source_file, source_line)",
		)
	}
	res := duckdbtest.QueryAll(t, sqls...)
	for i, name := range tabledef.Names {
		same, placed := res[1+2*i].Rows[0], res[2+2*i].Rows[0]
		n := duckdbtest.Int(t, same["flat"])
		empty := n == 0 && !statementsPending(name)
		if duckdbtest.Int(t, same["day"]) != n || duckdbtest.Int(t, same["extra"]) != 0 || duckdbtest.Int(t, same["missing"]) != 0 || empty {
			t.Errorf("table %s: partitions differ from the unpartitioned table: %v", name, same)
		}
		if same["type"] != "DATE" && n > 0 {
			t.Errorf("table %s: DuckDB reads day as %v, want DATE", name, same["type"])
		}
		if duckdbtest.Int(t, placed["misplaced"]) != 0 || duckdbtest.Int(t, placed["n"]) != n {
			t.Errorf("table %s: rows outside their day's directory: %v", name, placed)
		}
		t.Logf("table %s: %d rows, %v in the null partition", name, n, placed["nulls"])
	}

	// Pruning: the busiest day of usage, then the null partition.
	busiest := duckdbtest.Query(t, "select cast(day as varchar) as d, count(*) as n from "+dayOf(tabledef.Usage)+
		" where day is not null group by day order by n desc, d limit 1")[0]
	d := busiest["d"].(string)
	filesIn := func(partition string) int {
		entries, err := os.ReadDir(filepath.Join(day, "tables", "usage", partition))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	total := 0
	for _, p := range onDisk {
		if strings.HasPrefix(p, "tables/usage/") {
			total++
		}
	}
	scanning := regexp.MustCompile(`Scanning Files: (\d+)/(\d+)`)
	for _, tc := range []struct{ where, flatWhere, partition string }{
		{"day = '" + d + "'", "cast(created_at as date) = '" + d + "'", "day=" + d},
		{"day is null", "created_at is null", "day=" + parquetout.NullPartition},
	} {
		res := duckdbtest.QueryAll(t, "SET TimeZone = 'UTC'",
			"select (select count(*) from "+dayOf(tabledef.Usage)+" where "+tc.where+") as day,"+
				" (select count(*) from "+flatOf(tabledef.Usage)+" where "+tc.flatWhere+") as flat",
			"explain analyze select count(*) from "+dayOf(tabledef.Usage)+" where "+tc.where)
		if got, want := duckdbtest.Int(t, res[1].Rows[0]["day"]), duckdbtest.Int(t, res[1].Rows[0]["flat"]); got != want || got == 0 {
			t.Errorf("where %s: %d rows, want %d", tc.where, got, want)
		}
		plan, _ := res[2].Rows[0]["explain_value"].(string)
		m := scanning.FindStringSubmatch(plan)
		if m == nil {
			t.Fatalf("where %s: no \"Scanning Files\" in the plan:\n%s", tc.where, plan)
		}
		k, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if k != filesIn(tc.partition) || n != total || k >= n {
			t.Errorf("where %s: DuckDB scans %d of %d files, want the %d of %s of %d", tc.where, k, n, filesIn(tc.partition), tc.partition, total)
		}
		t.Logf("where %s: DuckDB scans %d of %d files", tc.where, k, n)
	}

	// The proof of pruning: every usage part of another day replaced by
	// bytes that are not Parquet (which DuckDB refuses: "No magic bytes
	// found at end of file"), the query on day d still reads its rows. The
	// first file is kept: DuckDB reads the schema from it.
	first := true
	for _, p := range onDisk { // in name order
		if !strings.HasPrefix(p, "tables/usage/") {
			continue
		}
		if first {
			first = false
			continue
		}
		if !strings.HasPrefix(p, "tables/usage/day="+d+"/") {
			if err := os.WriteFile(filepath.Join(day, filepath.FromSlash(p)), []byte("not parquet\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := duckdbtest.Query(t, "select count(*) as n from "+dayOf(tabledef.Usage)+" where day = '"+d+"'")
	if n := duckdbtest.Int(t, got[0]["n"]); n != duckdbtest.Int(t, busiest["n"]) {
		t.Errorf("where day = '%s' with the other days' files damaged: %d rows, want %v", d, n, busiest["n"])
	}
}
