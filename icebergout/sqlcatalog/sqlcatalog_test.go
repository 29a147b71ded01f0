package sqlcatalog

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

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
	sc, err := icebergout.Schema(tabledef.Usage)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := icebergout.Spec(tabledef.Usage, sc, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := c.CreateTable(ctx, tabledef.Usage, sc, spec, "file://"+filepath.Join(dir, "usage"), nil)
	if err != nil {
		t.Fatal(err)
	}
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
