package outdir

import (
	"strings"
	"testing"

	"github.com/convbatch/convbatch/icebergout"
)

// TestJournalCatalogValidate: a journal read back from OUT names only
// tables convbatch writes, in a one-level namespace, in its catalog
// commits; anything else is refused before any of it is carried out.
func TestJournalCatalogValidate(t *testing.T) {
	for _, tc := range []struct {
		cc   icebergout.CatalogCommit
		want string
	}{
		{icebergout.CatalogCommit{Table: "usage", Namespace: "convbatch"}, ""},
		{icebergout.CatalogCommit{Table: "secrets", Namespace: "convbatch"}, "not a table convbatch writes"},
		{icebergout.CatalogCommit{Table: "usage", Namespace: ""}, "not a table convbatch writes"},
		{icebergout.CatalogCommit{Table: "usage", Namespace: "a.b"}, "not a table convbatch writes"},
	} {
		j := &Journal{Run: 1, Report: "report.json", Catalog: []icebergout.CatalogCommit{tc.cc}}
		err := j.validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.cc, err, tc.want)
		}
	}
}

// TestIsCatalogMetadata: only a catalog's NNNNN-<uuid>.metadata.json in
// a table's metadata directory is exempt from check's unexpected files.
func TestIsCatalogMetadata(t *testing.T) {
	for rel, want := range map[string]bool{
		"tables/usage/metadata/00001-0f921c1c-fb0c-4bd9-bd5e-44cb77aed951.metadata.json": true,
		"tables/usage/metadata/v1.metadata.json":                                         false,
		"tables/usage/data/00001-0f921c1c-fb0c-4bd9-bd5e-44cb77aed951.metadata.json":     false,
		"rejects/metadata/00001-0f921c1c-fb0c-4bd9-bd5e-44cb77aed951.metadata.json":      false,
		"tables/usage/metadata/snap-1-0-0f921c1c-fb0c-4bd9-bd5e-44cb77aed951.avro":       false,
	} {
		if got := isCatalogMetadata(rel); got != want {
			t.Errorf("isCatalogMetadata(%s) = %v, want %v", rel, got, want)
		}
	}
}
