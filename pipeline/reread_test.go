package pipeline

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// failingStore is a test object store whose GETs of an object's body can
// be made to answer a status (bodycut's FailGets).
type failingStore interface {
	objectStore
	FailGets(object string, status int)
	HealGets(object string)
}

// sameRows fails unless every table's rows under got, with its inputs'
// directory gotDir removed from their paths, are want's with wantDir
// removed.
func sameRows(t *testing.T, got, gotDir, want, wantDir string) {
	t.Helper()
	for _, table := range tabledef.Names {
		g := strings.ReplaceAll(strings.Join(pqtest.LatestRows(t, got, table), "\n"), gotDir, "")
		w := strings.ReplaceAll(strings.Join(pqtest.LatestRows(t, want, table), "\n"), wantDir, "")
		if g != w {
			t.Errorf("table %s: rows differ from one run's over the same inputs", table)
		}
	}
}

// sameHeld fails unless the cumulative counts of got (an incremental OUT's
// last report) are those of one run over the same inputs: inputs, lines,
// documents, each document table's rows and the receipts by current
// verdict (the receipts table's rows may count re-resolutions too).
func sameHeld(t *testing.T, got, want *sink.Report) {
	t.Helper()
	g, w := got.Cumulative, want.Cumulative
	docRows := func(rows map[string]int64) map[string]int64 {
		rows = maps.Clone(rows)
		delete(rows, tabledef.Receipts)
		return rows
	}
	if g.Inputs != w.Inputs || g.Counts.Documents != w.Counts.Documents || g.Counts.Lines != w.Counts.Lines ||
		!maps.Equal(docRows(g.Rows), docRows(w.Rows)) || !maps.Equal(g.Receipts, w.Receipts) {
		t.Errorf("OUT holds %d inputs, %d lines, %d documents, rows %v, receipts %v; one run over the same inputs %d, %d, %d, %v, %v",
			g.Inputs, g.Counts.Lines, g.Counts.Documents, g.Rows, g.Receipts, w.Inputs, w.Counts.Lines, w.Counts.Documents, w.Rows, w.Receipts)
	}
}

