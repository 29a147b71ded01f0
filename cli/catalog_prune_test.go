package cli

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// setCatalogProperties sets props on every table of the catalog at uri,
// as a user does with any Iceberg tool: a commit through the catalog
// (iceberg-go's Transaction). out is the OUT, whose store iceberg-go
// then writes the new metadata file in when it is a URL.
func setCatalogProperties(t *testing.T, uri, out string, props iceberg.Properties) {
	t.Helper()
	ctx := context.Background()
	if objout.IsURL(out) {
		tg, err := objout.Open(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		objout.RegisterIO(tg)
	}
	cat := testCatalog(t, uri)
	defer cat.Close()
	for _, name := range tabledef.Names {
		tbl, err := cat.LoadTable(ctx, name)
		if err != nil || tbl == nil {
			t.Fatalf("catalog table %s: %v", name, err)
		}
		tx := tbl.NewTransaction()
		if err := tx.SetProperties(props); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatalf("catalog table %s: setting %v: %v", name, props, err)
		}
	}
}

// catalogMetadataFiles returns, by table, the names of the metadata
// files a catalog wrote (icebergout.IsCatalogMetadata) in the table's
// metadata directory of the OUT out, local or on object storage.
func catalogMetadataFiles(t *testing.T, out string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	if !objout.IsURL(out) {
		for _, name := range tabledef.Names {
			ents, err := os.ReadDir(filepath.Join(out, filepath.FromSlash(outdir.TableDir(name)), icebergout.MetadataDir))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if icebergout.IsCatalogMetadata(e.Name()) {
					got[name] = append(got[name], e.Name())
				}
			}
		}
		return got
	}
	ctx := context.Background()
	tg, err := objout.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tabledef.Names {
		prefix := tg.Prefix + outdir.TableDir(name) + "/" + icebergout.MetadataDir + "/"
		err := tg.Store.List(ctx, prefix, func(o objout.Object) error {
			if rest, ok := strings.CutPrefix(o.Key, prefix); ok && icebergout.IsCatalogMetadata(rest) {
				got[name] = append(got[name], rest)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// TestCatalogPrunesMetadata: an OUT whose tables a catalog (SQLite)
// holds, their write.metadata.previous-versions-max set to 2 through the
// catalog after the first night, keeps three of the catalog's
// NNNNN-<uuid>.metadata.json per table (the current one and the two its
// log names) over four nights, locally and on object storage (S3 and
// Cloud Storage test servers): the catalog removes the others as it
// commits. Every table reads back through the catalog, at the fourth
// night's snapshot with all four, and check accepts OUT.
func TestCatalogPrunesMetadata(t *testing.T) {
	objoutS3(t)
	gcstest.Start(t).Bucket(t, "g")
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	keys, nights := writeNights(t, set, gen.NightsOptions{Nights: 4, FilesPerNight: 1, Conversations: 50, Seed: 11})
	for _, out := range []string{filepath.Join(dir, "local"), "s3://" + objoutBucket + "/ice", "gs://g/ice"} {
		kind := "local"
		if objout.IsURL(out) {
			kind = out[:2]
		}
		t.Run(kind, func(t *testing.T) {
			uri := catalogURI(t, "sqlite", t.TempDir())
			for n := 1; n <= len(nights); n++ {
				runOK(t, slices.Concat([]string{"run", "-q", "--keys", keys, "--incremental", "--table-format", "iceberg", "--catalog", uri, "--scratch-dir", dir, "-o", out}, nights[:n])...)
				if n == 1 {
					setCatalogProperties(t, uri, out, iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "2"})
				}
				for _, name := range tabledef.Names {
					if got := catalogMetadataFiles(t, out)[name]; len(got) != 3 {
						t.Fatalf("after night %d: table %s: %d catalog metadata files %v, want 3 (current and 2 previous)", n, name, len(got), got)
					}
				}
			}
			catalogAtRun(t, uri, 4, 4)
			cat := testCatalog(t, uri)
			defer cat.Close()
			for _, name := range tabledef.Names {
				tbl, err := cat.LoadTable(context.Background(), name)
				if err != nil {
					t.Fatal(err)
				}
				p := tbl.Properties()
				if p[table.MetadataDeleteAfterCommitEnabledKey] != "true" || p[table.MetadataPreviousVersionsMaxKey] != "2" {
					t.Errorf("table %s: properties %v, want delete-after-commit true and the user's previous-versions-max 2", name, p)
				}
				if want := path.Base(tbl.MetadataLocation()); !slices.Contains(catalogMetadataFiles(t, out)[name], want) {
					t.Errorf("table %s: its current metadata file %s is gone", name, want)
				}
			}
			if objout.IsURL(out) {
				icebergObjectTables(t, out, uri, filepath.Join(t.TempDir(), "got"))
			} else {
				ref := filepath.Join(dir, "ref")
				runOK(t, slices.Concat([]string{"run", "-q", "-o", ref, "--keys", keys}, nights)...)
				checkCatalog(t, uri, out, ref, 1, 4)
			}
			checkOK(t, "after four nights", out)
		})
	}
}
