package cli

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/icebergout/sqlcatalog"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// catalogURI returns the URI of a new, empty SQL catalog on backend:
// "sqlite" (a file in dir) or "postgres" (a throwaway PostgreSQL server
// in a temporary directory, stopped when the test ends; skipped when
// initdb and pg_ctl are not installed).
func catalogURI(t *testing.T, backend, dir string) string {
	t.Helper()
	switch backend {
	case "sqlite":
		return "sqlite://" + filepath.Join(dir, "catalog.db")
	case "postgres":
		return startPostgres(t)
	}
	t.Fatalf("unknown backend %s", backend)
	return ""
}

// startPostgres starts a PostgreSQL server of its own (initdb -A trust,
// pg_ctl on 127.0.0.1 at a free port) and returns the URI of its
// database. Debian puts the binaries in /usr/lib/postgresql/NN/bin, which
// is searched after PATH. As root the server runs as nobody: initdb
// refuses root.
func startPostgres(t *testing.T) string {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	path := os.Getenv("PATH")
	for _, b := range bins {
		path += string(os.PathListSeparator) + b
	}
	find := func(name string) string {
		for _, d := range filepath.SplitList(path) {
			if p := filepath.Join(d, name); isExec(p) {
				return p
			}
		}
		return ""
	}
	initdb, pgctl := find("initdb"), find("pg_ctl")
	if initdb == "" || pgctl == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("initdb and pg_ctl not found (PATH, /usr/lib/postgresql/*/bin): .ci/run installs postgresql")
		}
		t.Skip("PostgreSQL not installed (no initdb and pg_ctl on PATH or in /usr/lib/postgresql/*/bin): skipping the PostgreSQL catalog")
	}
	// Not t.TempDir: its 0700 parents would shut out the server's user.
	dir, err := os.MkdirTemp("", "convbatch-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("running as root and no user nobody to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		os.Chown(dir, uid, gid)
	}
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
		}
	}
	run(initdb, "-A", "trust", "-U", "convbatch", "-D", data, "--no-sync")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	run(pgctl, "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o",
		fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", port, dir), "start")
	t.Cleanup(func() {
		cmd := exec.Command(pgctl, "-D", data, "-m", "immediate", "-w", "stop")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		cmd.Run()
	})
	return fmt.Sprintf("postgres://convbatch@127.0.0.1:%d/postgres?sslmode=disable", port)
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// catalogNights are three nights of archives and the keys that sign
// them.
func catalogNights(t *testing.T, dir string) (keys string, nights []string) {
	t.Helper()
	return writeNights(t, filepath.Join(dir, "set"), gen.NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 50, Seed: 9, Faults: 0.05, Tamper: 0.2})
}

// writeNights writes the nights o asks for under set (gen.WriteNights)
// and returns the keyring that signs them and each night's directory, in
// order.
func writeNights(t *testing.T, set string, o gen.NightsOptions) (keys string, nights []string) {
	t.Helper()
	exp, err := gen.WriteNights(set, o)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= exp.Nights; n++ {
		nights = append(nights, filepath.Join(set, fmt.Sprintf("night-%d", n)))
	}
	return filepath.Join(set, exp.Keys), nights
}