// TestOutageIsNotHeld (issue 42, item 1): an object whose every GET
// answers 503 during a night is a damaged input of that night, and is not
// held: the next night, the store healthy, reads it again (the report's
// reread names it with its fault) and retires what the first night
// committed of it, and OUT then holds every row of one run over the same
// objects; the night after has nothing to do. Before, the first night
// recorded the object as held (its digest that of no byte) and every
// later night skipped it: a third of the rows lost for good.
func TestOutageIsNotHeld(t *testing.T) {
	for _, st := range objectStores {
		t.Run(st.scheme, func(t *testing.T) {
			bucket := "pipeline-outage-" + st.scheme
			store := st.start(t).(failingStore)
			store.Bucket(t, bucket)
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			if err := os.Mkdir(in, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, name := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
				p := filepath.Join(in, name)
				if _, err := gen.WriteFile(p, gen.Options{Conversations: 40, Seed: uint64(i + 21), Tamper: 0.2}); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				store.Put(t, bucket, "n/"+name, b)
			}
			ref := filepath.Join(dir, "ref")
			refRes, err := Run(context.Background(), Config{Inputs: expand(t, filepath.Join(in, "*.jsonl")), OutDir: ref, Workers: 2, Tables: tabledef.Names})
			if err != nil {
				t.Fatal(err)
			}
			prefix := st.scheme + "://" + bucket + "/n/"
			quick := quickRetries(t)
			night := func() *Result {
				t.Helper()
				res, err := Run(context.Background(), Config{Inputs: expand(t, prefix+"*"), OutDir: filepath.Join(dir, "out"), Workers: 2, Tables: tabledef.Names, Incremental: true, Source: quick})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			store.FailGets(bucket+"/n/b.jsonl", http.StatusServiceUnavailable)
			t.Cleanup(func() { store.HealGets(bucket + "/n/b.jsonl") })
			res := night()
			var fault string
			for _, r := range res.Report.Inputs {
				if (r.Error != nil) != (r.Path == prefix+"b.jsonl") {
					t.Fatalf("night 1: %s: fault %+v; want one for b.jsonl only", r.Path, r.Error)
				}
				if r.Error != nil {
					fault = r.Error.Reason
				}
			}
			if res.Report.Cumulative.Counts.Documents >= refRes.Report.Cumulative.Counts.Documents {
				t.Fatalf("night 1 holds %d documents, with b.jsonl unread; want fewer than %d", res.Report.Cumulative.Counts.Documents, refRes.Report.Cumulative.Counts.Documents)
			}

			store.HealGets(bucket + "/n/b.jsonl")
			res = night()
			want := []sink.CommittedInput{{Path: prefix + "b.jsonl", Run: 1, Fault: fault}}
			if res.UpToDate || !slices.Equal(res.Report.Reread, want) || len(res.Report.Replaced) != 0 {
				t.Fatalf("night 2: up to date %v, reread %+v, replaced %+v; want b.jsonl read again (%+v)", res.UpToDate, res.Report.Reread, res.Report.Replaced, want)
			}
			if len(res.Report.Inputs) != 1 || len(res.Report.AlreadyCommitted) != 2 {
				t.Errorf("night 2 read %d inputs and skipped %d; want b.jsonl read, the two others skipped", len(res.Report.Inputs), len(res.Report.AlreadyCommitted))
			}
			sameHeld(t, res.Report, refRes.Report)
			sameRows(t, filepath.Join(dir, "out"), prefix, ref, in+"/")
			if _, problems, err := outdir.Verify(filepath.Join(dir, "out")); err != nil || len(problems) > 0 {
				t.Errorf("check after night 2: %v %v", problems, err)
			}
			if res = night(); !res.UpToDate {
				t.Errorf("night 3 read %d inputs, reread %+v; want nothing to do", len(res.Report.Inputs), res.Report.Reread)
			}
		})
	}
}

// TestCutShortIsNotHeld (issue 42, item 1, on disk): a .jsonl.zst that
// ends early (copied while it was still being written) is not held: the
// next night, given the whole file at the same path, reads it again
// without --replace-changed, retires the partial rows, and OUT holds what
// one run over the whole files holds. Before, the partial input was held
// with the digest of its cut bytes, and the whole file was refused as a
// changed input.
func TestCutShortIsNotHeld(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	inputs := genInputs(t, in, "a.jsonl", "b.jsonl.zst")
	whole, err := os.ReadFile(inputs[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref")
	refRes, err := Run(context.Background(), Config{Inputs: inputs, OutDir: ref, Workers: 2, Tables: tabledef.Names})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	night := func() *Result {
		t.Helper()
		res, err := Run(context.Background(), Config{Inputs: expand(t, inputs[0].Path, inputs[1].Path), OutDir: out, Workers: 2, Tables: tabledef.Names, Incremental: true})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if err := os.WriteFile(inputs[1].Path, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	res := night()
	fault := res.Report.Inputs[1].Error
	if fault == nil || res.Report.Inputs[1].Counts.Documents == 0 {
		t.Fatalf("night 1: b.jsonl.zst cut short: fault %+v, %d documents; want a fault after some documents", fault, res.Report.Inputs[1].Counts.Documents)
	}
	if err := os.WriteFile(inputs[1].Path, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	res = night()
	want := []sink.CommittedInput{{Path: inputs[1].Path, Run: 1, Fault: fault.Reason}}
	if !slices.Equal(res.Report.Reread, want) || len(res.Report.Inputs) != 1 || res.Report.Inputs[0].Error != nil {
		t.Fatalf("night 2: reread %+v, %d inputs read; want %+v read whole", res.Report.Reread, len(res.Report.Inputs), want)
	}
	sameHeld(t, res.Report, refRes.Report)
	sameRows(t, out, "", ref, "")
	if _, problems, err := outdir.Verify(out); err != nil || len(problems) > 0 {
		t.Errorf("check after night 2: %v %v", problems, err)
	}
}

// TestChangedInOutage (issue 42, item 1, the lead's ruling): an object OUT
// holds that is overwritten with other documents and whose every GET
// answers 503 during the next night is a changed input all the same:
// without ReplaceChanged that night refuses it by name before publishing
// anything; with it, the old version's rows are retired and the new one,
// cut by the fault, is recorded partial and read again the night after.
// No night leaves the old and new versions' rows together, `convbatch
// check` passes after every night, and after the healthy night OUT holds
// what one run over the final objects holds. Before, the night of the
// outage read the object (its digest unreadable) as a new input without
// retiring the old version: both versions' rows stayed in OUT.
func TestChangedInOutage(t *testing.T) {
	for _, st := range objectStores {
		for _, replace := range []bool{false, true} {
			name := st.scheme + "/refuse"
			if replace {
				name = st.scheme + "/replace"
			}
			t.Run(name, func(t *testing.T) {
				bucket := "pipeline-changed-outage-" + st.scheme
				store := st.start(t).(failingStore)
				store.Bucket(t, bucket)
				dir := t.TempDir()
				in := filepath.Join(dir, "in")
				if err := os.Mkdir(in, 0o755); err != nil {
					t.Fatal(err)
				}
				put := func(name string, seed uint64) {
					t.Helper()
					p := filepath.Join(in, name)
					if _, err := gen.WriteFile(p, gen.Options{Conversations: 40, Seed: seed, Tamper: 0.2}); err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					store.Put(t, bucket, "n/"+name, b)
				}
				put("a.jsonl", 31)
				put("b.jsonl", 32)
				prefix := st.scheme + "://" + bucket + "/n/"
				out := filepath.Join(dir, "out")
				quick := quickRetries(t)
				night := func(replace bool) (*Result, error) {
					t.Helper()
					return Run(context.Background(), Config{Inputs: expand(t, prefix+"*"), OutDir: out, Workers: 2, Tables: tabledef.Names, Incremental: true, ReplaceChanged: replace, Source: quick})
				}
				checked := func(n int) {
					t.Helper()
					if _, problems, err := outdir.Verify(out); err != nil || len(problems) > 0 {
						t.Errorf("check after night %d: %v %v", n, problems, err)
					}
				}
				// bRows counts the rows of b.jsonl in OUT's tables.
				bRows := func() (n int) {
					for _, table := range tabledef.Names {
						for _, r := range pqtest.LatestRows(t, out, table) {
							if strings.Contains(r, prefix+"b.jsonl") {
								n++
							}
						}
					}
					return n
				}
				if _, err := night(false); err != nil {
					t.Fatal(err)
				}
				checked(1)
				old := bRows()
				if old == 0 {
					t.Fatal("night 1: no rows of b.jsonl")
				}

				put("b.jsonl", 33) // other documents, another ETag
				store.FailGets(bucket+"/n/b.jsonl", http.StatusServiceUnavailable)
				t.Cleanup(func() { store.HealGets(bucket + "/n/b.jsonl") })
				before := snapshot(t, out)
				res, err := night(replace)
				if !replace {
					var changed *outdir.ChangedError
					if !errors.As(err, &changed) || !slices.Equal(changed.Paths, []string{prefix + "b.jsonl"}) {
						t.Fatalf("night 2: %v; want b.jsonl refused as changed", err)
					}
					if !maps.Equal(snapshot(t, out), before) {
						t.Error("night 2 refused, but OUT changed")
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					if n := bRows(); n != 0 {
						t.Errorf("night 2: %d rows of b.jsonl (night 1 had %d); want none: the old version retired, the new unread", n, old)
					}
					want := []sink.CommittedInput{{Path: prefix + "b.jsonl", Run: 1}}
					if !slices.Equal(res.Report.Replaced, want) {
						t.Errorf("night 2: replaced %+v; want %+v", res.Report.Replaced, want)
					}
				}
				checked(2)

				store.HealGets(bucket + "/n/b.jsonl")
				if res, err = night(true); err != nil {
					t.Fatal(err)
				}
				checked(3)
				ref := filepath.Join(dir, "ref")
				refRes, err := Run(context.Background(), Config{Inputs: expand(t, filepath.Join(in, "*.jsonl")), OutDir: ref, Workers: 2, Tables: tabledef.Names})
				if err != nil {
					t.Fatal(err)
				}
				sameHeld(t, res.Report, refRes.Report)
				sameRows(t, out, prefix, ref, in+"/")
			})
		}
	}
}
