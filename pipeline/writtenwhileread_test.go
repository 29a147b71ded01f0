package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// TestWrittenWhileRead: a local input that changes once it is opened
// never has a later version's fingerprint recorded with what was read of
// an earlier one, which would hold the later version unread forever.
//
//   - written in place (same size, a new time) while read: a read-error
//     at the end of its reading, never held; the next incremental night reads it again,
//     retiring what the first committed, and holds what one run over the
//     new version holds;
//   - replaced by a rename while read (the open file is the old one, read
//     whole): held as the version read, so the next night finds the new
//     one changed (refused, or read with ReplaceChanged).
//
// Before the fingerprint was taken when the file was opened, both nights
// held the new version unread.
func TestWrittenWhileRead(t *testing.T) {
	tables := []string{tabledef.Usage, tabledef.Conversations}
	for _, tc := range []struct {
		name   string
		rename bool
	}{{"in place", false}, {"renamed over", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			os.Mkdir(in, 0o755)
			a, b := filepath.Join(in, "a.jsonl"), filepath.Join(in, "b.jsonl")
			for i, p := range []string{a, b} {
				if _, err := gen.WriteFile(p, gen.Options{Conversations: 40, Seed: uint64(i + 31)}); err != nil {
					t.Fatal(err)
				}
			}
			// b's next version: the same size, one key's case changed
			// in every document, a later time.
			old, err := os.ReadFile(b)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(b)
			next := []byte(strings.ReplaceAll(string(old), `"role":"user"`, `"role":"User"`))
			if len(next) != len(old) || string(next) == string(old) {
				t.Fatal("gen's archive has no user message to change")
			}
			write := func() {
				p := b
				if tc.rename {
					p = b + ".new"
				}
				if err := os.WriteFile(p, next, 0o644); err != nil {
					t.Error(err)
				}
				later := st.ModTime().Add(time.Second)
				os.Chtimes(p, later, later)
				if tc.rename {
					if err := os.Rename(p, b); err != nil {
						t.Error(err)
					}
				}
			}
			testHookOpened = func(in stream.Input) {
				if in.Path == b {
					testHookOpened = nil
					write()
				}
			}
			t.Cleanup(func() { testHookOpened = nil })
			out := filepath.Join(dir, "out")
			res, err := Run(context.Background(), Config{Inputs: expand(t, a, b), OutDir: out, Workers: 2, Tables: tables, Incremental: true})
			if err != nil {
				t.Fatal(err)
			}
			var fault *sink.InputFault
			for _, r := range res.Report.Inputs {
				if r.Path == b {
					fault = r.Error
				} else if r.Error != nil {
					t.Fatalf("%s: fault %+v", r.Path, r.Error)
				}
			}
			if tc.rename != (fault == nil) {
				t.Fatalf("night 1: b.jsonl's fault %+v", fault)
			}
			if fault != nil && (fault.Reason != codes.FaultReadError.String() || fault.Offset != int64(len(next))) {
				t.Fatalf("night 1: b.jsonl's fault %+v, want read-error at its end, %d", fault, len(next))
			}

			// Night 2: the new version is never taken as held.
			night2 := Config{Inputs: expand(t, a, b), OutDir: out, Workers: 2, Tables: tables, Incremental: true}
			res, err = Run(context.Background(), night2)
			if tc.rename {
				var ce *outdir.ChangedError
				if !errors.As(err, &ce) || !slices.Equal(ce.Paths, []string{b}) {
					t.Fatalf("night 2: err %v, want b.jsonl refused as changed", err)
				}
				night2.ReplaceChanged = true
				if res, err = Run(context.Background(), night2); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if res.UpToDate || len(res.Report.Inputs) != 1 || res.Report.Inputs[0].Path != b || res.Report.Inputs[0].Error != nil {
				t.Fatalf("night 2: up to date %v, read %+v; want b.jsonl read whole", res.UpToDate, res.Report.Inputs)
			}
			one := filepath.Join(dir, "one")
			if _, err := Run(context.Background(), Config{Inputs: expand(t, a, b), OutDir: one, Workers: 2, Tables: tables}); err != nil {
				t.Fatal(err)
			}
			for _, table := range tables {
				if got, want := pqtest.LatestRows(t, out, table), pqtest.LatestRows(t, one, table); !slices.Equal(got, want) {
					t.Errorf("table %s: %d rows after night 2, %d in one run over the new version, or they differ", table, len(got), len(want))
				}
			}
		})
	}
}
