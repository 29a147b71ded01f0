package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/outdir"
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
		if statementsPending(name) {
			continue // no data file: nothing for the glob to read
		}
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
	keys, nights := writeNights(t, set, gen.NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 60, Seed: 5, Faults: 0.05, Tamper: 0.2, Dates: icebergNightsDates(partition)})
	flags := []string{"--keys", keys, "--partition-by", partition}
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
		{[]string{"maintain", dir, "--target-file-size", "64MiB"}, "needs --rewrite-small-files"},
		{[]string{"maintain", dir, "--rewrite-small-files", "--target-file-size", "big"}, `--target-file-size "big": want a size above 0`},
		{[]string{"maintain", dir, "--rewrite-small-files", "--target-file-size", "0"}, `--target-file-size "0": want a size above 0`},
		{[]string{"maintain", filepath.Join(dir, "none")}, "not a directory"},
		{[]string{"maintain", "s3://bucket/out?X-Amz-Signature=SECRET"}, "an OUT on object storage takes no query"},
		{[]string{"maintain", dir}, "no manifest"},
	} {
		r := convbatch(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "SECRET") {
			t.Errorf("%v: exit %d, want %d and %q (no credential)\n%s", tc.args, r.code, ExitUsage, tc.want, r.stderr)
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

// tableHashes returns the statements that read, for every table of the
// Iceberg OUT ice (at its current snapshot), its row count and an
// order-independent hash of its rows.
func tableHashes(ice string) []string {
	var sqls []string
	for _, name := range tabledef.Names {
		sqls = append(sqls, fmt.Sprintf("SELECT %s AS name, count() AS n, toString(sum(cityHash64(*))) AS h FROM icebergLocal(%s)",
			chdbtest.Literal(name), chdbtest.Literal(ice+"/tables/"+name)))
	}
	return sqls
}

// filesByDir returns the data files of the current snapshot of every
// table of OUT, by the directory that holds them (a table's data
// directory, or a partition's in it).
func filesByDir(t *testing.T, out string) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	for _, name := range tabledef.Names {
		files, err := icebergout.CurrentFiles(context.Background(), root, outdir.TableDir(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			by[path.Dir(f)] = append(by[path.Dir(f)], f)
		}
	}
	return by
}

// inputFiles returns the files that OUT's state lists for its inputs,
// each once.
func inputFiles(t *testing.T, out string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(outdir.InputsRel())))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var in struct {
			Files []string `json:"files"`
		}
		if err := json.Unmarshal(line, &in); err != nil {
			t.Fatal(err)
		}
		for _, f := range in.Files {
			files[f] = true
		}
	}
	return files
}

// TestMaintainRewriteSmallFiles is issue 45 item 12's rewrite of small
// files: an Iceberg OUT of three incremental nights (two inputs a night:
// small data files in every partition), then `maintain
// --rewrite-small-files`: every partition's files are merged into one, in
// a replace snapshot; ClickHouse reads the same rows (count and hash) as
// before and as a parquet run over the nights, and time travels to the
// night before it; OUT's state lists the merged files for its inputs. A
// fourth night adds small files again, and a maintain that also expires
// every earlier snapshot is killed in its commit: check says pending; the
// next run, --replace-changed with an input of the first night changed,
// finishes it (the merged files gone from OUT) and retires exactly that
// input's rows from the merged files: the rows of a parquet run over the
// nights as they are now. check accepts OUT after each step.
func TestMaintainRewriteSmallFiles(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	chdbtest.Require(t)
	for _, partition := range []string{"day", "none"} {
		t.Run(partition, func(t *testing.T) { testMaintainRewriteSmallFiles(t, partition) })
	}
}

