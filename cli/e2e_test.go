package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// TestMain lets the test binary stand in for convbatch: run with
// CONVBATCH_TEST_MAIN=1 it is the command itself, so that the tests where a
// real process is the point (signals) need no separate build.
func TestMain(m *testing.M) {
	if os.Getenv("CONVBATCH_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// processCommand returns an exec.Cmd that runs convbatch with args as its own
// process: the test binary re-executed as the command (see TestMain).
func processCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), "CONVBATCH_TEST_MAIN=1")
	return cmd
}

type result struct {
	code           int
	stdout, stderr string
}

// convbatch runs the command in process, as main would, with stdin (none
// when nil) and captured stdout and stderr.
func convbatch(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code := Main(args, stdin, &out, &errb)
	return result{code, out.String(), errb.String()}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decompress returns a .jsonl.zst file's bytes, read with the zstd command
// where installed (an independent reader), else with klauspost's decoder.
func decompress(t *testing.T, path string) []byte {
	t.Helper()
	if !strings.HasSuffix(path, ".zst") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if zstdCmd, err := exec.LookPath("zstd"); err == nil {
		b, err := exec.Command(zstdCmd, "-dc", path).Output()
		if err != nil {
			t.Fatalf("zstd -dc %s: %v", path, err)
		}
		return b
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	b, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func genArchive(t *testing.T, path string, args ...string) *gen.Expect {
	t.Helper()
	r := convbatch(t, nil, append([]string{"gen", "-o", path}, args...)...)
	if r.code != 0 {
		t.Fatalf("gen: exit %d: %s", r.code, r.stderr)
	}
	var exp gen.Expect
	readJSON(t, path+".expect.json", &exp)
	return &exp
}

func nonNil(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

// checkAgainstExpect compares a run's report with what gen said a correct
// run reports.
func checkAgainstExpect(t *testing.T, rep *sink.Report, exp *gen.Expect) {
	t.Helper()
	want := sink.Counts{Lines: exp.Lines, Documents: exp.Documents, Rejects: exp.Rejects, Blank: exp.Blank, BytesIn: exp.BytesIn}
	if rep.Totals != want {
		t.Errorf("totals %+v, want %+v", rep.Totals, want)
	}
	if !reflect.DeepEqual(nonNil(rep.RejectsByReason), nonNil(exp.RejectsByReason)) {
		t.Errorf("rejects by reason %v, want %v", rep.RejectsByReason, exp.RejectsByReason)
	}
	if !reflect.DeepEqual(nonNil(rep.Warnings), nonNil(exp.Warnings)) {
		t.Errorf("warnings %v, want %v", rep.Warnings, exp.Warnings)
	}
	if !reflect.DeepEqual(nonNil(rep.Extensions.Unknown), nonNil(exp.ExtensionsUnknown)) {
		t.Errorf("unknown extensions %v, want %v", rep.Extensions.Unknown, exp.ExtensionsUnknown)
	}
	if !rep.AccountingOK {
		t.Error("accounting_ok is false")
	}
	if rep.Transcripts.Hashed != exp.Transcripts.Hashed || rep.Transcripts.Unhashable != exp.Transcripts.Unhashable {
		t.Errorf("transcripts %+v, want %+v", rep.Transcripts, exp.Transcripts)
	}
	wantR := exp.ReceiptsWithoutKeys
	if rep.Receipts.Keyring == "pinned" {
		wantR = exp.Receipts
	}
	gotR := rep.Receipts
	if gotR.Valid != wantR.Valid || gotR.Invalid != wantR.Invalid || gotR.Incomplete != wantR.Incomplete || gotR.StatementsInvalid != wantR.StatementsInvalid ||
		!reflect.DeepEqual(nonNil(gotR.Reasons), nonNil(wantR.Reasons)) {
		t.Errorf("receipts %+v, want %+v", gotR, wantR)
	}
}

// checkReceiptList compares receipts/receipts.jsonl (or verify --json's
// list) with gen's list, receipt by receipt.
func checkReceiptList(t *testing.T, got []verify.ReceiptResult, exp *gen.Expect, keys bool) {
	t.Helper()
	if len(got) != len(exp.ReceiptList) {
		t.Fatalf("%d receipts, want %d", len(got), len(exp.ReceiptList))
	}
	for i, w := range exp.ReceiptList {
		g := got[i]
		status, reasons := w.StatusWithoutKeys, w.ReasonsWithoutKeys
		if keys {
			status, reasons = w.Status, w.Reasons
		}
		if g.Line != w.Line || g.ConversationID != w.ConversationID || g.Algorithm != w.Algorithm || string(g.Status) != status ||
			!reflect.DeepEqual(append([]string{}, g.Reasons...), append([]string{}, reasons...)) {
			t.Fatalf("receipt %d: got line %d %s %s %s %v, want line %d %s %s %s %v (tamper %q)", i,
				g.Line, g.ConversationID, g.Algorithm, g.Status, g.Reasons, w.Line, w.ConversationID, w.Algorithm, status, reasons, w.Tamper)
		}
	}
}

func readReceipts(t *testing.T, path string) []verify.ReceiptResult {
	t.Helper()
	var out []verify.ReceiptResult
	for _, line := range strings.Split(strings.TrimSuffix(mustRead(t, path), "\n"), "\n") {
		if line == "" {
			continue
		}
		var r verify.ReceiptResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// checkRejectsRecoverable checks that every reject's bytes in rejects.bin
// equal the input's bytes at the reported offset, and that the index holds
// exactly the reported rejects.
func checkRejectsRecoverable(t *testing.T, out string, inputs map[string][]byte, total int64) {
	t.Helper()
	bin, err := os.ReadFile(filepath.Join(out, "rejects", "rejects.bin"))
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(out, "rejects", "rejects.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range bytes.Split(bytes.TrimSuffix(index, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r sink.Reject
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("rejects index: %v", err)
		}
		in, ok := inputs[r.File]
		if !ok {
			t.Fatalf("reject names unknown file %q", r.File)
		}
		if r.Kept > r.Length || (r.Kept < r.Length) != (r.Rest != nil) ||
			(r.Rest != nil && (r.Rest.Offset != r.Offset+r.Kept || r.Rest.Length != r.Length-r.Kept)) {
			t.Fatalf("%s line %d (%s): kept %d of %d, rest %+v", r.File, r.Line, r.Reason, r.Kept, r.Length, r.Rest)
		}
		got := bin[r.DataOffset : r.DataOffset+r.Kept]
		if !bytes.Equal(got, in[r.Offset:r.Offset+r.Kept]) {
			t.Fatalf("%s line %d (%s): kept bytes differ from the input's", r.File, r.Line, r.Reason)
		}
		if end := r.Offset + r.Length; end < int64(len(in)) && in[end] != '\n' {
			t.Fatalf("%s line %d: length does not reach the line's end", r.File, r.Line)
		}
		n++
	}
	if n != total {
		t.Fatalf("rejects index has %d entries, report says %d", n, total)
	}
}

func TestRunMatchesExpect(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"clean.jsonl.zst", []string{"--conversations", "300", "--seed", "3"}},
		{"faulty.jsonl", []string{"--conversations", "400", "--seed", "4", "--faults", "0.15", "--max-doc-bytes", "256KiB"}},
		{"faulty.jsonl.zst", []string{"--conversations", "400", "--seed", "5", "--faults", "0.3", "--max-doc-bytes", "256KiB"}},
		{"tampered.jsonl.zst", []string{"--conversations", "400", "--seed", "6", "--faults", "0.1", "--tamper", "0.5", "--max-doc-bytes", "256KiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, tc.name)
			exp := genArchive(t, in, tc.args...)
			out := filepath.Join(dir, "out-"+tc.name)
			r := convbatch(t, nil, "run", "-o", out, "--keys", in+".keys.json", "--max-doc-bytes", fmt.Sprint(exp.MaxDocBytes), in)
			wantCode := 0
			if exp.Rejects > 0 || exp.Receipts.Invalid > 0 {
				wantCode = 1
			}
			if r.code != wantCode {
				t.Fatalf("exit %d, want %d: %s", r.code, wantCode, r.stderr)
			}
			if !strings.Contains(r.stderr, "outputs in "+out) {
				t.Errorf("summary does not say where the outputs are: %q", r.stderr)
			}
			var rep sink.Report
			readJSON(t, filepath.Join(out, "report.json"), &rep)
			checkAgainstExpect(t, &rep, exp)
			checkReceiptList(t, readReceipts(t, filepath.Join(out, "receipts", "receipts.jsonl")), exp, true)
			if len(rep.Inputs) != 1 || rep.Inputs[0].Path != in {
				t.Fatalf("inputs %+v", rep.Inputs)
			}
			raw := decompress(t, in)
			checkRejectsRecoverable(t, out, map[string][]byte{in: raw}, rep.Totals.Rejects)
			archive := decompress(t, filepath.Join(out, rep.Inputs[0].Archive))
			if n := int64(bytes.Count(archive, []byte("\n"))); n != exp.Documents {
				t.Fatalf("archive holds %d lines, want %d documents", n, exp.Documents)
			}
			if bytes.HasPrefix(archive, []byte("\xef\xbb\xbf")) || bytes.Contains(archive, []byte("\r\n")) {
				t.Fatal("archive carries a BOM or CRLF")
			}
		})
	}
}

// TestRoundTrip: on a clean archive the written-back archive decompresses
// to the input's exact bytes, and a second run on that output gives the
// same bytes again.
func TestRoundTrip(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	dir := t.TempDir()
	in := filepath.Join(dir, "day.jsonl.zst")
	genArchive(t, in, "--conversations", "500", "--seed", "11")
	out1, out2 := filepath.Join(dir, "out1"), filepath.Join(dir, "out2")
	if r := convbatch(t, nil, "run", "-o", out1, in); r.code != 0 {
		t.Fatalf("run 1: exit %d: %s", r.code, r.stderr)
	}
	first := filepath.Join(out1, "archive", "day.jsonl.zst")
	if !bytes.Equal(decompress(t, first), decompress(t, in)) {
		t.Fatal("written-back archive differs from the input")
	}
	if r := convbatch(t, nil, "run", "-o", out2, first); r.code != 0 {
		t.Fatalf("run 2: exit %d: %s", r.code, r.stderr)
	}
	second := filepath.Join(out2, "archive", "day.jsonl.zst")
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Fatal("second run's archive is not byte-identical to the first's")
	}
	// Plain write-back too.
	out3 := filepath.Join(dir, "out3")
	if r := convbatch(t, nil, "run", "-o", out3, "--archive", "jsonl", in); r.code != 0 {
		t.Fatalf("run 3: exit %d: %s", r.code, r.stderr)
	}
	plain, err := os.ReadFile(filepath.Join(out3, "archive", "day.jsonl"))
	if err != nil || !bytes.Equal(plain, decompress(t, in)) {
		t.Fatalf("plain archive differs from the input (%v)", err)
	}
}

// TestOrderAcrossWorkers: one worker and eight give identical outputs.
func TestOrderAcrossWorkers(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "mixed.jsonl")
	genArchive(t, in, "--conversations", "800", "--seed", "21", "--faults", "0.2", "--max-doc-bytes", "128KiB")
	var outs []string
	for _, j := range []string{"1", "8"} {
		out := filepath.Join(dir, "out-j"+j)
		if r := convbatch(t, nil, "run", "-o", out, "-j", j, "--max-doc-bytes", "128KiB", "--archive", "jsonl", in); r.code != 1 {
			t.Fatalf("-j %s: exit %d: %s", j, r.code, r.stderr)
		}
		outs = append(outs, out)
	}
	for _, rel := range []string{"archive/mixed.jsonl", "rejects/rejects.jsonl", "rejects/rejects.bin"} {
		a, _ := os.ReadFile(filepath.Join(outs[0], rel))
		b, _ := os.ReadFile(filepath.Join(outs[1], rel))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between -j 1 and -j 8 (%d and %d bytes)", rel, len(a), len(b))
		}
	}
	var r1, r8 sink.Report
	readJSON(t, filepath.Join(outs[0], "report.json"), &r1)
	readJSON(t, filepath.Join(outs[1], "report.json"), &r8)
	if !reflect.DeepEqual(r1.Inputs, r8.Inputs) || !reflect.DeepEqual(r1.RejectsByReason, r8.RejectsByReason) || !reflect.DeepEqual(r1.Warnings, r8.Warnings) {
		t.Error("reports differ between -j 1 and -j 8")
	}
}