// checkCatalog checks the catalog at uri against the Iceberg OUT ice
// after its run n, and against ref, the Parquet OUT of one run over the
// same nights: a row of iceberg_tables for every table, read with plain
// SQL, named convbatch.<table>, whose metadata location is in ice's
// table; through iceberg-go, one snapshot per run first..n, the current one
// OUT's own metadata's, and as many rows as ref's table.
func checkCatalog(t *testing.T, uri, ice, ref string, first, n int) {
	t.Helper()
	ctx := context.Background()
	cat := testCatalog(t, uri)
	defer cat.Close()
	rows, err := cat.DB().QueryContext(ctx, "SELECT catalog_name, table_namespace, table_name, metadata_location FROM iceberg_tables ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	locs := map[string]string{}
	for rows.Next() {
		var c, ns, name, loc string
		if err := rows.Scan(&c, &ns, &name, &loc); err != nil {
			t.Fatal(err)
		}
		if c != sqlcatalog.CatalogName || ns != icebergout.DefaultNamespace {
			t.Errorf("iceberg_tables: row %s.%s in catalog %s, want %s.%s", ns, name, c, sqlcatalog.CatalogName, icebergout.DefaultNamespace)
		}
		locs[name] = loc
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var refRep sink.Report
	readJSON(t, filepath.Join(ref, "report.json"), &refRep)
	for _, name := range tabledef.Names {
		want := "file://" + filepath.Join(ice, "tables", name, "metadata") + "/"
		if !strings.HasPrefix(locs[name], want) {
			t.Fatalf("iceberg_tables: table %s at %q, want a metadata file in %s", name, locs[name], want)
		}
		tbl, err := cat.LoadTable(ctx, name)
		if err != nil || tbl == nil {
			t.Fatalf("table %s: %v", name, err)
		}
		byRun := map[int]int64{}
		for _, s := range tbl.Metadata().Snapshots() {
			r, err := strconv.Atoi(s.Summary.Properties[icebergout.RunProperty])
			if err != nil {
				t.Fatalf("table %s: snapshot %d has no %s", name, s.SnapshotID, icebergout.RunProperty)
			}
			if _, dup := byRun[r]; dup {
				t.Fatalf("table %s: two snapshots of run %d in the catalog", name, r)
			}
			byRun[r] = s.SnapshotID
		}
		for r := first; r <= n; r++ {
			if byRun[r] == 0 {
				t.Fatalf("table %s: catalog snapshots by run %v, want one for each of runs %d to %d", name, byRun, first, n)
			}
		}
		if len(byRun) != n-first+1 {
			t.Fatalf("table %s: catalog snapshots by run %v, want one for each of runs %d to %d", name, byRun, first, n)
		}
		own := snapshotsByRun(t, filepath.Join(ice, "tables", name))
		if cur := tbl.CurrentSnapshot(); cur == nil || cur.SnapshotID != own[n] || byRun[n] != own[n] {
			t.Fatalf("table %s: catalog's current snapshot %v, OUT's metadata has run %d at %d", name, cur, n, own[n])
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatalf("table %s: iceberg-go scan plan: %v", name, err)
		}
		var got int64
		for _, task := range tasks {
			got += task.File.Count()
		}
		if at, err := tbl.Scan().ToArrowTable(ctx); err != nil {
			t.Logf("table %s: iceberg-go scan: %v", name, err)
		} else {
			if at.NumRows() != got {
				t.Errorf("table %s: iceberg-go reads %d rows, its data files hold %d", name, at.NumRows(), got)
			}
			at.Release()
		}
		if want := refRep.Tables[name].Rows; got != want {
			t.Errorf("table %s after run %d: iceberg-go reads %d rows through the catalog, one run over the same nights wrote %d", name, n, got, want)
		}
	}
}

// TestCatalogNights is issue 44 item 2: three incremental nights with
// --catalog, on SQLite and on PostgreSQL; after each, the catalog's rows
// (plain SQL) and its tables (iceberg-go's reader) hold one snapshot per
// night with the rows of one run over the same nights, and check passes.
func TestCatalogNights(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			uri := catalogURI(t, backend, dir)
			keys, nights := catalogNights(t, dir)
			ice := filepath.Join(dir, "ice")
			for n := 1; n <= len(nights); n++ {
				runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri}, nights[:n])...)
				ref := filepath.Join(dir, fmt.Sprintf("one-%d", n))
				runOK(t, slices.Concat([]string{"run", "-q", "-o", ref, "--keys", keys}, nights[:n])...)
				checkCatalog(t, uri, ice, ref, 1, n)
				checkOK(t, fmt.Sprintf("after night %d", n), ice)
			}
			// maintain needs the runs' catalog too: without it, it
			// refuses, changing nothing, rather than move the tables
			// away from the catalog.
			if r := convbatch(t, nil, "maintain", ice, "--expire-snapshots-older-than", "0"); r.code != 2 || !strings.Contains(r.stderr, "pass the --catalog") {
				t.Fatalf("maintain of a catalog OUT without --catalog: exit %d, want 2 and a refusal\n%s", r.code, r.stderr)
			}
			// audit needs the runs' catalog: without it, it refuses and
			// changes nothing (its snapshot would not reach the catalog).
			before := treeDigest(t, ice)
			if r := convbatch(t, nil, "audit", ice, "--keys", keys); r.code != 2 || !strings.Contains(r.stderr, "pass the --catalog") {
				t.Fatalf("audit of a catalog OUT without --catalog: exit %d, want 2 and a refusal\n%s", r.code, r.stderr)
			}
			if treeDigest(t, ice) != before {
				t.Fatal("a refused audit changed OUT")
			}
			revoked := auditCatalog(t, uri, ice, keys, len(nights))
			maintainCatalog(t, uri, ice, revoked)
		})
	}
}

