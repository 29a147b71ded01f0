package objout

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/icebergout"
)

// TestLocator: the locations the run's Iceberg metadata names files by,
// and back: a file of the base commit by its key there, a new file by
// its run-unique key, a table's directory by its path, a file iceberg-go
// names itself (a manifest) by its path, stored under it.
func TestLocator(t *testing.T) {
	const base, run = "s3://b/out", "00112233aabbccdd"
	l := &locator{base: base, runID: run,
		keys:    map[string]string{"tables/usage/metadata/v1.metadata.json": "tables/usage/metadata/v1-ffeeddccbbaa9988.metadata.json"},
		paths:   map[string]string{"tables/usage/metadata/v1-ffeeddccbbaa9988.metadata.json": "tables/usage/metadata/v1.metadata.json"},
		located: map[string]string{}, carried: map[string]bool{}}
	for _, tc := range []struct{ rel, loc string }{
		{"tables/usage", base + "/tables/usage"},
		{"tables/usage/metadata/v1.metadata.json", base + "/tables/usage/metadata/v1-ffeeddccbbaa9988.metadata.json"},
		{"tables/usage/metadata/v2.metadata.json", base + "/tables/usage/metadata/v2-" + run + ".metadata.json"},
		{"tables/usage/data/part-v000002-00000.parquet", base + "/tables/usage/data/" + run + ".part-v000002-00000.parquet"},
	} {
		if got := l.Location(tc.rel); got != tc.loc {
			t.Errorf("Location(%s) = %s, want %s", tc.rel, got, tc.loc)
		}
		if got, ok := l.Rel(tc.loc); !ok || got != tc.rel {
			t.Errorf("Rel(%s) = %s %v, want %s", tc.loc, got, ok, tc.rel)
		}
	}
	for _, tc := range []struct {
		loc, rel string
		ok       bool
	}{
		// Another run's key: the path is the name less the run id.
		{base + "/tables/usage/data/0123456789abcdef.part-v000001-00000.parquet", "tables/usage/data/part-v000001-00000.parquet", true},
		// iceberg-go's own name: the path is the key.
		{base + "/tables/usage/metadata/snap-1-0-uuid.avro", "tables/usage/metadata/snap-1-0-uuid.avro", true},
		{base + "/tables/usage/metadata/v7-0123456789abcdef.metadata.json", "tables/usage/metadata/v7.metadata.json", true},
		{"s3://b/other/tables/usage/x", "", false},
		{"s3://b/out2/tables/usage/x", "", false},
	} {
		if got, ok := l.Rel(tc.loc); ok != tc.ok || got != tc.rel {
			t.Errorf("Rel(%s) = %q %v, want %q %v", tc.loc, got, ok, tc.rel, tc.ok)
		}
	}
	for rel, want := range map[string]string{
		"tables/usage/metadata/snap-1-0-uuid.avro":        "tables/usage/metadata/snap-1-0-uuid.avro",
		"tables/usage/metadata/v2.metadata.json":          "tables/usage/metadata/v2-" + run + ".metadata.json",
		"tables/usage/metadata/version-hint.text":         "tables/usage/metadata/" + run + ".version-hint.text",
		"tables/receipts/data/part-v000002-00000.parquet": "tables/receipts/data/" + run + ".part-v000002-00000.parquet",
	} {
		if got := l.keyFor(rel, run); got != want {
			t.Errorf("keyFor(%s) = %s, want %s", rel, got, want)
		}
	}
	// A carried file committed under another key: the metadata would
	// name the wrong object.
	if err := l.checkLocated([]File{{Path: "tables/usage/metadata/v1.metadata.json", Key: "tables/usage/metadata/v1-ffeeddccbbaa9988.metadata.json"}}); err != nil {
		t.Errorf("carried file under its key: %v", err)
	}
	if err := l.checkLocated([]File{{Path: "tables/usage/metadata/v1.metadata.json", Key: "tables/usage/metadata/v1-" + run + ".metadata.json"}}); err == nil || !strings.Contains(err.Error(), "rewritten in place") {
		t.Errorf("carried file under another key: %v", err)
	}
}

