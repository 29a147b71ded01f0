package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
)

// mainRun calls Main in-process and returns its exit code and stderr.
func mainRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, strings.NewReader(""), &stdout, &stderr)
	return code, stderr.String()
}

// putFile writes content at path, creating its directories.
func putFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRejects returns the entries of OUT/rejects/rejects.jsonl.
func readRejects(t *testing.T, out string) []sink.Reject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, outdir.RejectsIndexFile))
	if err != nil {
		t.Fatal(err)
	}
	var list []sink.Reject
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r sink.Reject
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		list = append(list, r)
	}
	return list
}

// TestSameFileNames is the nightly layout of issue 13: d1/day.jsonl.zst and
// d2/day.jsonl.zst in one run. Each gets its own archive under a path that
// mirrors its directory, byte for byte its documents; rejects and the
// tables' source_file name each input as given; an input whose name is its
// own keeps today's archive path.
func TestSameFileNames(t *testing.T) {
	dir := t.TempDir()
	docs := map[string]string{}
	inputs := []string{filepath.Join(dir, "d1", "day.jsonl.zst"), filepath.Join(dir, "d2", "day.jsonl.zst"), filepath.Join(dir, "solo.jsonl")}
	for i, p := range inputs {
		var good strings.Builder
		for n := range 3 + i {
			good.WriteString(`{"id":"c` + string(rune('a'+i)) + string(rune('0'+n)) + `","messages":[{"role":"user","content":"x"}]}` + "\n")
		}
		docs[p] = good.String()
		body := []byte(good.String() + `{"id":"bad-` + string(rune('a'+i)) + `"` + "\n")
		if strings.HasSuffix(p, ".zst") {
			enc, _ := zstd.NewWriter(nil)
			body = enc.EncodeAll(body, nil)
		}
		putFile(t, p, body)
	}
	out := filepath.Join(dir, "out")
	code, stderr := mainRun(t, "run", "--progress", "never", "-o", out, inputs[0], inputs[1], inputs[2])
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (one reject per input): %s", code, ExitFindings, stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	wantArchives := []string{"archive/d1/day.jsonl.zst", "archive/d2/day.jsonl.zst", "archive/solo.jsonl.zst"}
	var got []string
	for i, in := range rep.Inputs {
		got = append(got, in.Archive)
		if in.Path != inputs[i] || in.Documents != int64(3+i) || in.Rejects != 1 {
			t.Errorf("input %d: %+v", i, in)
		}
	}
	if !reflect.DeepEqual(got, wantArchives) || !reflect.DeepEqual(rep.Outputs.Archives, wantArchives) {
		t.Fatalf("archives %q (outputs %q), want %q", got, rep.Outputs.Archives, wantArchives)
	}
	for i, a := range wantArchives {
		if b := decompress(t, filepath.Join(out, a)); string(b) != docs[inputs[i]] {
			t.Errorf("%s: %q, want %q", a, b, docs[inputs[i]])
		}
	}
	var rejectFiles []string
	for _, r := range readRejects(t, out) {
		rejectFiles = append(rejectFiles, r.File)
	}
	if !reflect.DeepEqual(rejectFiles, inputs) {
		t.Errorf("rejects name %q, want %q", rejectFiles, inputs)
	}
	var sources []string
	conv := pqtest.ReadTable(t, out, "conversations")
	for r := range conv.Rows {
		if s := conv.Get(t, r, "source_file").(string); !slices.Contains(sources, s) {
			sources = append(sources, s)
		}
	}
	if !reflect.DeepEqual(sources, inputs) {
		t.Errorf("source_file %q, want the inputs as named %q", sources, inputs)
	}

	// The same file named twice is still a usage error.
	if code, stderr := mainRun(t, "run", "-o", filepath.Join(dir, "out2"), inputs[0], inputs[0]); code != ExitUsage || !strings.Contains(stderr, "same file") {
		t.Errorf("same file twice: exit %d: %s", code, stderr)
	}
}