// TestManyInputs: a directory is mirrored, a .json file compacted, standard
// input sniffed, and a damaged input does not stop the others.
func TestManyInputs(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	genArchive(t, filepath.Join(data, "2026", "a.jsonl.zst"), "--conversations", "50", "--seed", "1")
	genArchive(t, filepath.Join(data, "2026", "b.jsonl"), "--conversations", "40", "--seed", "2")
	pretty := "{\n  \"id\": \"pretty-1\",\n  \"title\": \"spaced  title\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"a  b\"}\n  ]\n}\n"
	os.WriteFile(filepath.Join(data, "one.json"), []byte(pretty), 0o644)
	// A damaged compressed input: the first 60% of a valid stream.
	whole := filepath.Join(dir, "whole.jsonl.zst")
	genArchive(t, whole, "--conversations", "300", "--seed", "9")
	zb, _ := os.ReadFile(whole)
	damaged := filepath.Join(dir, "damaged.jsonl.zst")
	os.WriteFile(damaged, zb[:len(zb)*6/10], 0o644)

	stdinDoc := `{"id":"from-stdin","messages":[]}` + "\n"
	out := filepath.Join(dir, "out")
	r := convbatch(t, strings.NewReader(stdinDoc), "run", "-o", out, data, damaged, "-")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (damaged input): %s", r.code, r.stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	var paths []string
	for _, in := range rep.Inputs {
		paths = append(paths, in.Archive)
	}
	want := []string{"archive/2026/a.jsonl.zst", "archive/2026/b.jsonl.zst", "archive/one.jsonl.zst", "archive/damaged.jsonl.zst", "archive/stdin.jsonl.zst"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("archives %v, want %v", paths, want)
	}
	if got := decompress(t, filepath.Join(out, "archive/one.jsonl.zst")); string(got) != `{"id":"pretty-1","title":"spaced  title","messages":[{"role":"user","content":"a  b"}]}`+"\n" {
		t.Fatalf(".json write-back: %q", got)
	}
	if got := decompress(t, filepath.Join(out, "archive/stdin.jsonl.zst")); string(got) != stdinDoc {
		t.Fatalf("stdin write-back: %q", got)
	}
	dmg := rep.Inputs[3]
	if dmg.Error == nil || dmg.Error.Reason != "truncated" || dmg.Documents == 0 || !dmg.Balanced() {
		t.Fatalf("damaged input report: %+v", dmg)
	}
	if a := rep.Inputs[0]; a.Documents != 50 || a.BytesRead == 0 {
		t.Fatalf("input a: %+v", a)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","messages":[]}`+"\n"), 0o644)
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"run", in},
		{"run", "-o", filepath.Join(dir, "o")},
		{"run", "-o", filepath.Join(dir, "o"), "--archive", "rar", in},
		{"run", "-o", filepath.Join(dir, "o"), "--tables", "usage,nosuch", in},
		{"run", "-o", filepath.Join(dir, "o"), "--no-such-flag", in},
		{"run", "-o", filepath.Join(dir, "o"), filepath.Join(dir, "missing.jsonl")},
		{"run", "-o", filepath.Join(dir, "o"), "--max-doc-bytes", "lots", in},
		{"run", "-o", filepath.Join(dir, "o"), "--zstd-max-window", "8GiB", in},
		{"run", "-o", dir, in},
		{"gen", "-o", filepath.Join(dir, "g.jsonl")},
		{"gen", "-o", filepath.Join(dir, "g.txt"), "--conversations", "1"},
	} {
		if r := convbatch(t, nil, args...); r.code != 2 {
			t.Errorf("convbatch %v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); err == nil {
		t.Error("a refused run created its output directory")
	}
	for _, args := range [][]string{{"help"}, {"help", "run"}, {"run", "--help"}, {"gen", "--help"}, {"version"}} {
		r := convbatch(t, nil, args...)
		if r.code != 0 || r.stdout+r.stderr == "" {
			t.Errorf("convbatch %v: exit %d", args, r.code)
		}
	}
	if r := convbatch(t, nil, "help", "run"); !strings.Contains(r.stdout, "Examples:") {
		t.Errorf("help run shows no examples: %q", r.stdout)
	}
}

// TestInterruptPublishesNothing: SIGINT while the run waits on its input
// ends it with exit 3 and leaves no file under a final name.
func TestInterruptPublishesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd := processCommand(t, "run", "-o", out, "-")
	cmd.Stdin = pr
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	for range 50 {
		pw.Write([]byte(`{"id":"i","messages":[{"role":"user","content":"SECRET-CONTENT"}]}` + "\n"))
	}
	// The run is ready once it has opened OUT (its lock, then its
	// staging): the signal then finds it waiting on its input, whatever
	// the machine's load, instead of after a guessed sleep.
	waitFor(t, 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(out, ".convbatch", "staging", "run.json"))
		return err == nil
	})
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("convbatch did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("exit %d, want 3: %s", code, errb.String())
	}
	// Only the lock and the staging (kept to resume from) may stay.
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(out, path)
		rel = filepath.ToSlash(rel)
		if err == nil && !d.IsDir() && rel != ".convbatch/lock" && !strings.HasPrefix(rel, ".convbatch/staging/") {
			t.Errorf("left behind after interrupt: %s", path)
		}
		return nil
	})
	if strings.Contains(errb.String(), "SECRET") {
		t.Error("stderr echoes message content")
	}
}

