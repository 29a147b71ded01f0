package cli

import (
	"path/filepath"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
)

// TestObjectOutReport: night 1, then one input changed and taken again
// with --replace-changed, into s3:// and into a local OUT, as Parquet
// datasets and as Iceberg tables (whose replaced data files stay for
// time travel: the record names them, the current snapshot does not):
// `convbatch report s3://…` prints what `report` of the local OUT
// prints, as a table and as JSON; the Iceberg OUT's tables, read through
// the record's metadata, equal the local OUT's current snapshot.
func TestObjectOutReport(t *testing.T) {
	objoutS3(t)
	dir := t.TempDir()
	keys, in, change := replaceChangedInputs(t, dir)
	scratch := filepath.Join(dir, "scratch")
	outs := map[string][2]string{}
	for _, format := range []string{"parquet", "iceberg"} {
		outs[format] = [2]string{filepath.Join(dir, "local-"+format), "s3://b/report-" + format}
		for _, out := range outs[format] {
			runOK(t, "run", "--progress", "never", "--keys", keys, "--table-format", format, "--scratch-dir", scratch, "-o", out, in)
		}
	}
	change()
	for format, pair := range outs {
		for _, out := range pair {
			runOK(t, "run", "--progress", "never", "--keys", keys, "--table-format", format, "--scratch-dir", scratch, "-o", out, "--incremental", "--replace-changed", in)
			checkOK(t, format+" after --replace-changed", out)
		}
		for _, args := range [][]string{{"report"}, {"report", "--format", "json", "--by", "provider,day"}} {
			local := convbatch(t, nil, append(args, pair[0])...)
			obj := convbatch(t, nil, append(args, pair[1])...)
			if local.code != 0 || obj.code != 0 || local.stdout == "" || obj.stdout != local.stdout {
				t.Errorf("%s %v: exit %d and %d; s3:\n%s\nlocal:\n%s\n%s", format, args, obj.code, local.code, obj.stdout, local.stdout, obj.stderr)
			}
		}
		if format == "iceberg" {
			want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
			localIcebergTables(t, pair[0], want)
			icebergObjectTables(t, pair[1], "", got)
			sameTables(t, want, got, tabledef.Names...)
		}
	}
}
