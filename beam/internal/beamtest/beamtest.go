// Package beamtest holds what the Beam module's tests share: the inputs
// they run convbeam on (Nights), convbatch run in process as the reference
// (ConvbatchRun) and the comparison of two output directories
// (CompareOutputs).
package beamtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// Store is an object store's test server (s3test.Server, for one) that
// a test puts objects in.
type Store interface {
	Put(t testing.TB, bucket, key string, data []byte)
}

// NightsIn writes Nights' inputs under dir and puts each into bucket of
// store under its path below dir, and the keyring as keys.json. It
// returns the inputs' local paths, the keyring's and the inputs' URLs
// (scheme://bucket/path), sorted.
func NightsIn(t testing.TB, store Store, scheme, bucket, dir string) (inputs []string, keys string, urls []string) {
	t.Helper()
	inputs, keys = Nights(t, dir)
	for _, p := range append(inputs, keys) {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if p == keys {
			rel = "keys.json"
		} else {
			urls = append(urls, scheme+"://"+bucket+"/"+filepath.ToSlash(rel))
		}
		store.Put(t, bucket, filepath.ToSlash(rel), b)
	}
	return inputs, keys, urls
}

// ConvbatchRun runs `convbatch run` in process on the inputs.
func ConvbatchRun(t testing.TB, out string, args ...string) {
	t.Helper()
	var stderr bytes.Buffer
	code := cli.Main(append([]string{"run", "-o", out, "--progress", "never"}, args...), nil, io.Discard, &stderr)
	if code > 1 {
		t.Fatalf("convbatch run: exit %d: %s", code, stderr.String())
	}
}

// Nights writes a gen archive set with faults and tampered receipts over
// two nights (receipts reference documents of other files), and turns one
// file into plain JSONL so that it is read in byte-range shards. It
// returns the inputs, sorted, and the keyring.
func Nights(t testing.TB, dir string) ([]string, string) {
	t.Helper()
	var stderr bytes.Buffer
	if code := cli.Main([]string{"gen", "-o", dir, "--nights", "2", "--files-per-night", "2", "--conversations", "120",
		"--faults", "0.06", "--tamper", "0.3", "--max-doc-bytes", "1MiB", "--seed", "7", "--progress", "never"}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	zst := filepath.Join(dir, "night-1", "a.jsonl.zst")
	plain := strings.TrimSuffix(zst, ".zst")
	unzstd(t, zst, plain)
	os.Remove(zst)
	// A zstd input whose last frame fails its content checksum: its
	// records are input-checksum rejects, the input is read again.
	damaged := filepath.Join(dir, "night-2", "a.jsonl.zst")
	zb, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	zb[len(zb)-1] ^= 0xff
	os.WriteFile(damaged, zb, 0o644)
	// One input in gzip, and two .json inputs (one document, pretty-printed,
	// and one that is not JSON): shapes read whole.
	zst = filepath.Join(dir, "night-2", "b.jsonl.zst")
	regzip(t, zst, strings.TrimSuffix(zst, ".zst")+".gz")
	os.Remove(zst)
	doc := "{\n  \"id\": \"pretty-1\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"}\n  ]\n}\n"
	os.WriteFile(filepath.Join(dir, "night-2", "c.json"), []byte(doc), 0o644)
	os.WriteFile(filepath.Join(dir, "night-2", "d.json"), []byte("{\"id\": \"broken\", \"messages\": [\n"), 0o644)
	all, err := filepath.Glob(filepath.Join(dir, "night-*", "*.json*"))
	var inputs []string
	for _, p := range all {
		if !strings.HasSuffix(p, ".expect.json") {
			inputs = append(inputs, p)
		}
	}
	if err != nil || len(inputs) != 6 {
		t.Fatalf("inputs %v: %v", inputs, err)
	}
	sort.Strings(inputs)
	return inputs, filepath.Join(dir, "keys.json")
}

