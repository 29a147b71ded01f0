package gen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// TestShortAgainstRun: a real run of convbatch (in process) on a
// short-profile archive reports what FILE.expect.json says, receipt by
// receipt, and its tables hold one row per document and per usage message.
func TestShortAgainstRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "tiny.jsonl.zst")
	var stderr bytes.Buffer
	if code := cli.Main([]string{"gen", "-o", in, "--conversations", "5000", "--seed", "12", "--profile", "short", "--progress", "never"},
		strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	var exp gen.Expect
	readJSON(t, in+".expect.json", &exp)
	if len(exp.ReceiptList) == 0 {
		t.Fatal("no receipts")
	}
	for _, keys := range []bool{true, false} {
		out := filepath.Join(dir, "out-nokeys")
		args := []string{"run", "-o", out, "--tables", "usage,conversations", "--progress", "never", in}
		if keys {
			out = filepath.Join(dir, "out-keys")
			args = append([]string{"run", "-o", out, "--keys", in + ".keys.json"}, args[3:]...)
		}
		stderr.Reset()
		if code := cli.Main(args, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
			t.Fatalf("run: exit %d: %s", code, stderr.String())
		}
		var rep sink.Report
		readJSON(t, filepath.Join(out, "report.json"), &rep)
		want := sink.Counts{Lines: exp.Lines, Documents: exp.Documents, BytesIn: exp.BytesIn}
		if rep.Totals != want || !rep.AccountingOK || len(rep.Warnings) != 0 || len(rep.RejectsByReason) != 0 {
			t.Errorf("totals %+v (accounting %v), warnings %v, rejects %v; want %+v and none", rep.Totals, rep.AccountingOK, rep.Warnings, rep.RejectsByReason, want)
		}
		if rep.Transcripts.Hashed != exp.Transcripts.Hashed || rep.Transcripts.Unhashable != 0 {
			t.Errorf("transcripts %+v, want %+v", rep.Transcripts, exp.Transcripts)
		}
		wr := exp.ReceiptsWithoutKeys
		if keys {
			wr = exp.Receipts
		}
		gr := rep.Receipts
		if gr.Valid != wr.Valid || gr.Invalid != wr.Invalid || gr.Incomplete != wr.Incomplete || gr.StatementsInvalid != wr.StatementsInvalid {
			t.Errorf("receipts %+v, want %+v", gr, wr)
		}
		var got []verify.ReceiptResult
		b, err := os.ReadFile(filepath.Join(out, "receipts", "receipts.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
			var r verify.ReceiptResult
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if len(got) != len(exp.ReceiptList) {
			t.Fatalf("%d receipts, want %d", len(got), len(exp.ReceiptList))
		}
		for i, w := range exp.ReceiptList {
			status, reasons := w.StatusWithoutKeys, w.ReasonsWithoutKeys
			if keys {
				status, reasons = w.Status, w.Reasons
			}
			g := got[i]
			if g.Line != w.Line || g.ConversationID != w.ConversationID || g.Algorithm != w.Algorithm || string(g.Status) != status ||
				!reflect.DeepEqual(append([]string{}, g.Reasons...), append([]string{}, reasons...)) {
				t.Errorf("receipt %d: got line %d %s %s %s %v, want %+v", i, g.Line, g.ConversationID, g.Algorithm, g.Status, g.Reasons, w)
			}
		}
		var usage int64
		for _, s := range exp.Usage.ByProvider {
			usage += s.Messages
		}
		if rep.Tables["usage"].Rows != usage || rep.Tables["conversations"].Rows != exp.Documents {
			t.Errorf("table rows usage %d, conversations %d; want %d and %d", rep.Tables["usage"].Rows, rep.Tables["conversations"].Rows, usage, exp.Documents)
		}
	}
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

// TestShortFlagErrors: gen refuses what the short profile cannot write,
// with a usage error (exit 2), before writing anything.
func TestShortFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--profile", "short", "--bytes", "1MiB"},
		{"--profile", "short", "--conversations", "10", "--faults", "0.1"},
		{"--profile", "short", "--conversations", "10", "--tamper", "0.1"},
		{"--profile", "long", "--conversations", "10"},
	} {
		out := filepath.Join(dir, "x.jsonl")
		var stderr bytes.Buffer
		code := cli.Main(append([]string{"gen", "-o", out}, args...), strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--profile") {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", args, out)
		}
	}
}
