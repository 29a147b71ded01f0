package sink

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFlatNameBounded: a flat staging name is the escaped path while it
// is short, and otherwise a bounded name of its own, unique by a digest,
// that a file system takes whatever the path's length (issue 42, item 9:
// on 8e45063 a 14-level path or a 246-byte file name made a staging name
// longer than 255 bytes, and every run failed "file name too long").
func TestFlatNameBounded(t *testing.T) {
	deep := "archive"
	for range 14 {
		deep += "/level-nn-abcdefg"
	}
	deep += "/f.jsonl.zst"
	for _, tc := range []struct {
		rel  string
		want string // "" for the bounded form
	}{
		{"archive/a.jsonl.zst", "archive%2Fa.jsonl.zst"},
		{"rejects/100%.bin", "rejects%2F100%25.bin"},
		{"tables/usage/day=2026-11-29/part-00000.parquet", "tables%2Fusage%2Fday=2026-11-29%2Fpart-00000.parquet"},
		{deep, ""},
		{"archive/" + strings.Repeat("x", 240) + ".jsonl.zst", ""},
		{"archive/" + strings.Repeat("é", 120) + ".jsonl.zst", ""},
		{"archive/" + strings.Repeat("%", 100) + ".jsonl.zst", ""},
	} {
		got := FlatName(tc.rel)
		if tc.want != "" {
			if got != tc.want {
				t.Errorf("FlatName(%q) = %q, want %q", tc.rel, got, tc.want)
			}
			continue
		}
		if len(got) > 255 || !strings.HasPrefix(got, "%H") || strings.Contains(got, "/") || !utf8.ValidString(got) {
			t.Errorf("FlatName(%q) = %q (%d bytes): not a bounded name", tc.rel, got, len(got))
		}
		if other := FlatName(tc.rel + "x"); other == got {
			t.Errorf("FlatName(%q) and of %q are both %q", tc.rel, tc.rel+"x", got)
		}
	}
	// A flat transaction writes and finds a file under such a name.
	txn, err := NewFlatTxn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.WriteFile(deep, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(txn.Path(deep)); err != nil || filepath.Base(txn.Path(deep)) != FlatName(deep) {
		t.Fatalf("staged %s: %v", txn.Path(deep), err)
	}
}