// testCatalog opens the catalog at uri in convbatch's namespace, for the
// caller to close.
func testCatalog(t *testing.T, uri string) *sqlcatalog.Catalog {
	t.Helper()
	cat, err := sqlcatalog.Open(context.Background(), uri, icebergout.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// sameSnapshots fails unless every table of the catalog at uri holds
// exactly the snapshots of OUT ice's own metadata, at its current one, and
// returns each table's metadata location in the catalog.
func sameSnapshots(t *testing.T, what, uri, ice string) map[string]string {
	t.Helper()
	ctx := context.Background()
	cat := testCatalog(t, uri)
	defer cat.Close()
	locs := map[string]string{}
	for _, name := range tabledef.Names {
		tbl, err := cat.LoadTable(ctx, name)
		if err != nil {
			t.Fatalf("%s: table %s: %v", what, name, err)
		}
		own := snapshotsByRun(t, filepath.Join(ice, "tables", name))
		var want, got []int64
		for _, id := range own {
			want = append(want, id)
		}
		for _, s := range tbl.Metadata().Snapshots() {
			got = append(got, s.SnapshotID)
		}
		slices.Sort(want)
		slices.Sort(got)
		newest := 0
		for run := range own {
			newest = max(newest, run)
		}
		if cur := tbl.CurrentSnapshot(); !slices.Equal(got, want) || cur == nil || cur.SnapshotID != own[newest] {
			t.Fatalf("%s: table %s: the catalog holds snapshots %v (current %v), OUT's metadata %v (current run %d's)", what, name, got, cur, want, newest)
		}
		locs[name] = tbl.MetadataLocation()
	}
	return locs
}

// maintainCatalog maintains the Iceberg OUT ice, committed to the catalog
// at uri, with --catalog: the small files rewritten, then every snapshot
// but the current one expired; after each, the catalog holds exactly
// OUT's snapshots (none of the expired), check passes and the rows are
// those before; a maintenance with nothing to do moves nothing; the
// next run commits to the catalog with no conflict.
func maintainCatalog(t *testing.T, uri, ice, keys string) {
	t.Helper()
	// The rows of each table's current snapshot, read through the
	// catalog with iceberg-go.
	rows := func() map[string]int64 {
		t.Helper()
		ctx := context.Background()
		cat := testCatalog(t, uri)
		defer cat.Close()
		n := map[string]int64{}
		for _, name := range tabledef.Names {
			tbl, err := cat.LoadTable(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatalf("table %s: iceberg-go scan plan: %v", name, err)
			}
			for _, task := range tasks {
				n[name] += task.File.Count()
			}
		}
		return n
	}
	before := rows()
	runOK(t, "maintain", ice, "--rewrite-small-files", "--catalog", uri)
	checkOK(t, "after the rewrite of small files", ice)
	sameSnapshots(t, "after the rewrite of small files", uri, ice)
	runOK(t, "maintain", ice, "--expire-snapshots-older-than", "0", "--catalog", uri)
	checkOK(t, "after the expiry", ice)
	locs := sameSnapshots(t, "after the expiry", uri, ice)
	for _, name := range tabledef.Names {
		if own := snapshotsByRun(t, filepath.Join(ice, "tables", name)); len(own) != 1 {
			t.Errorf("table %s: %d snapshots after expiring all but the current one", name, len(own))
		}
	}
	if got := rows(); !maps.Equal(got, before) {
		t.Errorf("rows by table %v after the maintenance, %v before", got, before)
	}
	digest := treeDigest(t, ice)
	r := runOK(t, "maintain", ice, "--expire-snapshots-older-than", "0", "--catalog", uri)
	if !strings.Contains(r.stderr, "nothing to do") || treeDigest(t, ice) != digest || !maps.Equal(sameSnapshots(t, "after nothing to do", uri, ice), locs) {
		t.Errorf("a maintenance with nothing to do moved OUT or the catalog: %s", r.stderr)
	}
	again := filepath.Join(t.TempDir(), "night-after")
	if err := os.CopyFS(again, os.DirFS(filepath.Join(filepath.Dir(ice), "set", "night-2"))); err != nil {
		t.Fatal(err)
	}
	runOK(t, "run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri, again)
	checkOK(t, "after a run after the maintenance", ice)
	sameSnapshots(t, "after a run after the maintenance", uri, ice)
}

// firstAgent is the first agent, by name, of the keyring at keys.
func firstAgent(t *testing.T, keys string) string {
	t.Helper()
	var kr struct {
		Agents map[string]any `json:"agents"`
	}
	readJSON(t, keys, &kr)
	names := slices.Sorted(maps.Keys(kr.Agents))
	if len(names) == 0 {
		t.Fatalf("%s: no agent", keys)
	}
	return names[0]
}

// auditCatalog audits the Iceberg OUT ice, committed to the catalog at
// uri by runs 1..n, with --catalog under a keyring that revokes a key:
// the audit's run n+1 changes verdicts, and in the catalog every table's
// current snapshot is then OUT's own newest, one of run n+1 where OUT's
// table has one; check passes; a second audit under the same keyring
// changes nothing and moves nothing; the run after it commits to the
// catalog with no conflict. --catalog is refused for an OUT no catalog
// holds.
func auditCatalog(t *testing.T, uri, ice, keys string, n int) (revoked string) {
	t.Helper()
	// Every key revoked from before night 1: every verdict changes.
	revoked = revokeAgentKey(t, keys, firstAgent(t, keys), committedAt(t, ice, 1).Add(-time.Hour))
	r := convbatch(t, nil, "audit", ice, "--keys", revoked, "--catalog", uri)
	if r.code != ExitFindings {
		t.Fatalf("audit --catalog under a revoking keyring: exit %d, want %d (findings)\n%s", r.code, ExitFindings, r.stderr)
	}
	checkOK(t, "after the audit", ice)
	current := func() map[string]string {
		t.Helper()
		ctx := context.Background()
		cat := testCatalog(t, uri)
		defer cat.Close()
		locs := map[string]string{}
		audited := 0
		for _, name := range tabledef.Names {
			tbl, err := cat.LoadTable(ctx, name)
			if err != nil {
				t.Fatalf("table %s: %v", name, err)
			}
			own := snapshotsByRun(t, filepath.Join(ice, "tables", name))
			newest := 0
			for run := range own {
				newest = max(newest, run)
			}
			if cur := tbl.CurrentSnapshot(); cur == nil || cur.SnapshotID != own[newest] {
				t.Fatalf("table %s: catalog's current snapshot %v, OUT's newest is run %d's, %d", name, cur, newest, own[newest])
			}
			if newest == n+1 {
				audited++
			}
			locs[name] = tbl.MetadataLocation()
		}
		if audited == 0 {
			t.Fatalf("no table has a snapshot of the audit's run %d", n+1)
		}
		return locs
	}
	after := current()
	before := treeDigest(t, ice)
	if r := convbatch(t, nil, "audit", ice, "--keys", revoked, "--catalog", uri); r.code != ExitOK {
		t.Fatalf("second audit --catalog: exit %d, want 0 (nothing changed)\n%s", r.code, r.stderr)
	}
	if treeDigest(t, ice) != before || !maps.Equal(current(), after) {
		t.Error("an audit that changed no verdict moved OUT or the catalog")
	}
	// The next night (night 1's files again, under another name) finds
	// the catalog where OUT's record says.
	again := filepath.Join(t.TempDir(), "night-again")
	if err := os.CopyFS(again, os.DirFS(filepath.Join(filepath.Dir(keys), "night-1"))); err != nil {
		t.Fatal(err)
	}
	runOK(t, "run", "-q", "-o", ice, "--keys", revoked, "--incremental", "--table-format", "iceberg", "--catalog", uri, again)
	checkOK(t, "after a run after the audit", ice)
	current()
	// A Parquet OUT has no catalog.
	pq := filepath.Join(t.TempDir(), "pq")
	runOK(t, "run", "-q", "-o", pq, "--keys", keys, filepath.Join(filepath.Dir(keys), "night-1"))
	if r := convbatch(t, nil, "audit", pq, "--keys", revoked, "--catalog", uri); r.code != 2 || !strings.Contains(r.stderr, "no table of it is committed to a catalog") {
		t.Errorf("audit --catalog of a Parquet OUT: exit %d, want 2\n%s", r.code, r.stderr)
	}
	return revoked
}

// TestCatalogConflict: another writer commits a snapshot to a table in
// the catalog between two nights; the next night fails naming the
// conflict, publishes nothing (report.json is night 1's, no journal),
// and leaves every table in the catalog where it was.
func TestCatalogConflict(t *testing.T) {
	dir := t.TempDir()
	uri := catalogURI(t, "sqlite", dir)
	keys, nights := catalogNights(t, dir)
	ice := filepath.Join(dir, "ice")
	args := func(n int) []string {
		return slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri}, nights[:n])
	}
	runOK(t, args(1)...)
	ctx := context.Background()
	cat, err := sqlcatalog.Open(ctx, uri, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	before := map[string]int64{}
	for _, name := range tabledef.Names {
		tbl, err := cat.LoadTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = tbl.CurrentSnapshot().SnapshotID
	}
	other, err := cat.LoadTable(ctx, tabledef.Names[0])
	if err != nil {
		t.Fatal(err)
	}
	tx := other.NewTransaction()
	if err := tx.AddFiles(ctx, nil, iceberg.Properties{"writer": "someone else"}, false); err != nil {
		t.Fatal(err)
	}
	moved, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before[tabledef.Names[0]] = moved.CurrentSnapshot().SnapshotID
	// The other writer's manifest list went into the table's metadata
	// directory, where OUT's record check would refuse it first (an
	// unexpected file): it is moved out, as a writer whose files live
	// elsewhere would have left OUT, so that the catalog is what differs.
	lists, _ := filepath.Glob(filepath.Join(ice, "tables", tabledef.Names[0], "metadata", fmt.Sprintf("snap-%d-*.avro", before[tabledef.Names[0]])))
	if len(lists) != 1 {
		t.Fatalf("the other writer's manifest list: %v", lists)
	}
	if err := os.Rename(lists[0], filepath.Join(dir, filepath.Base(lists[0]))); err != nil {
		t.Fatal(err)
	}

	r := convbatch(t, nil, args(2)...)
	if r.code == 0 || r.code == 1 || !strings.Contains(r.stderr, "iceberg catalog conflict") || !strings.Contains(r.stderr, "convbatch."+tabledef.Names[0]) {
		t.Fatalf("night 2 over a moved catalog table: exit %d, want a failure naming the conflict\n%s", r.code, r.stderr)
	}
	t.Logf("night 2: %s", r.stderr)
	var rep sink.Report
	readJSON(t, filepath.Join(ice, "report.json"), &rep)
	if rep.Run != 1 {
		t.Fatalf("report.json is run %d's, want night 1's", rep.Run)
	}
	if _, err := os.Stat(filepath.Join(ice, ".convbatch", "journal.json")); err == nil {
		t.Fatal("the refused night left a journal")
	}
	for _, name := range tabledef.Names {
		tbl, err := cat.LoadTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := tbl.CurrentSnapshot().SnapshotID; got != before[name] {
			t.Errorf("table %s: the refused night moved the catalog to snapshot %d from %d", name, got, before[name])
		}
	}
}

// TestCatalogCrash: night 2 killed at each step of its commit that
// touches the catalog (journal written, nothing committed to the
// catalog; the first table committed; all of them), then run again:
// a command without --catalog refuses to finish the commit, the rerun
// with it finishes it, and every table has one snapshot per night, the
// rows of one run over both nights.
func TestCatalogCrash(t *testing.T) {
	dir := t.TempDir()
	keys, nights := catalogNights(t, dir)
	ref := filepath.Join(dir, "one-2")
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ref, "--keys", keys}, nights[:2])...)
	for _, crash := range []string{"journal:1", "catalog:1", fmt.Sprintf("catalog:%d", len(tabledef.Names))} {
		t.Run(crash, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(crash, ":", "-"))
			uri := catalogURI(t, "sqlite", sub)
			ice := filepath.Join(sub, "ice")
			args := func(n int) []string {
				return slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri}, nights[:n])
			}
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			runOK(t, args(1)...)
			cmd := processCommand(t, args(2)...)
			cmd.Env = append(cmd.Env, "CONVBATCH_CRASH="+crash)
			start := time.Now()
			if err := cmd.Run(); err == nil {
				t.Fatalf("the crash at %s did not happen", crash)
			}
			t.Logf("killed at %s after %v", crash, time.Since(start).Round(time.Millisecond))
			if r := convbatch(t, nil, "check", ice); r.code != 1 || !strings.Contains(r.stdout, "commit-pending") {
				t.Fatalf("check after the kill: exit %d, want 1 and commit-pending\n%s%s", r.code, r.stdout, r.stderr)
			}
			noCat := slices.DeleteFunc(args(2), func(s string) bool { return s == "--catalog" || s == uri })
			if r := convbatch(t, nil, noCat...); r.code == 0 || !strings.Contains(r.stderr, "--catalog") {
				t.Fatalf("a run without --catalog over the killed commit: exit %d, want a refusal naming --catalog\n%s", r.code, r.stderr)
			}
			// The rerun finishes night 2 (recovery); its inputs are then
			// all in OUT, and it commits nothing more.
			runOK(t, args(2)...)
			checkCatalog(t, uri, ice, ref, 1, 2)
			checkOK(t, "after the recovery", ice)
		})
	}
}

