package cli

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/tabledef"
)

// TestObjectOutAudit: `convbatch audit s3://…` under a keyring revoking
// a key re-judges the receipts of an OUT on object storage and commits
// the changed verdicts as the next commit record, the same as the audit
// of a local OUT of the same nights (the tables of receipts, their
// latest verdicts); check passes; an audit that changes nothing commits
// nothing; an OUT whose tables are committed to a catalog is refused
// without --catalog, changing nothing, and audited with it, the catalog
// then at the audit's snapshots.
func TestObjectOutAudit(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	exp, err := gen.WriteNights(set, gen.NightsOptions{Nights: 2, FilesPerNight: 1, Conversations: 60, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(set, exp.Keys)
	n1, n2 := filepath.Join(set, "night-1"), filepath.Join(set, "night-2")
	var kr struct {
		Agents map[string]json.RawMessage `json:"agents"`
	}
	readJSON(t, keys, &kr)
	agents := slices.Sorted(maps.Keys(kr.Agents))
	revoked := revokeAgentKey(t, keys, agents[0], time.Unix(0, 0))
	scratch := filepath.Join(dir, "scratch")
	for _, format := range []string{"parquet", "iceberg"} {
		t.Run(format, func(t *testing.T) {
			local, url := filepath.Join(dir, "local-"+format), "s3://b/audit-"+format
			for _, out := range []string{local, url} {
				for _, nights := range [][]string{{n1}, {n1, n2}} {
					runOK(t, append([]string{"run", "-q", "--progress", "never", "--table-format", format, "--keys", keys, "--scratch-dir", scratch, "-o", out, "--incremental"}, nights...)...)
				}
				if r := convbatch(t, nil, "audit", out, "--keys", keys, "--scratch-dir", scratch); r.code != 0 || !strings.Contains(r.stderr, "nothing committed") {
					t.Fatalf("audit %s with the run's keyring: exit %d, %s", out, r.code, r.stderr)
				}
				r := convbatch(t, nil, "audit", out, "--keys", revoked, "--scratch-dir", scratch, "--findings-exit-code", "0")
				if r.code != 0 || strings.Contains(r.stdout, "changed verdicts: 0\n") {
					t.Fatalf("audit %s under the revoking keyring: exit %d, %s\n%s", out, r.code, firstLines(r.stdout, 5), r.stderr)
				}
				if out == url && !strings.Contains(r.stderr, "committed "+url+"/_commits/0000000003.json: run 3") {
					t.Errorf("audit of %s: %s", url, r.stderr)
				}
				checkOK(t, "after the audit", out)
			}
			got := filepath.Join(dir, "got-"+format)
			if format == "parquet" {
				downloadOut(t, url, got)
				sameTables(t, local, got, tabledef.Receipts, tabledef.ReceiptStatements)
				return
			}
			want := filepath.Join(dir, "want-"+format)
			localIcebergTables(t, local, want)
			icebergObjectTables(t, url, "", got)
			sameTables(t, want, got, tabledef.Receipts, tabledef.ReceiptStatements)
		})
	}
	// A catalog's OUT: refused without its catalog, nothing changed;
	// with it, the audit's run is committed to OUT and each table's
	// snapshot of it to the catalog.
	cat, uri := "s3://b/audit-catalog", catalogURI(t, "sqlite", dir)
	runOK(t, "run", "-q", "--progress", "never", "--table-format", "iceberg", "--catalog", uri, "--keys", keys, "--scratch-dir", scratch, "-o", cat, n1)
	if r := convbatch(t, nil, "audit", cat, "--keys", revoked, "--scratch-dir", scratch); r.code != ExitUsage || !strings.Contains(r.stderr, "pass the --catalog") {
		t.Errorf("audit of a catalog's OUT without --catalog: exit %d, %s", r.code, r.stderr)
	}
	if r := convbatch(t, nil, "check", cat); r.code != 0 || !strings.Contains(r.stderr, "commit 1 (run 1)") {
		t.Errorf("check after a refused audit: exit %d, %s", r.code, r.stderr)
	}
	r := convbatch(t, nil, "audit", cat, "--keys", revoked, "--scratch-dir", scratch, "--catalog", uri)
	if r.code != ExitFindings || !strings.Contains(r.stderr, "committed "+cat+"/_commits/0000000002.json: run 2") {
		t.Fatalf("audit --catalog of a catalog's OUT: exit %d, %s", r.code, r.stderr)
	}
	if r := convbatch(t, nil, "check", cat); r.code != 0 || !strings.Contains(r.stderr, "commit 2 (run 2)") {
		t.Errorf("check after the audit: exit %d, %s", r.code, r.stderr)
	}
	icebergObjectTables(t, cat, uri, filepath.Join(dir, "got-catalog"))
	// Run 1's snapshot and the audit's, the current one.
	catalogAtRun(t, uri, 2, 2)
}
