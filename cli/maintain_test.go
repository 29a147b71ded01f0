package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/tabledef"
)

// globCounts returns the statements that count, for every table of the
// Iceberg OUT ice, the rows of its current snapshot and those of every
// Parquet file in its data directory (what a glob over data/ reads; in
// its day partitions when partitioned).
func globCounts(ice string, partitioned bool) []string {
	glob := "/data/*.parquet"
	if partitioned {
		glob = "/data/*/*.parquet"
	}
	sqls := []string{"SET use_hive_partitioning = 0"}
	for _, name := range tabledef.Names {
		sqls = append(sqls, fmt.Sprintf("SELECT %s AS name, (SELECT count() FROM icebergLocal(%s)) AS tbl, (SELECT count() FROM file(%s, Parquet)) AS glob",
			chdbtest.Literal(name), chdbtest.Literal(ice+"/tables/"+name), chdbtest.Literal(ice+"/tables/"+name+glob)))
	}
	return sqls
}

// checkOK runs convbatch check on out and fails the test unless it
// accepts it.
func checkOK(t *testing.T, what, out string) {
	t.Helper()
	if r := convbatch(t, nil, "check", out); r.code != 0 {
		t.Fatalf("%s: check: exit %d\n%s%s", what, r.code, r.stdout, r.stderr)
	}
}

// TestMaintainIceberg is issue 45 item 12: an Iceberg OUT of three
// incremental nights and a --replace-changed night (four snapshots per
// table, and data files of earlier snapshots that the current one no
// longer holds: a glob over data/ counts more rows than the table), then
// `convbatch maintain`: with --retain-last 2 the snapshots of runs 1 and
// 2 expire, ClickHouse reads the current snapshot and time travels to
// run 3's with the rows of parquet runs over the same nights, and the
// expired snapshot ids are refused; a maintain killed in its commit
// leaves OUT that check says is pending, which the next maintain
// finishes; with the default --retain-last 1 only the current snapshot
// is left and the data glob counts the table's rows exactly. check
// accepts OUT after every maintain, and an incremental run after them.
func TestMaintainIceberg(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	chdbtest.Require(t)
	for _, partition := range []string{"day", "none"} {
		t.Run(partition, func(t *testing.T) { testMaintainIceberg(t, partition) })
	}
}