func testMaintainRewriteSmallFiles(t *testing.T, partition string) {
	day := partition == "day"
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	keys, nights := writeNights(t, set, gen.NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 60, Seed: 7, Faults: 0.05, Tamper: 0.2, Dates: icebergNightsDates(partition)})
	flags := []string{"--keys", keys, "--partition-by", partition}
	ice := filepath.Join(dir, "ice")
	for n := 1; n <= len(nights); n++ {
		runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--incremental", "--table-format", "iceberg"}, flags, nights[:n])...)
	}
	runOK(t, slices.Concat([]string{"run", "-q", "-o", filepath.Join(dir, "one-3")}, flags, nights)...)
	before := filesByDir(t, ice)
	many := 0
	for _, files := range before {
		if len(files) > 1 {
			many++
		}
	}
	if many == 0 {
		t.Fatalf("no directory of data files holds more than one: %v", before)
	}
	run3 := map[string]int64{}
	for _, name := range tabledef.Names {
		run3[name] = snapshotsByRun(t, filepath.Join(ice, "tables", name))[3]
	}
	hashes := chdbtest.Query(t, dir, tableHashes("ice")...)
	if out, err := exec.Command("cp", "-a", ice, filepath.Join(dir, "ice-3")).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v: %s", err, out)
	}

	// A copy of OUT (its metadata naming the files where they were
	// written) is not rewritten: a snapshot would mix two places.
	r := convbatch(t, nil, "maintain", filepath.Join(dir, "ice-3"), "--rewrite-small-files")
	if r.code != 0 || !strings.Contains(r.stderr, "small files not rewritten") || !strings.Contains(r.stderr, "nothing to do") {
		t.Errorf("maintain --rewrite-small-files of a copied OUT: exit %d, want 0, not rewritten and nothing to do\n%s", r.code, r.stderr)
	}
	checkOK(t, "a copied OUT after maintain --rewrite-small-files", filepath.Join(dir, "ice-3"))

	r = convbatch(t, nil, "maintain", ice, "--rewrite-small-files")
	if r.code != 0 || !strings.Contains(r.stderr, "rewritten into") {
		t.Fatalf("maintain --rewrite-small-files: exit %d, want 0 and files rewritten\n%s", r.code, r.stderr)
	}
	t.Logf("maintain --rewrite-small-files:\n%s", r.stderr)
	checkOK(t, "after maintain --rewrite-small-files", ice)
	after := filesByDir(t, ice)
	if len(after) != len(before) {
		t.Errorf("data directories %d after maintain, %d before", len(after), len(before))
	}
	for d, files := range after {
		if len(files) != 1 {
			t.Errorf("%s: %d data files after maintain (%d before), want 1", d, len(files), len(before[d]))
		}
		if len(before[d]) > 1 && !strings.Contains(files[0], "/part-v000004-") {
			t.Errorf("%s: data file %s, want the merged one of metadata version 4", d, files[0])
		}
	}
	listedBefore, listed := inputFiles(t, filepath.Join(dir, "ice-3")), inputFiles(t, ice)
	for d, files := range before {
		if len(files) < 2 {
			continue
		}
		was := false
		for _, f := range files {
			was = was || listedBefore[f]
			if listed[f] {
				t.Errorf("the state still lists the merged %s", f)
			}
		}
		if was && !listed[after[d][0]] {
			t.Errorf("the state lists no input's rows in %s, merged from %v", after[d][0], files)
		}
	}
	for _, name := range tabledef.Names {
		if got := snapshotsByRun(t, filepath.Join(ice, "tables", name)); (len(got) != 4 && !statementsPending(name)) || got[3] != run3[name] {
			t.Errorf("table %s: snapshots by run %v, want runs 1 to 3 and the maintenance's", name, got)
		}
	}
	per := len(tabledef.Names) + 1
	res := chdbtest.Query(t, dir, slices.Concat(tableHashes("ice"), compareIceberg("ice", "one-3", day, nil), compareIceberg("ice", "one-3", day, run3))...)
	for i, rows := range res[:len(tabledef.Names)] {
		if !reflect.DeepEqual(rows, hashes[i]) {
			t.Errorf("rows after maintain %v, before %v", rows, hashes[i])
		}
	}
	checkCompare(t, "after maintain --rewrite-small-files", res[len(tabledef.Names):len(tabledef.Names)+per])
	checkCompare(t, "snapshot of run 3 after maintain --rewrite-small-files", res[len(tabledef.Names)+per:])
	if r := convbatch(t, nil, "maintain", ice, "--rewrite-small-files"); r.code != 0 || strings.Contains(r.stderr, "rewritten into") {
		t.Errorf("a second maintain --rewrite-small-files: exit %d, want 0 and nothing rewritten\n%s", r.code, r.stderr)
	}

	// A fourth night: small files again. A maintain that merges them and
	// expires every earlier snapshot is killed in its commit.
	extra := filepath.Join(dir, "night-4", "e.jsonl.zst")
	if err := os.MkdirAll(filepath.Dir(extra), 0o755); err != nil {
		t.Fatal(err)
	}
	genArchive(t, extra, "--conversations", "12", "--seed", "9")
	inputs := append(slices.Clip(nights), extra)
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--incremental", "--table-format", "iceberg"}, flags, inputs)...)
	small := filesByDir(t, ice)
	cmd := processCommand(t, "maintain", ice, "--rewrite-small-files", "--target-file-size", "64MiB", "--expire-snapshots-older-than", "0")
	cmd.Env = append(cmd.Env, "CONVBATCH_CRASH=rename:1")
	if err := cmd.Run(); err == nil {
		t.Fatal("the crash at the first rename of maintain did not happen")
	}
	if r := convbatch(t, nil, "check", ice); r.code != 1 || !strings.Contains(r.stdout, "commit-pending") {
		t.Fatalf("check after a killed maintain: exit %d, want 1 and commit-pending\n%s%s", r.code, r.stdout, r.stderr)
	}

	// An input of the first night changes: the next run finishes the
	// maintenance, then retires that input's rows.
	changed := filepath.Join(nights[0], "a.jsonl.zst")
	lines := bytes.SplitAfter(decompress(t, changed), []byte("\n"))
	writeZstd(t, changed, bytes.Join(lines[:len(lines)*2/3], nil))
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--incremental", "--replace-changed", "--table-format", "iceberg"}, flags, inputs)...)
	checkOK(t, "after the run that finished a killed maintain", ice)
	runOK(t, slices.Concat([]string{"run", "-q", "-o", filepath.Join(dir, "one-now")}, flags, inputs)...)
	res = chdbtest.Query(t, dir, compareIceberg("ice", "one-now", day, nil)...)
	checkCompare(t, "after --replace-changed of an input in merged files", res)
	for d, files := range small {
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(ice, filepath.FromSlash(f))); len(files) > 1 && err == nil {
				t.Errorf("%s: %s, merged by the killed maintain and its snapshot expired, is still in OUT", d, f)
			}
		}
	}
	for _, name := range tabledef.Names {
		if got := snapshotsByRun(t, filepath.Join(ice, "tables", name)); len(got) != 2 {
			t.Errorf("table %s: snapshots by run %v, want the maintenance's and the run's", name, got)
		}
	}
}
