// Package crashtest checks convbatch's crash-consistency property
// (docs/FORMAT.md; issue 10): a run of `convbatch run` killed at any
// instant, its commit and its recovery included, then rerun with the same
// command, leaves under OUT the same files with the same contents as one
// uninterrupted run.
//
// The package holds the comparison, usable by any test: Snapshot reads an
// output directory into a map from relative path to normalized content,
// and Diff names the first difference between two snapshots (for a Parquet
// file, whether its rows differ or only its bytes). The property test
// itself (crashtest_test.go) builds the binary, kills it with SIGKILL at
// random instants and at the crash points CONVBATCH_CRASH names, sends it
// SIGINT and SIGTERM, and compares each trial's OUT with the reference;
// see that file for how to run it.
package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/tabledef"
)

// ReportTimeKeys are the members removed, at any depth, from report.json
// and from every JSON file under reports/ before they are compared: they
// differ from run to run.
var ReportTimeKeys = []string{"started_at", "finished_at", "duration_seconds", "signature_cache"}

// Ignored are the entries (relative, slash-separated paths, directories
// with a trailing "/") that Snapshot leaves out: the lock file, which a
// later run may keep, and the directory .convbatch itself (not what it
// holds).
var Ignored = []string{".convbatch/lock", ".convbatch/"}