func testMaintainIceberg(t *testing.T, partition string) {
	day := partition == "day"
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 60, Seed: 5, Faults: 0.05, Tamper: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var nights []string
	for n := 1; n <= exp.Nights; n++ {
		nights = append(nights, filepath.Join(set, fmt.Sprintf("night-%d", n)))
	}
	flags := []string{"--keys", filepath.Join(set, exp.Keys), "--partition-by", partition}
	ice := filepath.Join(dir, "ice")
	for n := 1; n <= len(nights); n++ {
		runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--incremental", "--table-format", "iceberg"}, flags, nights[:n])...)
	}
	runOK(t, slices.Concat([]string{"run", "-q", "-o", filepath.Join(dir, "one-3")}, flags, nights)...)
	changed := filepath.Join(nights[0], "a.jsonl.zst")
	lines := bytes.SplitAfter(decompress(t, changed), []byte("\n"))
	writeZstd(t, changed, bytes.Join(lines[:len(lines)*2/3], nil))
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--incremental", "--replace-changed", "--table-format", "iceberg"}, flags, nights)...)
	runOK(t, slices.Concat([]string{"run", "-q", "-o", filepath.Join(dir, "one-4")}, flags, nights)...)

	byRun := map[string]map[int]int64{}
	for _, name := range tabledef.Names {
		byRun[name] = snapshotsByRun(t, filepath.Join(ice, "tables", name))
		if len(byRun[name]) != 4 {
			t.Fatalf("table %s: snapshots by run %v, want runs 1 to 4", name, byRun[name])
		}
	}
	res := chdbtest.Query(t, dir, globCounts("ice", day)...)
	grown := false
	for _, rows := range res[1:] {
		grown = grown || chdbtest.Int(t, rows[0]["glob"]) > chdbtest.Int(t, rows[0]["tbl"])
	}
	if !grown {
		t.Fatalf("before maintain no table's data glob counts more rows than the table: %v", res[1:])
	}

	// A maintain that expires nothing (every snapshot is younger) and
	// removes nothing commits nothing.
	r := convbatch(t, nil, "maintain", ice, "--expire-snapshots-older-than", "1d")
	if r.code != 0 || !strings.Contains(r.stderr, "nothing to do") {
		t.Fatalf("maintain --expire-snapshots-older-than 1d: exit %d, want 0 and nothing to do\n%s", r.code, r.stderr)
	}
	time.Sleep(5 * time.Millisecond) // every snapshot older than 0 ms

	r = convbatch(t, nil, "maintain", ice, "--expire-snapshots-older-than", "0", "--retain-last", "2")
	if r.code != 0 {
		t.Fatalf("maintain --retain-last 2: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("maintain --retain-last 2:\n%s", r.stderr)
	checkOK(t, "after maintain --retain-last 2", ice)
	for _, name := range tabledef.Names {
		got := snapshotsByRun(t, filepath.Join(ice, "tables", name))
		if len(got) != 2 || got[3] != byRun[name][3] || got[4] != byRun[name][4] {
			t.Fatalf("table %s: snapshots by run after maintain %v, want runs 3 and 4 of %v", name, got, byRun[name])
		}
	}
	run3 := map[string]int64{}
	for _, name := range tabledef.Names {
		run3[name] = byRun[name][3]
	}
	sqls := slices.Concat(compareIceberg("ice", "one-4", day, nil), compareIceberg("ice", "one-3", day, run3))
	res = chdbtest.Query(t, dir, sqls...)
	per := len(tabledef.Names) + 1
	checkCompare(t, "current snapshot after maintain", res[:per])
	checkCompare(t, "snapshot of run 3 after maintain", res[per:])
	for _, name := range []string{tabledef.Usage, tabledef.Receipts} {
		q := fmt.Sprintf("SELECT count() AS n FROM icebergLocal(%s) SETTINGS iceberg_snapshot_id = %d", chdbtest.Literal("ice/tables/"+name), byRun[name][2])
		if res, err := chdbtest.QueryErr(t, dir, q); err == nil {
			t.Errorf("table %s: the expired snapshot of run 2 still reads: %v", name, res)
		}
	}

	// Killed in its commit, after the journal and the first rename:
	// check says the commit is pending, and the next maintain finishes
	// it before anything else.
	cmd := processCommand(t, "maintain", ice, "--expire-snapshots-older-than", "0")
	cmd.Env = append(cmd.Env, "CONVBATCH_CRASH=rename:1")
	if err := cmd.Run(); err == nil {
		t.Fatal("the crash at the first rename of maintain did not happen")
	}
	if r := convbatch(t, nil, "check", ice); r.code != 1 || !strings.Contains(r.stdout, "commit-pending") {
		t.Fatalf("check after a killed maintain: exit %d, want 1 and commit-pending\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = convbatch(t, nil, "maintain", ice, "--expire-snapshots-older-than", "0")
	if r.code != 0 {
		t.Fatalf("maintain after a killed one: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("maintain after a killed one:\n%s", r.stderr)
	checkOK(t, "after the killed maintain's recovery", ice)
	for _, name := range tabledef.Names {
		got := snapshotsByRun(t, filepath.Join(ice, "tables", name))
		if len(got) != 1 || got[4] != byRun[name][4] {
			t.Fatalf("table %s: snapshots by run after maintain %v, want run 4's only", name, got)
		}
	}
	res = chdbtest.Query(t, dir, slices.Concat(compareIceberg("ice", "one-4", day, nil), globCounts("ice", day))...)
	checkCompare(t, "current snapshot after the second maintain", res[:per])
	for _, rows := range res[per+1:] {
		row := rows[0]
		if chdbtest.Int(t, row["glob"]) != chdbtest.Int(t, row["tbl"]) {
			t.Errorf("table %s: the data glob counts %v rows, the table %v", row["name"], row["glob"], row["tbl"])
		}
	}

	// The next incremental night, with a new input, builds on the
	// maintained tables.
	extra := filepath.Join(dir, "night-5", "e.jsonl.zst")
	if err := os.MkdirAll(filepath.Dir(extra), 0o755); err != nil {
		t.Fatal(err)
	}
	genArchive(t, extra, "--conversations", "12", "--seed", "9")
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--incremental", "--table-format", "iceberg"}, flags, nights, []string{extra})...)
	runOK(t, slices.Concat([]string{"run", "-q", "-o", filepath.Join(dir, "one-5")}, flags, nights, []string{extra})...)
	checkOK(t, "after an incremental run after maintain", ice)

	// A copy of OUT elsewhere (its metadata naming the files where they
	// were written) is maintained where it is: run 4's snapshot expires,
	// the night after it is left, with the rows of a parquet run over
	// every night.
	if out, err := exec.Command("cp", "-a", ice, filepath.Join(dir, "copy")).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v: %s", err, out)
	}
	r = convbatch(t, nil, "maintain", filepath.Join(dir, "copy"), "--expire-snapshots-older-than", "0")
	if r.code != 0 || !strings.Contains(r.stderr, "1 snapshot expired, 1 kept") {
		t.Fatalf("maintain of a copied OUT: exit %d, want 0 and one snapshot expired per table\n%s", r.code, r.stderr)
	}
	checkOK(t, "after maintain of a copied OUT", filepath.Join(dir, "copy"))
	res = chdbtest.Query(t, dir, slices.Concat(compareIceberg("copy", "one-5", day, nil), globCounts("copy", day))...)
	checkCompare(t, "current snapshot of a copied OUT after maintain", res[:per])
	for _, rows := range res[per+1:] {
		row := rows[0]
		if chdbtest.Int(t, row["glob"]) != chdbtest.Int(t, row["tbl"]) {
			t.Errorf("copied OUT: table %s: the data glob counts %v rows, the table %v", row["name"], row["glob"], row["tbl"])
		}
	}
	// A parquet OUT has no snapshots: nothing to do.
	if r := convbatch(t, nil, "maintain", filepath.Join(dir, "one-4"), "--expire-snapshots-older-than", "0"); r.code != 0 || !strings.Contains(r.stderr, "nothing to do") {
		t.Errorf("maintain of a parquet OUT: exit %d, want 0 and nothing to do\n%s", r.code, r.stderr)
	}
}

// TestMaintainUsage: maintain's refusals of bad arguments, each a usage
// error (exit 2) that names the problem.
func TestMaintainUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"maintain"}, "exactly one OUT"},
		{[]string{"maintain", dir, "--expire-snapshots-older-than", "soon"}, `"soon" is not a duration`},
		{[]string{"maintain", dir, "--expire-snapshots-older-than", "-3d"}, `"-3d" is not a duration`},
		{[]string{"maintain", dir, "--expire-snapshots-older-than", "1d", "--retain-last", "0"}, "at least 1"},
		{[]string{"maintain", dir, "--retain-last", "3"}, "needs --expire-snapshots-older-than"},
		{[]string{"maintain", filepath.Join(dir, "none")}, "not a directory"},
		{[]string{"maintain", dir}, "no manifest"},
	} {
		r := convbatch(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s", tc.args, r.code, ExitUsage, tc.want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); err == nil {
		t.Error("maintain made the OUT it was given")
	}
}

// TestParseAge: the durations --expire-snapshots-older-than takes.
func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true}, {"30d", 30 * 24 * time.Hour, true}, {"12h", 12 * time.Hour, true}, {"1h30m", 90 * time.Minute, true},
		{"d", 0, false}, {"1.5d", 0, false}, {"-1h", 0, false}, {"", 0, false},
	} {
		got, err := parseAge(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseAge(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