// TestCatalogMaintainCrash: maintain --catalog (small files rewritten and
// snapshots expired, or an expiry alone) killed at its journal, after its
// first catalog commit, in the middle or after its last leaves OUT
// commit-pending; maintain without --catalog refuses to finish it; maintain
// with it finishes the commit, after which the catalog holds exactly OUT's
// snapshots (the expired ones gone from both) and check passes.
func TestCatalogMaintainCrash(t *testing.T) {
	dir := t.TempDir()
	keys, nights := catalogNights(t, dir)
	for _, tc := range []struct {
		crash   string
		rewrite bool // also rewrite small files (a new current snapshot)
	}{
		{"journal:1", true}, {"catalog:1", true}, {fmt.Sprintf("catalog:%d", len(tabledef.Names)), true},
		// An expiry alone leaves the current snapshot: the recovery
		// knows the tables done by their expired snapshots.
		{"catalog:1", false}, {"catalog:3", false},
	} {
		crash := tc.crash
		name := crash
		if !tc.rewrite {
			name += "/expire-only"
		}
		t.Run(name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.NewReplacer(":", "-", "/", "-").Replace(name))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			uri := catalogURI(t, "sqlite", sub)
			ice := filepath.Join(sub, "ice")
			for n := 1; n <= 2; n++ {
				runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri}, nights[:n])...)
			}
			args := []string{"maintain", ice, "--expire-snapshots-older-than", "0", "--catalog", uri}
			if tc.rewrite {
				args = append(args, "--rewrite-small-files")
			}
			cmd := processCommand(t, args...)
			cmd.Env = append(cmd.Env, "CONVBATCH_CRASH="+crash)
			if err := cmd.Run(); err == nil {
				t.Fatalf("the crash at %s did not happen", crash)
			}
			if r := convbatch(t, nil, "check", ice); r.code != 1 || !strings.Contains(r.stdout, "commit-pending") {
				t.Fatalf("check after the kill: exit %d, want 1 and commit-pending\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := convbatch(t, nil, "maintain", ice, "--expire-snapshots-older-than", "0"); r.code == 0 || !strings.Contains(r.stderr, "--catalog") {
				t.Fatalf("maintain without --catalog over the killed commit: exit %d, want a refusal naming --catalog\n%s", r.code, r.stderr)
			}
			runOK(t, args...)
			checkOK(t, "after the recovery", ice)
			sameSnapshots(t, "after the recovery", uri, ice)
			for _, name := range tabledef.Names {
				if own := snapshotsByRun(t, filepath.Join(ice, "tables", name)); len(own) != 1 {
					t.Errorf("table %s: %d snapshots after the recovered maintenance, want the current one", name, len(own))
				}
			}
		})
	}
}

