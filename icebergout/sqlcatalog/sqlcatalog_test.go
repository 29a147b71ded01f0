package sqlcatalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/tabledef"
)

// TestOpenRefuses: URIs Open refuses, each with a message that names
// what to write instead and never the password.
func TestOpenRefuses(t *testing.T) {
	for _, tc := range []struct {
		uri, namespace, want string
	}{
		{"sqlite://rel/catalog.db", "", "three slashes, an absolute path"},
		{"sqlite:relative.db", "", "three slashes, an absolute path"},
		{"mysql://u:hunter2@h/db", "", `unknown scheme "mysql"`},
		{"postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "", "connection refused"},
		{"sqlite:///tmp/x.db", "a.b", "want one level"},
		{"::not a uri", "", "not a URI"},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			c, err := Open(context.Background(), tc.uri, tc.namespace)
			if err == nil {
				c.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error %q: want %q in it and no password", err, tc.want)
			}
		})
	}
}

// TestCommitConflict: a commit whose requirements the catalog's table no
// longer meets is ErrCatalogConflict and changes nothing; one whose
// snapshot is current already is skipped.
func TestCommitConflict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Open(ctx, "sqlite://"+filepath.Join(dir, "catalog.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := createUsage(t, c, filepath.Join(dir, "usage"))
	loc := tbl.MetadataLocation()
	stale := int64(12345)
	reqs, _ := json.Marshal([]table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &stale)})
	ups, _ := json.Marshal([]table.Update{table.NewSetPropertiesUpdate(map[string]string{"k": "v"})})
	cc := icebergout.CatalogCommit{Table: tabledef.Usage, Namespace: icebergout.DefaultNamespace, SnapshotID: 1, Requirements: reqs, Updates: ups}
	if err := c.Check(ctx, cc); !errors.Is(err, icebergout.ErrCatalogConflict) {
		t.Fatalf("check of a stale requirement: %v, want ErrCatalogConflict", err)
	}
	err = c.Commit(ctx, cc)
	if !errors.Is(err, icebergout.ErrCatalogConflict) || !strings.Contains(err.Error(), "convbatch.usage") {
		t.Fatalf("stale requirement: %v, want ErrCatalogConflict naming convbatch.usage", err)
	}
	after, err := c.LoadTable(ctx, tabledef.Usage)
	if err != nil {
		t.Fatal(err)
	}
	if after.MetadataLocation() != loc {
		t.Fatalf("the refused commit moved the table to %s", after.MetadataLocation())
	}
	// Met requirements: the check passes, the commit applies.
	reqs, _ = json.Marshal([]table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID()), table.AssertRefSnapshotID(table.MainBranch, nil)})
	ok := cc
	ok.Requirements = reqs
	if err := c.Check(ctx, ok); err != nil {
		t.Fatalf("check of met requirements: %v", err)
	}
	if err := c.Commit(ctx, ok); err != nil {
		t.Fatalf("commit of met requirements: %v", err)
	}
	if after, err = c.LoadTable(ctx, tabledef.Usage); err != nil || after.Properties()["k"] != "v" || after.MetadataLocation() == loc {
		t.Fatalf("after the commit: %v, properties %v", err, after.Properties())
	}
	cc.Namespace = "other"
	if err := c.Commit(ctx, cc); !errors.Is(err, icebergout.ErrCatalogConflict) {
		t.Fatalf("commit for another namespace: %v", err)
	}
}