// gzipBytes compresses p as one gzip member.
func gzipBytes(t *testing.T, p []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGzipInputs: .jsonl.gz inputs in a directory are read beside the
// others and written back like them; a damaged one is reported like a
// damaged zstd input (truncated, the partial line an input-truncated
// reject, exit 1); gzip on standard input is sniffed.
func TestGzipInputs(t *testing.T) {
	dir := t.TempDir()
	var a, c strings.Builder
	for i := range 200 {
		fmt.Fprintf(&a, `{"id":"a%d","messages":[{"role":"user","content":"%s"}]}`+"\n", i, strings.Repeat("z", i%40))
		fmt.Fprintf(&c, `{"id":"c%d","messages":[]}`+"\n", i)
	}
	b := `{"id":"b0","messages":[]}` + "\n"
	data := filepath.Join(dir, "data")
	putFile(t, filepath.Join(data, "a.jsonl.gz"), gzipBytes(t, []byte(a.String())))
	putFile(t, filepath.Join(data, "b.jsonl"), []byte(b))
	cz := gzipBytes(t, []byte(c.String()))
	putFile(t, filepath.Join(data, "c.jsonl.gz"), cz[:len(cz)/2])

	out := filepath.Join(dir, "out")
	code, stderr := mainRun(t, "run", "--progress", "never", "-o", out, data)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (damaged c.jsonl.gz): %s", code, ExitFindings, stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	if len(rep.Inputs) != 3 {
		t.Fatalf("inputs %+v", rep.Inputs)
	}
	if got := decompress(t, filepath.Join(out, "archive/a.jsonl.zst")); string(got) != a.String() {
		t.Errorf("a.jsonl.gz written back as %d bytes, want %d", len(got), a.Len())
	}
	if got := decompress(t, filepath.Join(out, "archive/b.jsonl.zst")); string(got) != b {
		t.Errorf("b.jsonl written back as %q", got)
	}
	ai, ci := rep.Inputs[0], rep.Inputs[2]
	if ai.Documents != 200 || ai.Error != nil || ai.BytesIn != int64(a.Len()) || ai.BytesRead >= ai.BytesIn || ai.Archive != "archive/a.jsonl.zst" {
		t.Errorf("a.jsonl.gz: %+v", ai)
	}
	if ci.Error == nil || ci.Error.Reason != "truncated" || ci.Documents == 0 || ci.Documents >= 200 || !ci.Balanced() {
		t.Errorf("damaged c.jsonl.gz: %+v (error %+v)", ci, ci.Error)
	}
	got := decompress(t, filepath.Join(out, "archive/c.jsonl.zst"))
	if !strings.HasPrefix(c.String(), string(got)) || int64(strings.Count(string(got), "\n")) != ci.Documents {
		t.Errorf("damaged input: the documents before the fault are not written back whole")
	}
	for _, r := range readRejects(t, out) {
		if r.File != filepath.Join(data, "c.jsonl.gz") || r.Reason != "input-truncated" || r.Column != 0 {
			t.Errorf("reject %+v", r)
		}
	}

	// Standard input: gzip sniffed by its magic number.
	var stdout, errb bytes.Buffer
	out2 := filepath.Join(dir, "out2")
	code = Main([]string{"run", "--progress", "never", "-o", out2, "-"}, bytes.NewReader(gzipBytes(t, []byte(b))), &stdout, &errb)
	if code != ExitOK {
		t.Fatalf("gzip on stdin: exit %d: %s", code, errb.String())
	}
	if got := decompress(t, filepath.Join(out2, "archive/stdin.jsonl.zst")); string(got) != b {
		t.Errorf("gzip on stdin written back as %q", got)
	}
}