// waitFor polls cond every 10 ms until it holds, failing the test after
// limit.
func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not ready after %v", limit)
		}
	}
}

// TestNoContentInDiagnostics: nothing the run writes besides the archives
// and rejects.bin carries message content.
func TestNoContentInDiagnostics(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"id":"ok","messages":[{"role":"user","content":"SECRET-1"}]}`,
		`{"id":"dup","messages":[{"role":"user","content":"SECRET-2","content":"SECRET-3"}]}`,
		`{"id":"bad","messages":[{"role":"user","content":"SECRET-4`,
		`{"id":7,"messages":[{"role":"user","content":"SECRET-5"}]}`,
		"{\"id\":\"u\",\"messages\":[{\"role\":\"user\",\"content\":\"SECRET-6\xff\"}]}",
	}
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	r := convbatch(t, nil, "run", "-o", out, "--progress", "always", in)
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, text := range []string{r.stdout, r.stderr, mustRead(t, filepath.Join(out, "report.json")), mustRead(t, filepath.Join(out, "rejects", "rejects.jsonl"))} {
		if strings.Contains(text, "SECRET") {
			t.Fatalf("diagnostics echo content: %q", text)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStrictBOM: a BOM is dropped with a warning, or refused under --strict.
func TestStrictBOM(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bom.jsonl")
	os.WriteFile(in, []byte("\xef\xbb\xbf{\"id\":\"a\",\"messages\":[]}\n"), 0o644)
	out := filepath.Join(dir, "o1")
	if r := convbatch(t, nil, "run", "-o", out, in); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	if rep.Warnings["bom-dropped"] != 1 || string(decompress(t, filepath.Join(out, "archive/bom.jsonl.zst"))) != "{\"id\":\"a\",\"messages\":[]}\n" {
		t.Fatalf("BOM not dropped: %+v", rep.Warnings)
	}
	out = filepath.Join(dir, "o2")
	if r := convbatch(t, nil, "run", "-o", out, "--strict", in); r.code != 1 {
		t.Fatalf("--strict: exit %d: %s", r.code, r.stderr)
	}
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	if rep.RejectsByReason["bom"] != 1 {
		t.Fatalf("--strict: %+v", rep.RejectsByReason)
	}
}

// TestBundledSample: the committed sample is what gen makes today, and a
// run on it reports what its expect file says.
func TestBundledSample(t *testing.T) {
	sample := filepath.Join("..", "testdata", "sample.jsonl.zst")
	dir := t.TempDir()
	fresh := filepath.Join(dir, "sample.jsonl.zst")
	genArchive(t, fresh, "--conversations", "200", "--seed", "1")
	if !bytes.Equal(decompress(t, fresh), decompress(t, sample)) {
		t.Fatal("testdata/sample.jsonl.zst is stale: run `make sample`")
	}
	var exp gen.Expect
	readJSON(t, sample+".expect.json", &exp)
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, sample); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	checkAgainstExpect(t, &rep, &exp)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOutputDirectoryRules: an output inside an input directory, or a
// non-empty directory that is not a convbatch output, is refused; a rerun
// into the same output leaves nothing of the earlier run behind.
func TestOutputDirectoryRules(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	genArchive(t, filepath.Join(in, "a.jsonl"), "--conversations", "20", "--seed", "1", "--no-receipts")
	if r := convbatch(t, nil, "run", "-o", filepath.Join(in, "out"), in); r.code != 2 {
		t.Fatalf("output inside the input directory: exit %d", r.code)
	}
	if err := os.Symlink(in, filepath.Join(dir, "link")); err == nil {
		if r := convbatch(t, nil, "run", "-o", filepath.Join(dir, "link", "out"), in); r.code != 2 {
			t.Fatalf("output inside the input directory through a link: exit %d", r.code)
		}
	}
	other := filepath.Join(dir, "other")
	os.MkdirAll(other, 0o755)
	writeFile(t, filepath.Join(other, "notes.txt"), "mine")
	if r := convbatch(t, nil, "run", "-o", other, in); r.code != 2 {
		t.Fatalf("non-empty foreign directory: exit %d", r.code)
	}
	// Rerun: the first run's archive and table parts must not survive.
	out := filepath.Join(dir, "out")
	first := filepath.Join(dir, "first.jsonl")
	second := filepath.Join(dir, "second.jsonl")
	genArchive(t, first, "--conversations", "30", "--seed", "2")
	genArchive(t, second, "--conversations", "10", "--seed", "3", "--no-receipts")
	if r := convbatch(t, nil, "run", "-o", out, first); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	if r := convbatch(t, nil, "run", "-o", out, "--tables", "usage", second); r.code != 0 {
		t.Fatalf("second run: exit %d: %s", r.code, r.stderr)
	}
	for _, stale := range []string{"archive/first.jsonl.zst", "tables/receipts/part-00000.parquet", "tables/conversations/part-00000.parquet"} {
		if _, err := os.Stat(filepath.Join(out, stale)); err == nil {
			t.Errorf("%s from the first run is still there", stale)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "archive", "second.jsonl.zst")); err != nil {
		t.Error("the second run's archive is missing")
	}
}
