package sink

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRejectKeptAndRest: a reject whose body is shorter than its line (a
// too-large line past the keep cap) is indexed with kept and rest; a whole
// one with kept only.
func TestRejectKeptAndRest(t *testing.T) {
	dir := t.TempDir()
	txn, err := NewTxn(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewRejectWriter(txn, "rejects/rejects.jsonl", "rejects/rejects.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Reject{File: "a.jsonl.zst", Line: 3, Offset: 100, Reason: "too-large", Length: 1 << 40}, strings.NewReader("0123")); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Reject{File: "a.jsonl.zst", Line: 4, Offset: 1<<40 + 101, Reason: "not-json", Length: 2}, bytes.NewReader([]byte("{x"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "rejects", "rejects.jsonl"))
	want := `{"file":"a.jsonl.zst","line":3,"offset":100,"reason":"too-large","column":0,"length":1099511627776,"data_offset":0,"kept":4,"rest":{"offset":104,"length":1099511627772}}
{"file":"a.jsonl.zst","line":4,"offset":1099511627877,"reason":"not-json","column":0,"length":2,"data_offset":4,"kept":2}
`
	if string(index) != want {
		t.Fatalf("index\n%s\nwant\n%s", index, want)
	}
	if bin, _ := os.ReadFile(filepath.Join(dir, "rejects", "rejects.bin")); string(bin) != "0123{x" {
		t.Fatalf("rejects.bin %q", bin)
	}
}
