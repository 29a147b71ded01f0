package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/convbatch/convbatch/pipeline"
)

// TestMainNilStdin: a nil stdin reads as empty, never as the test process's
// own standard input.
func TestMainNilStdin(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"hash", "-"}, nil, &out, &errb); code != ExitOK || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestHelpOnStdout: CMD --help, CMD -h and help CMD print the same help on
// stdout with exit 0; a command without flags shows no Flags header.
func TestHelpOnStdout(t *testing.T) {
	for _, c := range commands() {
		want := convbatch(t, nil, "help", c.name)
		if want.code != ExitOK || want.stderr != "" || !strings.Contains(want.stdout, "Usage:\n  "+c.usage) {
			t.Fatalf("help %s: exit %d, stdout %q, stderr %q", c.name, want.code, want.stdout, want.stderr)
		}
		for _, flag := range []string{"--help", "-h"} {
			r := convbatch(t, nil, c.name, flag)
			if r != want {
				t.Errorf("%s %s: %+v, want what help %s gives: %+v", c.name, flag, r, c.name, want)
			}
		}
		if strings.Contains(want.stdout, "Flags:\n\n") || strings.HasSuffix(want.stdout, "Flags:\n") {
			t.Errorf("help %s shows an empty Flags header:\n%s", c.name, want.stdout)
		}
	}
	// A usage error goes to stderr and names where help is.
	r := convbatch(t, nil, "run", "--no-such-flag")
	if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, "convbatch help run") {
		t.Errorf("bad flag: %+v", r)
	}
}

// TestHelpAligned: the command list's summaries start in one column.
func TestHelpAligned(t *testing.T) {
	r := convbatch(t, nil, "help")
	_, list, _ := strings.Cut(r.stdout, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	col := -1
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		i := strings.Index(line, name) + len(name)
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if col == -1 {
			col = i
		} else if i != col {
			t.Errorf("summary of %s starts at column %d, others at %d:\n%s", name, i, col, list)
		}
	}
	if n := strings.Count(list, "\n") + 1; n != len(commands())+1 {
		t.Errorf("%d commands listed, want %d", n, len(commands())+1)
	}
}