// Snapshot returns every entry under dir by its slash-separated path
// relative to dir: a regular file's content, a directory as "path/" with a
// nil value (so that a leftover empty staging directory counts), anything
// else as "path@" with its mode. report.json and the JSON files under
// reports/ are normalized: the ReportTimeKeys members removed, the rest
// re-marshalled with sorted keys. Paths in Ignored are left out.
func Snapshot(dir string) (map[string][]byte, error) {
	snap := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		for _, ig := range Ignored {
			if rel == ig {
				return nil
			}
		}
		switch {
		case d.IsDir():
			snap[rel] = nil
			return nil
		case !d.Type().IsRegular():
			snap[rel+"@"] = []byte(d.Type().String())
			return nil
		}
		if key, b, ok, err := icebergEntry(dir, rel); ok || err != nil {
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if b == nil {
				b = append(snap[key], '.') // the count of such files
			}
			snap[key] = b
			return nil
		}
		if rel == outdir.HistoryHashesRel || rel == outdir.CheckpointRel {
			snap[rel] = historyEntry(dir, rel)
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if isReport(rel) {
			if b, err = NormalizeReport(b); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		if isManifest(rel) {
			if b, err = NormalizeManifest(b); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		if isCommitTimed(rel) {
			if b, err = NormalizeCommitTime(b); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		snap[rel] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// historyEntry is what Snapshot holds for a file of OUT's history (rel):
// its tree and checkpoint hash the manifests, whose reports' times differ
// from run to run, and the tree's origin is random; so the entry says how
// many runs OUT's manifests record and what differs between the file and
// the tree recomputed from them ("intact" when nothing does).
func historyEntry(dir, rel string) []byte {
	rec, problems := outdir.ReadRecord(dir)
	if len(problems) > 0 {
		return fmt.Appendf(nil, "%d runs; record: %v", rec.LastRun, problems)
	}
	_, problems = outdir.ReadHistory(dir, rec, "")
	var mine []string
	for _, p := range problems {
		if p.Path == rel {
			mine = append(mine, p.String())
		}
	}
	if len(mine) == 0 {
		return fmt.Appendf(nil, "%d runs; intact", rec.LastRun)
	}
	return fmt.Appendf(nil, "%d runs; %s", rec.LastRun, strings.Join(mine, "; "))
}

// isReport reports whether rel is a report Snapshot normalizes.
func isReport(rel string) bool {
	return rel == "report.json" || strings.HasPrefix(rel, "reports/") && strings.HasSuffix(rel, ".json")
}

// isManifest reports whether rel is a run's manifest.
func isManifest(rel string) bool {
	return strings.HasPrefix(rel, ".convbatch/state/manifests/") && strings.HasSuffix(rel, ".json")
}

// isCommitTimed reports whether rel is a Parquet file of the receipts
// table, whose first_committed_at column holds the time of the run that
// first committed each receipt.
func isCommitTimed(rel string) bool {
	return strings.HasPrefix(rel, "tables/"+tabledef.Receipts+"/") && strings.HasSuffix(rel, ".parquet")
}

// NormalizeCommitTime returns the rows of the receipts table part b (its
// schema, then a row a line, as ParquetRows gives them) with every
// first_committed_at left out: it is the commit time of a run, which
// differs from run to run as the reports' times do.
func NormalizeCommitTime(b []byte) ([]byte, error) {
	schema, rows, err := ParquetRows(b)
	if err != nil {
		return nil, err
	}
	col := -1
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	if idx := sc.FieldIndices(tabledef.ColFirstCommittedAt); len(idx) == 1 {
		col = idx[0]
	}
	out := []byte("rows of " + schema + "\n")
	for _, r := range rows {
		if col >= 0 {
			var cells []json.RawMessage
			if err := json.Unmarshal([]byte(r), &cells); err != nil {
				return nil, err
			}
			cells[col] = json.RawMessage("null")
			nb, err := json.Marshal(cells)
			if err != nil {
				return nil, err
			}
			r = string(nb)
		}
		out = append(append(out, r...), '\n')
	}
	return out, nil
}

// NormalizeManifest returns the manifest b without its committed_at and
// without the sizes and digests of the reports it records (their times
// differ from run to run, as ReportTimeKeys say), of the receipts table's
// parts (their first_committed_at: NormalizeCommitTime) and of the Iceberg
// metadata files (random ids and times; the Avro ones, named by UUID, by
// their directory only), re-marshalled with sorted keys.
func NormalizeManifest(b []byte) ([]byte, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	delete(m, "committed_at")
	files, _ := m["files"].([]any)
	for _, f := range files {
		if rec, ok := f.(map[string]any); ok {
			p, _ := rec["path"].(string)
			if isReport(p) || icebergMetadata.MatchString(p) || isCommitTimed(p) {
				delete(rec, "size")
				delete(rec, "sha256")
			}
			if icebergMetadata.MatchString(p) && strings.HasSuffix(p, ".avro") {
				rec["path"] = path.Dir(p) + "/*.avro"
			}
		}
	}
	return json.Marshal(m)
}

// NormalizeReport returns the JSON document b with the ReportTimeKeys
// members removed at any depth, re-marshalled with sorted keys (numbers
// kept as written).
func NormalizeReport(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	strip(v)
	return json.MarshalIndent(v, "", " ")
}

func strip(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range ReportTimeKeys {
			delete(x, k)
		}
		for _, e := range x {
			strip(e)
		}
	case []any:
		for _, e := range x {
			strip(e)
		}
	}
}

// Diff compares the snapshot got with want and returns "" when they are
// equal, else a description of up to ten differences, the first
// differing path (in path order) first: a path missing or unexpected, or
// how its content differs. A Parquet file whose bytes differ is also read
// back, to say whether its rows differ or only its bytes.
func Diff(want, got map[string][]byte) string {
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var diffs []string
	n := 0
	for _, p := range paths {
		w, inWant := want[p]
		g, inGot := got[p]
		var d string
		switch {
		case !inGot:
			d = p + ": missing"
		case !inWant:
			d = p + ": unexpected (not in the reference)"
		case !bytes.Equal(w, g):
			d = p + ": " + contentDiff(p, w, g)
		default:
			continue
		}
		n++
		if len(diffs) < 10 {
			diffs = append(diffs, d)
		}
	}
	if n == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of %d paths differ; first: %s", n, len(paths), strings.Join(diffs, "\n  "))
	if n > len(diffs) {
		s += fmt.Sprintf("\n  ... and %d more", n-len(diffs))
	}
	return s
}

// contentDiff describes how the contents w (wanted) and g of path p differ.
func contentDiff(p string, w, g []byte) string {
	if path.Ext(p) == ".parquet" {
		return parquetDiff(w, g)
	}
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	s := fmt.Sprintf("%d bytes, want %d; first difference at byte %d", len(g), len(w), i)
	if isText(p) {
		line := 1 + bytes.Count(w[:i], []byte("\n"))
		s += fmt.Sprintf(" (line %d): got %q, want %q", line, lineAt(g, i), lineAt(w, i))
	}
	return s
}

func isText(p string) bool {
	switch path.Ext(p) {
	case ".json", ".jsonl", ".txt", ".md":
		return true
	}
	return false
}

// lineAt returns the line of b holding offset i, cut to 200 bytes.
func lineAt(b []byte, i int) string {
	i = min(i, len(b))
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := bytes.IndexByte(b[i:], '\n')
	if end < 0 {
		end = len(b)
	} else {
		end += i
	}
	l := b[start:end]
	if len(l) > 200 {
		l = append(l[:200:200], "..."...)
	}
	return string(l)
}

// parquetDiff describes two Parquet files whose bytes differ: their rows
// differ, or only their bytes.
func parquetDiff(w, g []byte) string {
	ws, wr, werr := ParquetRows(w)
	gs, gr, gerr := ParquetRows(g)
	switch {
	case werr != nil:
		return fmt.Sprintf("bytes differ; the reference does not read back: %v", werr)
	case gerr != nil:
		return fmt.Sprintf("bytes differ and the file does not read back: %v", gerr)
	case ws != gs:
		return fmt.Sprintf("bytes differ, schema differs: got %s, want %s", gs, ws)
	}
	for i := 0; i < len(wr) && i < len(gr); i++ {
		if wr[i] != gr[i] {
			return fmt.Sprintf("ROWS DIFFER at row %d: got %s, want %s", i, cut(gr[i]), cut(wr[i]))
		}
	}
	if len(wr) != len(gr) {
		return fmt.Sprintf("ROWS DIFFER: %d rows, want %d", len(gr), len(wr))
	}
	return fmt.Sprintf("bytes differ (%d, want %d), rows equal (%d rows)", len(g), len(w), len(wr))
}

func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// ParquetRows reads a Parquet file's bytes with the Arrow Go reader and
// returns its Arrow schema as text and each row as a JSON array of its
// cells.
func ParquetRows(b []byte) (schema string, rows []string, err error) {
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		return "", nil, err
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return "", nil, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return "", nil, err
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 4096)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]any, rec.NumCols())
			for c := range row {
				row[c] = rec.Column(c).GetOneForMarshal(i)
			}
			j, err := json.Marshal(row)
			if err != nil {
				return "", nil, err
			}
			rows = append(rows, string(j))
		}
	}
	if err := tr.Err(); err != nil {
		return "", nil, err
	}
	return tbl.Schema().String(), rows, nil
}