// createUsage registers the usage table in c, with no snapshot, at the
// local directory dir, as a run's first commit does.
func createUsage(t *testing.T, c *Catalog, dir string) *table.Table {
	t.Helper()
	sc, err := icebergout.Schema(tabledef.Usage)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := icebergout.Spec(tabledef.Usage, sc, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := c.CreateTable(context.Background(), tabledef.Usage, sc, spec, "file://"+dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// catalogFiles returns the names of the catalog's metadata files
// (icebergout.IsCatalogMetadata) in the metadata directory of the table
// at the local directory dir, sorted.
func catalogFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, icebergout.MetadataDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if icebergout.IsCatalogMetadata(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestCommitPrunesMetadata: with write.metadata.previous-versions-max 2
// set by the user through the catalog, four commits leave three of the
// catalog's metadata files (the current one and the two its log names),
// on a table CreateTable made and on one an earlier convbatch made
// without write.metadata.delete-after-commit.enabled (the first commit
// adds it); a user's false is kept and nothing is removed. A file that
// cannot be removed is a warning, never a line of the log package, and
// the commit still succeeds.
func TestCommitPrunesMetadata(t *testing.T) {
	const enabled = table.MetadataDeleteAfterCommitEnabledKey
	for _, tc := range []struct {
		name string
		// set and remove are the user's property changes after
		// CreateTable.
		set    iceberg.Properties
		remove []string
		// stuck turns the created metadata file into a directory that
		// cannot be removed.
		stuck       bool
		wantEnabled string
		wantFiles   int
		wantWarn    int
	}{
		{name: "new", set: iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "2"}, wantEnabled: "true", wantFiles: 3},
		{name: "earlier convbatch", set: iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "2"}, remove: []string{enabled}, wantEnabled: "true", wantFiles: 3},
		{name: "user disabled", set: iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "2", enabled: "false"}, wantEnabled: "false", wantFiles: 6},
		{name: "stuck file", set: iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "2"}, stuck: true, wantEnabled: "true", wantFiles: 4, wantWarn: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var warns []error
			c, err := Open(ctx, "sqlite://"+filepath.Join(dir, "catalog.db"), "", WithWarnings(func(err error) { warns = append(warns, err) }))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var logged bytes.Buffer
			log.SetOutput(&logged)
			defer log.SetOutput(os.Stderr)
			tdir := filepath.Join(dir, "usage")
			tbl := createUsage(t, c, tdir)
			if got := tbl.Properties()[enabled]; got != "true" {
				t.Fatalf("new table: %s = %q, want true", enabled, got)
			}
			created := tbl.MetadataLocation()
			// The user's change, through the catalog, as any Iceberg
			// tool makes it.
			tx := tbl.NewTransaction()
			if len(tc.remove) > 0 {
				if err := tx.RemoveProperties(tc.remove); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.SetProperties(tc.set); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.stuck {
				p := strings.TrimPrefix(created, "file://")
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			reqs, _ := json.Marshal([]table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())})
			for i := range 4 {
				ups, _ := json.Marshal([]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"night": strconv.Itoa(i)})})
				cc := icebergout.CatalogCommit{Table: tabledef.Usage, Namespace: icebergout.DefaultNamespace, Requirements: reqs, Updates: ups}
				if err := c.Commit(ctx, cc); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
				cur, err := c.LoadTable(ctx, tabledef.Usage)
				if err != nil {
					t.Fatalf("after commit %d: %v", i, err)
				}
				// The current file and every one its log names are
				// still there.
				for _, f := range append([]string{cur.MetadataLocation()}, logFiles(cur.Metadata())...) {
					if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
						t.Fatalf("after commit %d: %v", i, err)
					}
				}
			}
			cur, err := c.LoadTable(ctx, tabledef.Usage)
			if err != nil {
				t.Fatal(err)
			}
			p := cur.Properties()
			if p[enabled] != tc.wantEnabled || p[table.MetadataPreviousVersionsMaxKey] != "2" || p["night"] != "3" {
				t.Errorf("properties %v: want %s = %s and the user's previous-versions-max 2", p, enabled, tc.wantEnabled)
			}
			if got := catalogFiles(t, tdir); len(got) != tc.wantFiles {
				t.Errorf("catalog metadata files %v: %d, want %d", got, len(got), tc.wantFiles)
			}
			if len(warns) != tc.wantWarn {
				t.Errorf("warnings %v: %d, want %d", warns, len(warns), tc.wantWarn)
			}
			for _, w := range warns {
				if !strings.Contains(w.Error(), created) || !strings.Contains(w.Error(), "convbatch.usage") {
					t.Errorf("warning %q: want the file %s and the table named", w, created)
				}
			}
			if logged.Len() > 0 {
				t.Errorf("the log package was written to: %q", logged.String())
			}
		})
	}
}

// logFiles are the files the metadata log of m names.
func logFiles(m table.Metadata) []string {
	var out []string
	for e := range m.PreviousFiles() {
		out = append(out, e.MetadataFile)
	}
	return out
}