// regzip writes the zstd file from as the gzip file to.
func regzip(t testing.TB, from, to string) {
	t.Helper()
	plain := Decompress(t, from)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(plain)
	zw.Close()
	if err := os.WriteFile(to, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func unzstd(t testing.TB, from, to string) {
	t.Helper()
	if err := os.WriteFile(to, Decompress(t, from), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CompareOutputs checks that two output directories hold the same job's
// results (file names of parts aside).
func CompareOutputs(t testing.TB, want, got string) {
	t.Helper()
	wr, gr := ReadReport(t, want), ReadReport(t, got)
	if !gr.AccountingOK {
		t.Error("accounting_ok false")
	}
	for _, c := range []struct {
		name   string
		wv, gv any
	}{
		{"totals", wr.Totals, gr.Totals},
		{"rejects_by_reason", wr.RejectsByReason, gr.RejectsByReason},
		{"warnings", wr.Warnings, gr.Warnings},
		{"extensions", wr.Extensions, gr.Extensions},
		{"transcripts", wr.Transcripts, gr.Transcripts},
		{"receipts.valid", wr.Receipts.Valid, gr.Receipts.Valid},
		{"receipts.invalid", wr.Receipts.Invalid, gr.Receipts.Invalid},
		{"receipts.incomplete", wr.Receipts.Incomplete, gr.Receipts.Incomplete},
		{"receipts.statements_invalid", wr.Receipts.StatementsInvalid, gr.Receipts.StatementsInvalid},
		{"receipts.reasons", wr.Receipts.Reasons, gr.Receipts.Reasons},
		{"inputs", StripArchive(wr.Inputs), StripArchive(gr.Inputs)},
		{"outputs.archives", wr.Outputs.Archives, gr.Outputs.Archives},
	} {
		if !reflect.DeepEqual(c.wv, c.gv) {
			t.Errorf("report %s: convbeam %+v, convbatch run %+v", c.name, c.gv, c.wv)
		}
	}
	if wr.Totals.Rejects == 0 || wr.Receipts.Invalid == 0 || wr.Receipts.Valid == 0 || wr.RejectsByReason["input-checksum"] == 0 {
		t.Fatalf("the inputs exercise too little: %+v %+v", wr.Totals, wr.Receipts)
	}
	for name, tc := range wr.Tables {
		if gr.Tables[name].Rows != tc.Rows {
			t.Errorf("table %s: %d rows, convbatch run %d", name, gr.Tables[name].Rows, tc.Rows)
		}
		wt, gt := pqtest.ReadDataset(t, want, name), pqtest.ReadDataset(t, got, name)
		if tc.Rows == 0 && wt.Schema == nil && gt.Schema == nil {
			continue // an Iceberg table without rows has no data file
		}
		pqtest.CheckSchema(t, gt)
		if name == tabledef.Receipts {
			witnessAside(t, wt, gt)
		}
		if !reflect.DeepEqual(RowStrings(wt), RowStrings(gt)) {
			t.Errorf("table %s: rows differ from convbatch run's", name)
		}
	}
	for _, rel := range []string{outdir.ReceiptsFile, outdir.RejectsIndexFile, outdir.RejectsDataFile} {
		wb, _ := os.ReadFile(filepath.Join(want, rel))
		gb, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || !bytes.Equal(wb, gb) {
			t.Errorf("%s: differs from convbatch run's (%d and %d bytes, %v)", rel, len(gb), len(wb), err)
		}
	}
	for _, a := range wr.Outputs.Archives {
		if !bytes.Equal(Decompress(t, filepath.Join(want, a)), Decompress(t, filepath.Join(got, a))) {
			t.Errorf("%s: documents differ from convbatch run's", a)
		}
	}
}

// witnessAside blanks the receipts' first_committed_at, a time of each
// OUT's own commit, in both tables, once got's is known to be set exactly
// where its first_run is; and first_run in got where want's is null (a
// convbatch run that does not record first witnesses yet).
// TODO(J, h43-judge): once convbatch run fills first_run, compare it
// always.
func witnessAside(t testing.TB, want, got *pqtest.Table) {
	t.Helper()
	run, at := got.Col(t, tabledef.ColFirstRun), got.Col(t, tabledef.ColFirstCommittedAt)
	for i, r := range got.Rows {
		if (r[run] == nil) != (r[at] == nil) {
			t.Errorf("receipts row %d: first_run %v, first_committed_at %v: want both or neither", i, r[run], r[at])
		}
	}
	wantRun := want.Col(t, tabledef.ColFirstRun)
	filled := false
	for _, r := range want.Rows {
		filled = filled || r[wantRun] != nil
	}
	for _, tb := range []*pqtest.Table{want, got} {
		for _, r := range tb.Rows {
			r[at] = nil
			if !filled {
				r[run] = nil
			}
		}
	}
}

func StripArchive(in []sink.InputReport) []sink.InputReport {
	out := make([]sink.InputReport, len(in))
	for i, r := range in {
		r.Archive = ""
		out[i] = r
	}
	return out
}

func ReadReport(t testing.TB, out string) *sink.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, outdir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	r := new(sink.Report)
	if err := json.Unmarshal(b, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// RowStrings is a table's rows as sorted strings: the rows as a multiset.
func RowStrings(tb *pqtest.Table) []string {
	out := make([]string, len(tb.Rows))
	for i, r := range tb.Rows {
		out[i] = fmt.Sprintf("%#v", r)
	}
	sort.Strings(out)
	return out
}

func Decompress(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil)
	defer d.Close()
	plain, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return plain
}

// IcebergTable reads the latest metadata of the Iceberg table whose
// directory is dir (a location: a file:// URI, or a URL that fsys reads)
// with iceberg-go, as any reader by path does; version is its number.
func IcebergTable(t testing.TB, dir string, version int, fsys icebergio.IO) *table.Table {
	t.Helper()
	loc := icebergout.BaseLocation(dir, icebergout.MetadataFile(version))
	fsF := func(context.Context) (icebergio.IO, error) { return fsys, nil }
	tbl, err := table.NewFromLocation(context.Background(), table.Identifier{path.Base(dir)}, loc, fsF, nil)
	if err != nil {
		t.Fatalf("iceberg table %s: %v", loc, err)
	}
	return tbl
}

// IcebergRows is the rows of the current snapshot of tbl, read by
// iceberg-go's scan, each as a JSON object, sorted: the rows as a
// multiset.
// WithoutWitness is rows of the receipts table (IcebergRows) without
// first_run and first_committed_at: when and in which run each OUT first
// committed a receipt is its own (the parquet comparison, CompareOutputs,
// holds first_run to convbatch run's).
func WithoutWitness(t testing.TB, rows []string) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		delete(m, tabledef.ColFirstRun)
		delete(m, tabledef.ColFirstCommittedAt)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

func IcebergRows(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	_, records, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("scan %s: %v", tbl.Location(), err)
	}
	var b bytes.Buffer
	for rec, err := range records {
		if err != nil {
			t.Fatalf("scan %s: %v", tbl.Location(), err)
		}
		err = array.RecordToJSON(rec, &b)
		rec.Release()
		if err != nil {
			t.Fatalf("scan %s: %v", tbl.Location(), err)
		}
	}
	rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if b.Len() == 0 {
		rows = []string{}
	}
	sort.Strings(rows)
	return rows
}