// TestSkippedListed is issue 13's case: a directory holding a.jsonl.gz and
// b.jsonl reads both, and every file it passes over is named, with its
// reason, in report.json; stderr counts them by reason in one line, however
// many (issue 24: not one line a file, night after night).
func TestSkippedListed(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	doc := `{"id":"x","messages":[]}` + "\n"
	putFile(t, filepath.Join(data, "a.jsonl.gz"), gzipBytes(t, []byte(doc)))
	putFile(t, filepath.Join(data, "b.jsonl"), []byte(doc))
	putFile(t, filepath.Join(data, "notes.txt"), []byte("x"))
	putFile(t, filepath.Join(data, ".DS_Store"), []byte("x"))
	putFile(t, filepath.Join(data, ".git", "HEAD"), []byte("x"))
	putFile(t, filepath.Join(data, "b.jsonl.keys.json"), []byte("{}"))
	out := filepath.Join(dir, "out")
	code, stderr := mainRun(t, "run", "--progress", "never", "-o", out, data)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []sink.SkippedFile{
		{Path: filepath.Join(data, ".DS_Store"), Reason: "dot-file"},
		{Path: filepath.Join(data, ".git"), Reason: "dot-directory"},
		{Path: filepath.Join(data, "b.jsonl.keys.json"), Reason: "sidecar"},
		{Path: filepath.Join(data, "notes.txt"), Reason: "unknown-type"},
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, outdir.ReportFile), &rep)
	if len(rep.Inputs) != 2 || rep.Totals.Documents != 2 {
		t.Fatalf("inputs %+v", rep.Inputs)
	}
	if !reflect.DeepEqual(rep.Skipped, want) {
		t.Errorf("report skipped %+v, want %+v", rep.Skipped, want)
	}
	line := "convbatch: skipped 4 files and directories (1 dot-file, 1 dot-directory, 1 sidecar, 1 unknown-type); " +
		filepath.Join(out, outdir.ReportFile) + " lists them (reasons: docs/FORMAT.md#skipped-files)\n"
	if !strings.HasPrefix(stderr, line) || strings.Count(stderr, "convbatch: skipped") != 1 {
		t.Errorf("stderr:\n%s\nwant one line:\n%s", stderr, line)
	}

	// Nothing skipped: an empty list, not an absent one.
	code, stderr = mainRun(t, "run", "--progress", "never", "-o", out, filepath.Join(data, "b.jsonl"))
	raw, _ := os.ReadFile(filepath.Join(out, outdir.ReportFile))
	if code != ExitOK || strings.Contains(stderr, "skipped") || !bytes.Contains(raw, []byte(`"skipped": []`)) {
		t.Errorf("no skipped files: exit %d, stderr %q, report has no empty list", code, stderr)
	}

	// Many, for a command without OUT: still one line, which says where
	// they are listed, and they are listed there.
	for i := range 14 {
		putFile(t, filepath.Join(data, fmt.Sprintf("n%02d.csv", i)), []byte("x"))
	}
	r := convbatch(t, nil, "verify", "--progress", "never", "--json", data)
	line = "convbatch: skipped 18 files and directories (1 dot-file, 1 dot-directory, 1 sidecar, 15 unknown-type); --json lists them (reasons: docs/FORMAT.md#skipped-files)\n"
	var vrep sink.Report
	if err := json.Unmarshal([]byte(r.stdout), &vrep); err != nil {
		t.Fatal(err)
	}
	if r.code != ExitOK || !strings.HasPrefix(r.stderr, line) || strings.Count(r.stderr, "convbatch: skipped") != 1 || len(vrep.Skipped) != 18 {
		t.Errorf("many skipped: exit %d, %d in --json, stderr:\n%s\nwant one line:\n%s", r.code, len(vrep.Skipped), r.stderr, line)
	}
}

// TestSkippedLine: the one line says how many, by reason in the
// documented order, whether files or directories, and where the list is.
func TestSkippedLine(t *testing.T) {
	sk := func(reasons ...codes.Skip) []stream.Skipped {
		var out []stream.Skipped
		for i, r := range reasons {
			out = append(out, stream.Skipped{Path: fmt.Sprintf("p%d", i), Reason: r})
		}
		return out
	}
	const tail = " lists them (reasons: docs/FORMAT.md#skipped-files)\n"
	for _, tc := range []struct {
		skipped []stream.Skipped
		want    string
	}{
		{nil, ""},
		{sk(codes.SkipSidecar), "convbatch: skipped 1 file (1 sidecar); W" + tail},
		{sk(codes.SkipDotDirectory), "convbatch: skipped 1 directory (1 dot-directory); W" + tail},
		{sk(codes.SkipSidecar, codes.SkipDotFile, codes.SkipSidecar), "convbatch: skipped 3 files (1 dot-file, 2 sidecar); W" + tail},
		{sk(codes.SkipUnknownType, codes.SkipDirectory, codes.SkipNotRegular), "convbatch: skipped 3 files and directories (1 unknown-type, 1 directory, 1 not-regular); W" + tail},
	} {
		var b bytes.Buffer
		printSkipped(&b, tc.skipped, "W")
		if b.String() != tc.want {
			t.Errorf("%v: %q, want %q", tc.skipped, b.String(), tc.want)
		}
	}
}
