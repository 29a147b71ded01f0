package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/internal/pqtest"
	"github.com/convbatch/convbatch/sink"
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
	b, err := os.ReadFile(filepath.Join(out, sink.RejectsIndexFile))
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
	readJSON(t, filepath.Join(out, sink.ReportFile), &rep)
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