// TestSummaryWording: singular and plural, binary units, no rate of 0 for
// tiny inputs, and receipts checked without --keys said to be checked for
// self-consistency only, as verify says.
func TestSummaryWording(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "one.jsonl")
	writeFile(t, in, `{"id":"a","messages":[]}`+"\n")
	r := convbatch(t, nil, "run", "-o", filepath.Join(dir, "o1"), in)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "convbatch run: 1 document, 0 rejects, 0 blank lines in 1 input; 25 B read in ") {
		t.Fatalf("exit %d: %q", r.code, r.stderr)
	}
	if regexp.MustCompile(`\b0 [KMG]?i?B/s|MB/s`).MatchString(r.stderr) {
		t.Errorf("rate of 0 or in decimal units: %q", r.stderr)
	}
	sample := filepath.Join("..", "testdata", "sample.jsonl.zst")
	r = convbatch(t, nil, "run", "-o", filepath.Join(dir, "o2"), sample)
	if !strings.Contains(r.stderr, "receipts: 40 valid, 0 invalid, 0 incomplete (no --keys: checked for self-consistency only)") {
		t.Errorf("without --keys: %q", r.stderr)
	}
	if !regexp.MustCompile(`; [0-9.]+ MiB read in [0-9.]+m?s( \([0-9.]+ [KMG]iB/s\))?; outputs in `).MatchString(r.stderr) {
		t.Errorf("bytes, time and rate: %q", r.stderr)
	}
	r = convbatch(t, nil, "run", "-o", filepath.Join(dir, "o3"), "--keys", sample+".keys.json", sample)
	if !strings.Contains(r.stderr, "receipts: 40 valid, 0 invalid, 0 incomplete;") {
		t.Errorf("with --keys: %q", r.stderr)
	}
	r = convbatch(t, nil, "verify", in)
	if !strings.HasPrefix(r.stderr, "convbatch verify: 1 document, 0 rejects;") || !strings.Contains(r.stderr, "(0 statements failed)") {
		t.Errorf("verify: %q", r.stderr)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		3 * time.Millisecond: "3ms", 999 * time.Millisecond: "999ms", 1500 * time.Millisecond: "1.5s",
		59*time.Second + 940*time.Millisecond: "59.9s", 65 * time.Second: "1m5s", 2*time.Hour + 3*time.Second: "2h0m3s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestMessages: each usage error says what was wrong with which flag or
// argument and how to write it instead (issue 13, item 10).
func TestMessages(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl")
	writeFile(t, in, `{"id":"a","messages":[{"role":"assistant","content":"hi","metadata":{"usage":{"provider":"openai","tokens_input":1,"tokens_output":2,"cost":0.5}}}]}`+"\n")
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, in); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	file := filepath.Join(dir, "file")
	writeFile(t, file, "not a directory")
	g := filepath.Join(dir, "g.jsonl")
	for _, tc := range []struct {
		args    []string
		code    int
		want    []string
		notWant string
	}{
		{[]string{"gen", "-o", g, "--conversations", "-5"}, 2, []string{"--conversations -5: want at least 1"}, "exactly one"},
		{[]string{"gen", "-o", g, "--conversations", "0"}, 2, []string{"--conversations 0: want at least 1"}, ""},
		{[]string{"gen", "-o", g}, 2, []string{"--conversations N or --bytes SIZE"}, ""},
		{[]string{"gen", "-o", g, "--conversations", "5", "--bytes", "1MiB"}, 2, []string{"not both"}, ""},
		{[]string{"gen", "-o", g, "--conversations", "5", "--faults", "2"}, 2, []string{"--faults 2: want a share from 0 to 1"}, "--tamper"},
		{[]string{"gen", "-o", g, "--conversations", "5", "--tamper", "-0.1"}, 2, []string{"--tamper -0.1: want a share from 0 to 1"}, "--faults"},
		{[]string{"gen", "-o", g, "--bytes", "1XB"}, 2, []string{`--bytes "1XB" is not a size`, "64MiB"}, ""},
		{[]string{"gen", "-o", g, "--conversations", "5", "--max-doc-bytes", "1KiB"}, 2, []string{`--max-doc-bytes "1KiB": want a size from 16KiB`}, ""},
		{[]string{"gen", "-o", g, "--conversations", "5", "--dates", "yesterday"}, 2, []string{`--dates "yesterday": want night or spread`}, ""},
		{[]string{"gen", "-o", g, "--conversations", "5", "--dates", ""}, 2, []string{`--dates "": want night or spread`}, ""},
		{[]string{"gen", "-o", dir, "--nights", "2", "--conversations", "50", "--dates", "weekly"}, 2, []string{`--dates "weekly": want night or spread`}, ""},
		{[]string{"run", "-o", out, "--max-doc-bytes", "10XB", in}, 2, []string{`--max-doc-bytes "10XB" is not a size`, "64MiB", "powers of 1024"}, ""},
		{[]string{"run", "-o", out, "--zstd-max-window", "1 parsec", in}, 2, []string{`--zstd-max-window "1 parsec" is not a size`, "64MiB"}, ""},
		{[]string{"run", "-o", out, "--memory-limit", "lots", in}, 2, []string{`--memory-limit "lots" is not a size`}, ""},
		{[]string{"run", "-o", out, "--memory-limit", "1MiB", in}, 2, []string{"0 or a size of at least 32MiB"}, ""},
		{[]string{"run", "-o", file, in}, 2, []string{"is a file, not a directory"}, ""},
		{[]string{"run", "-o", filepath.Join(file, "sub"), in}, 2, []string{"is a file, not a directory"}, ""},
		{[]string{"report", filepath.Join(out, "tables", "usage")}, 2, []string{"lies inside the output directory " + out, "convbatch report " + out}, ""},
		{[]string{"report", filepath.Join(out, "report.json")}, 2, []string{"lies inside the output directory " + out}, ""},
		{[]string{"report", filepath.Join(dir, "nonexistent")}, 2, []string{"no such directory", "-o directory of convbatch run"}, ""},
		{[]string{"report", file}, 2, []string{"is a file, not a directory"}, ""},
		{[]string{"report", "--by", "provider,provider", out}, 2, []string{"provider is given twice"}, ""},
		{[]string{"report", "--by", "provider,day,provider", out}, 2, []string{"provider is given twice"}, ""},
		{[]string{"report", "--by", "provider,,day", out}, 0, nil, ""},
		{[]string{"report", out, out}, 2, []string{"got 2 arguments"}, ""},
		{[]string{"hash", "--keys", in + ".keys.json", in}, 2, []string{"unknown flag: --keys"}, ""},
	} {
		r := convbatch(t, nil, tc.args...)
		if r.code != tc.code {
			t.Errorf("convbatch %q: exit %d, want %d: %s", tc.args, r.code, tc.code, r.stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("convbatch %q: %q does not say %q", tc.args, r.stderr, w)
			}
		}
		if tc.notWant != "" && strings.Contains(r.stderr, tc.notWant) {
			t.Errorf("convbatch %q: %q says %q", tc.args, r.stderr, tc.notWant)
		}
	}
	if _, err := os.Stat(g); err == nil {
		t.Error("a refused gen wrote its archive")
	}
}