// TestCatalogOverExisting: the first run with --catalog over an
// incremental Iceberg OUT that two nights wrote without one registers
// every table, whose history in the catalog starts with that run's
// snapshot, holding all of OUT's rows; a run that replaces OUT then
// replaces the catalog tables' contents in one snapshot more.
func TestCatalogOverExisting(t *testing.T) {
	dir := t.TempDir()
	uri := catalogURI(t, "sqlite", dir)
	keys, nights := catalogNights(t, dir)
	ice := filepath.Join(dir, "ice")
	for n := 1; n <= 2; n++ {
		runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg"}, nights[:n])...)
	}
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri}, nights)...)
	ref := filepath.Join(dir, "one-3")
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ref, "--keys", keys}, nights)...)
	checkCatalog(t, uri, ice, ref, 3, 3)
	checkOK(t, "after the first run with --catalog", ice)

	// A run that replaces OUT (no --incremental), over night 1 only.
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ice, "--keys", keys, "--table-format", "iceberg", "--catalog", uri}, nights[:1])...)
	ref1 := filepath.Join(dir, "one-1")
	runOK(t, slices.Concat([]string{"run", "-q", "-o", ref1, "--keys", keys}, nights[:1])...)
	ctx := context.Background()
	cat, err := sqlcatalog.Open(ctx, uri, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var rep sink.Report
	readJSON(t, filepath.Join(ref1, "report.json"), &rep)
	for _, name := range tabledef.Names {
		tbl, err := cat.LoadTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(tbl.Metadata().Snapshots()); got != 2 {
			t.Errorf("table %s: %d snapshots in the catalog after the rebuild, want 2", name, got)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var rows int64
		for _, task := range tasks {
			rows += task.File.Count()
		}
		if want := rep.Tables[name].Rows; rows != want {
			t.Errorf("table %s after the rebuild: %d rows in the catalog's current snapshot, want %d", name, rows, want)
		}
	}
	checkOK(t, "after the rebuild", ice)
}