// TestIsRunKey: gc's candidates are the run-unique keys and an Iceberg
// table's manifests, never a record, a catalog's metadata file or a
// user's object.
func TestIsRunKey(t *testing.T) {
	for key, want := range map[string]bool{
		"tables/usage/0011223344556677.part-00000.parquet":                               true,
		"0011223344556677.report.json":                                                   true,
		"tables/usage/metadata/snap-5-0-0f0e0d0c.avro":                                   true,
		"tables/usage/metadata/0f0e0d0c-m0.avro":                                         true,
		"tables/usage/metadata/00003-0f0e0d0c-1111-2222-3333-444455556666.metadata.json": false,
		"tables/usage/data/x.avro":                                                       false,
		"notes/metadata/x.avro":                                                          false,
		"report.json":                                                                    false,
		"tables/usage/0011223344556677report.json":                                       false,
		"tables/usage/001122334455667G.part.parquet":                                     false,
	} {
		if got := isRunKey(key); got != want {
			t.Errorf("isRunKey(%s) = %v, want %v", key, got, want)
		}
	}
}

// TestStoreIO: the file IO an Iceberg catalog reads and writes OUT's
// metadata through, on the S3 test server: a file written is read back,
// a second write of the same key is refused (put-if-absent), a missing
// one is fs.ErrNotExist, a location outside the bucket is refused.
func TestStoreIO(t *testing.T) {
	newS3(t)
	tg := openT(t)
	RegisterIO(tg)
	fsys := tg.IO().(*storeIO)
	loc := "s3://b/night/out/tables/usage/metadata/00001-x.metadata.json"
	if err := fsys.WriteFile(loc, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := fsys.ReadFile(loc); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("read back: %q %v", b, err)
	}
	f, err := fsys.Open(loc)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 7 {
		t.Errorf("stat: %v %v", st, err)
	}
	f.Close()
	if err := fsys.WriteFile(loc, []byte(`{"a":2}`)); !errors.Is(err, ErrPrecondition) {
		t.Errorf("second write: %v, want a refusal", err)
	}
	w, err := fsys.Create("s3://b/night/out/tables/usage/metadata/00002-x.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("{}"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open("s3://b/night/out/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing object: %v", err)
	}
	if _, err := fsys.Open("s3://other/x"); err == nil {
		t.Error("a location in another bucket was read")
	}
	if err := fsys.Remove(loc); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(loc); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed object: %v", err)
	}
}

// TestDeferredCatalog: the local commit's catalog commits are written
// down in the scratch directory, one per table (a recovery's second
// commit replaces the first), and the commit record carries them.
func TestDeferredCatalog(t *testing.T) {
	newS3(t)
	tg := openT(t)
	ctx := context.Background()
	s, err := tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.DeferCatalog(nil)
	for _, cc := range []struct {
		table string
		id    int64
	}{{"usage", 1}, {"receipts", 2}, {"usage", 3}} {
		if err := d.Commit(ctx, catalogCommit(cc.table, cc.id)); err != nil {
			t.Fatal(err)
		}
	}
	writeNight(t, s.Out, 1, "n1")
	c, err := s.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Catalog) != 2 || c.Catalog[0].Table != "receipts" || c.Catalog[1].SnapshotID != 3 {
		t.Errorf("the record's catalog commits: %+v", c.Catalog)
	}
	back, err := tg.ReadCommit(ctx, 1)
	if err != nil || len(back.Catalog) != 2 {
		t.Fatalf("read back: %+v %v", back, err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, pendingCatalogFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the pending commits outlive the record: %v", err)
	}
}

// catalogCommit is a commit of table to snapshot id, as the local
// commit hands it to the catalog.
func catalogCommit(table string, id int64) icebergout.CatalogCommit {
	return icebergout.CatalogCommit{Table: table, Namespace: icebergout.DefaultNamespace, SnapshotID: id,
		Requirements: []byte("[]"), Updates: []byte("[]")}
}

// FuzzPathOfKey: pathOfKey never panics on a key listed from the store,
// and inverts runKey: a path's run-unique key gives the path back.
func FuzzPathOfKey(f *testing.F) {
	for _, s := range []string{"tables/usage/metadata/v2.metadata.json", "archive/a.jsonl.zst", "report.json",
		"tables/usage/data/part-v000001-00000.parquet", "x/v0.metadata.json", "v12-0011223344556677.metadata.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		pathOfKey(rel)
		if !cleanRel(rel) {
			return
		}
		const run = "0123456789abcdef"
		key := runKey(run, rel)
		if got, ok := pathOfKey(key); !ok || got != rel {
			t.Fatalf("pathOfKey(runKey(%q)) = %q %v", rel, got, ok)
		}
	})
}