// TestArchiveFormatNames: --archive takes zst, its alias zstd, jsonl and
// none in any case, and names the formats when it refuses one.
func TestArchiveFormatNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl")
	writeFile(t, in, `{"id":"a","messages":[]}`+"\n")
	for i, tc := range []struct{ value, file string }{
		{"zst", "x.jsonl.zst"}, {"ZST", "x.jsonl.zst"}, {"zstd", "x.jsonl.zst"}, {"Zstd", "x.jsonl.zst"},
		{"jsonl", "x.jsonl"}, {"JSONL", "x.jsonl"}, {"none", ""}, {"NONE", ""},
	} {
		out := filepath.Join(dir, fmt.Sprint("out", i))
		r := convbatch(t, nil, "run", "-o", out, "--archive", tc.value, in)
		if r.code != 0 {
			t.Errorf("--archive %s: exit %d: %s", tc.value, r.code, r.stderr)
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(out, "archive"))
		if tc.file == "" && len(entries) != 0 || tc.file != "" && (len(entries) != 1 || entries[0].Name() != tc.file) {
			t.Errorf("--archive %s: archive/ holds %v, want %q", tc.value, entries, tc.file)
		}
	}
	r := convbatch(t, nil, "run", "-o", filepath.Join(dir, "bad"), "--archive", "gz", in)
	if r.code != 2 || !strings.Contains(r.stderr, "want zst, jsonl or none") {
		t.Errorf("--archive gz: exit %d: %s", r.code, r.stderr)
	}
}

// TestUsageErrorsNameHelp: a missing -o or INPUT names the command's help,
// and a keyring refused names the file and says what it must be, without
// quoting it.
func TestUsageErrorsNameHelp(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	writeFile(t, in, `{"id":"a","messages":[]}`+"\n")
	notUTF8 := filepath.Join(dir, "x.json")
	putFile(t, notUTF8, []byte("\xff{\"secret\":1}"))
	notKeyring := filepath.Join(dir, "k.json")
	putFile(t, notKeyring, []byte(`{"secret_field": []}`))
	missing := filepath.Join(dir, "missing.json")
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", in}, "convbatch: -o/--out is required (see 'convbatch help run')\n"},
		{[]string{"extract", in}, "convbatch: -o/--out is required (see 'convbatch help extract')\n"},
		{[]string{"run", "-o", out}, "convbatch: no INPUT given: a file, a directory, a glob, or - for standard input (see 'convbatch help run')\n"},
		{[]string{"hash"}, "convbatch: no INPUT given: a file, a directory, a glob, or - for standard input (see 'convbatch help hash')\n"},
		{[]string{"gen", "--conversations", "1"}, "convbatch: gen: -o/--out is required (see 'convbatch help gen')\n"},
		{[]string{"run", "-o", out, "--keys", notUTF8, in}, "convbatch: --keys " + notUTF8 + ": not a keyring: invalid UTF-8 at byte 0 (the keyring is a JSON file; see docs/FORMAT.md#keyring---keys-file)\n"},
		{[]string{"verify", "--keys", notKeyring, in}, "convbatch: --keys " + notKeyring + ": keyring: unknown field \"secret_field\" (see docs/FORMAT.md#keyring---keys-file)\n"},
		{[]string{"extract", "-o", out, "--keys", missing, in}, "convbatch: --keys " + missing + ": cannot read it: no such file or directory\n"},
		{[]string{"verify", "--keys", dir, in}, "convbatch: --keys: keyring " + dir + " is a directory, not a regular file\n"},
	} {
		r := convbatch(t, nil, tc.args...)
		if r.code != ExitUsage || r.stderr != tc.want || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, "secret\"") {
			t.Errorf("%v: the error quotes the file: %q", tc.args, r.stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a usage error created %s", out)
	}
}

// TestVersionBuildRevision: convbatch version (and --version, -v) prints
// the build revision that every Parquet part a run writes carries in its
// created_by, read back from a real part's footer (issue 45 item 7).
func TestVersionBuildRevision(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	genArchive(t, in, "--conversations", "5", "--seed", "7")
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, "--tables", "usage,conversations", in); r.code != ExitOK {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	var parts []string
	filepath.WalkDir(filepath.Join(out, "tables"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			parts = append(parts, p)
		}
		return err
	})
	if len(parts) < 2 {
		t.Fatalf("parts %q, want a part of each of the 2 tables", parts)
	}
	var rev string
	for _, p := range parts {
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		createdBy := rdr.MetaData().GetCreatedBy()
		rdr.Close()
		m := regexp.MustCompile(`^convbatch version \S+ \(build ([^()\s]+)\)$`).FindStringSubmatch(createdBy)
		if m == nil || rev != "" && m[1] != rev {
			t.Fatalf("%s: created_by %q, want one build revision in every part (%q)", p, createdBy, rev)
		}
		rev = m[1]
	}
	want := fmt.Sprintf("convbatch %s (build %s; %s %s/%s)\n", pipeline.Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		if r := convbatch(t, nil, args...); r.code != ExitOK || r.stdout != want || r.stderr != "" {
			t.Errorf("convbatch %s: exit %d, stdout %q, stderr %q; want %q", args[0], r.code, r.stdout, r.stderr, want)
		}
	}
}
