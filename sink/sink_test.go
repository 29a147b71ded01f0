package sink

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestTxnCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	txn, err := NewTxn(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := txn.Create("a/b.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("hello"))
	f.Close()
	if _, err := txn.Create("a/b.txt"); err == nil {
		t.Fatal("a file created twice")
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "a", "b.txt"))
	if err != nil || string(b) != "hello" {
		t.Fatalf("after commit: %q, %v", b, err)
	}
	st, _ := os.Stat(filepath.Join(dir, "a", "b.txt"))
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	txn.Abort() // after commit: nothing happens
	if _, err := os.Stat(filepath.Join(dir, "a", "b.txt")); err != nil {
		t.Fatal("abort after commit removed a published file")
	}

	txn2, _ := NewTxn(dir)
	g, _ := txn2.Create("c.txt")
	g.Write([]byte("half"))
	txn2.Abort()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "a" {
			t.Errorf("left after abort: %s", e.Name())
		}
	}

	txn3, _ := NewTxn(dir)
	txn3.Create("open.txt")
	if err := txn3.Commit(); err == nil {
		t.Error("commit with a file still open succeeded")
	}
}

func TestArchiveWriter(t *testing.T) {
	docs := [][]byte{[]byte(`{"id":"a"}`), []byte(`{"id":"b","x":"\u00e9"}`)}
	for _, format := range []ArchiveFormat{ArchiveZstd, ArchiveJSONL} {
		dir := t.TempDir()
		txn, _ := NewTxn(dir)
		w, err := NewArchiveWriter(txn, "x/y"+format.Ext(), format, zstd.SpeedDefault, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			w.Write(d)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "x", "y"+format.Ext()))
		if err != nil {
			t.Fatal(err)
		}
		if format == ArchiveZstd {
			dec, _ := zstd.NewReader(bytes.NewReader(b))
			b, err = io.ReadAll(dec)
			dec.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if want := string(docs[0]) + "\n" + string(docs[1]) + "\n"; string(b) != want {
			t.Fatalf("%s: %q, want %q", format, b, want)
		}
	}
	for _, s := range []string{"zst", "zstd", "jsonl", "none"} {
		if _, err := ParseArchiveFormat(s); err != nil {
			t.Errorf("%s refused", s)
		}
	}
	if _, err := ParseArchiveFormat("gz"); err == nil {
		t.Error("gz accepted")
	}
}

func TestRejectWriterKeepsExactBytes(t *testing.T) {
	dir := t.TempDir()
	txn, _ := NewTxn(dir)
	w, err := NewRejectWriter(txn, "rejects/rejects.jsonl", "rejects/rejects.bin")
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{[]byte("\xff\xfe not utf8"), []byte("{\"a\":1,\"a\":2}\r"), {}}
	for i, b := range bodies {
		if err := w.Write(Reject{File: "f", Line: int64(i + 1), Reason: "r", Length: int64(len(b))}, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(Reject{File: "f", Line: 9, Length: 2}, strings.NewReader("abc")); err == nil {
		t.Fatal("a body longer than the line was accepted")
	}
	w.Close()
	txn.Commit()
	bin, _ := os.ReadFile(filepath.Join(dir, "rejects", "rejects.bin"))
	if want := bytes.Join(bodies, nil); !bytes.HasPrefix(bin, want) {
		t.Fatalf("rejects.bin = %q", bin)
	}
}

func TestCheckAccounting(t *testing.T) {
	good := Report{
		Inputs:          []InputReport{{Path: "a", Counts: Counts{Lines: 3, Documents: 1, Rejects: 1, Blank: 1}}},
		Totals:          Counts{Lines: 3, Documents: 1, Rejects: 1, Blank: 1},
		RejectsByReason: map[string]int64{"not-json": 1},
	}
	if err := good.CheckAccounting(); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.Inputs = []InputReport{{Path: "a", Counts: Counts{Lines: 4, Documents: 1, Rejects: 1, Blank: 1}}}
	if bad.CheckAccounting() == nil {
		t.Error("unbalanced input passed")
	}
	bad = good
	bad.Totals.Documents = 2
	bad.Totals.Lines = 4
	if bad.CheckAccounting() == nil {
		t.Error("totals not matching inputs passed")
	}
	bad = good
	bad.RejectsByReason = map[string]int64{}
	if bad.CheckAccounting() == nil {
		t.Error("reasons not matching rejects passed")
	}
}

func TestTxnWriteFile(t *testing.T) {
	dir := t.TempDir()
	txn, err := NewTxn(dir)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200<<10) // more than the buffer holds
	if err := txn.WriteFile("d/ok.txt", func(w io.Writer) error {
		_, err := io.WriteString(w, big)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = txn.WriteFile("d/failed.txt", func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "d/failed.txt") {
		t.Fatalf("err = %v, want boom naming d/failed.txt", err)
	}
	if got := strings.Join(txn.Files(), ","); got != "d/ok.txt" {
		t.Fatalf("files %q, want only d/ok.txt", got)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "d", "ok.txt")); err != nil || string(b) != big {
		t.Fatalf("ok.txt: %d bytes, %v", len(b), err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "d"))
	if len(entries) != 1 {
		t.Errorf("after commit, d holds %d entries, want only ok.txt (the failed file removed)", len(entries))
	}
}
