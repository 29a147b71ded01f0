package crashtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/internal/testkit/fstree"
	"github.com/convbatch/convbatch/tabledef"
)

// TestIcebergReaderSeesOneSnapshot is issue 26's reader during a commit:
// the incremental night of TestPropertyIceberg is stopped (SIGKILL, no
// recovery) after rename k of its commit, for every k just before and
// after each rename of a table's metadata file and a few k among the
// data files' renames (all of them took some 15 minutes), and ClickHouse
// (chDB's icebergLocal) reads every table of every state so left: each
// must be exactly the table before the night (the base OUT) or after it
// (the uninterrupted run), by row count and a hash of every row, never a
// mix. A rename is atomic, so a reader querying in a loop during the
// commit sees one of these states at every instant.
//
// The night runs once up to its journal (CONVBATCH_CRASH=journal:1);
// each state is that OUT copied and rerun to the k-th rename of the
// recovery that carries the journal out (recover:k), the same steps in
// the same order as the commit's own (outdir's apply), without running
// the night again for every k. One state is also made by the commit
// itself (rename:k) and must publish as many files in every directory.
func TestIcebergReaderSeesOneSnapshot(t *testing.T) {
	chdbtest.Require(t)
	f := getFixture(t)
	iceOnce.Do(func() {
		iceFix, iceErr = newIncrementalFixture(f, "iceberg", "--table-format", "iceberg", "--partition-by", "day")
	})
	if iceErr != nil {
		t.Fatal(iceErr)
	}
	g := iceFix
	work := filepath.Join(g.root, "readers")
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	// The journal, from a run stopped once it is written, says where the
	// renames of the tables' metadata are: every state around them is
	// read, and a few among the data files' renames before them.
	probe := filepath.Join(work, "journal")
	if err := fstree.Copy(g.base, probe); err != nil {
		t.Fatal(err)
	}
	if o := g.run(probe, step{crash: "journal:1"}); o.err != nil || o.signal == 0 {
		t.Fatalf("the run stopped at its journal: %+v", o)
	}
	var j struct {
		Renames []struct{ To string } `json:"renames"`
	}
	b, err := os.ReadFile(filepath.Join(probe, ".convbatch", "journal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	ks := map[int]bool{1: true, len(j.Renames)/4 + 1: true, len(j.Renames)/2 + 1: true, len(j.Renames): true}
	metadata, firstMeta := 0, 0
	for i, r := range j.Renames {
		if icebergMetadata.MatchString(r.To) {
			if metadata == 0 {
				firstMeta = i + 1
			}
			metadata++
			ks[i] = i > 0 // the state before it
			ks[i+1] = true
		}
	}
	if metadata == 0 {
		t.Fatalf("the journal publishes no Iceberg metadata: %s", b)
	}
	var states []string
	for _, k := range slices.Sorted(maps.Keys(ks)) {
		if ks[k] {
			states = append(states, fmt.Sprintf("k%04d", k))
		}
	}
	// The stopped runs, trialsAtOnce at a time (each is independent).
	errs := make([]error, len(states))
	next := make(chan int)
	var wg sync.WaitGroup
	for range trialsAtOnce {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var k int
				fmt.Sscanf(states[i], "k%d", &k)
				out := filepath.Join(work, states[i])
				if err := fstree.Copy(probe, out); err != nil {
					errs[i] = err
					continue
				}
				if o := g.run(out, step{crash: fmt.Sprintf("recover:%d", k)}); o.err != nil || o.signal == 0 {
					errs[i] = fmt.Errorf("the recovery stopped after rename %d of %d: %+v", k, len(j.Renames), o)
				}
			}
		}()
	}
	// The commit itself stopped at the first rename of a metadata file.
	var direct error
	wg.Add(1)
	go func() {
		defer wg.Done()
		out := filepath.Join(work, "direct")
		if direct = fstree.Copy(g.base, out); direct != nil {
			return
		}
		if o := g.run(out, step{crash: fmt.Sprintf("rename:%d", firstMeta)}); o.err != nil || o.signal == 0 {
			direct = fmt.Errorf("the run stopped after rename %d of %d: %+v", firstMeta, len(j.Renames), o)
		}
	}()
	for i := range states {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(append(errs, direct)...); err != nil {
		t.Fatal(err)
	}
	want, err := filesPerDir(filepath.Join(work, "direct"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := filesPerDir(filepath.Join(work, fmt.Sprintf("k%04d", firstMeta)))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("stopped after rename %d: the recovery published files per directory %v, the commit %v", firstMeta, got, want)
	}
	// Copies, not links: ClickHouse reads nothing outside its directory.
	if err := fstree.Copy(g.base, filepath.Join(work, "before")); err != nil {
		t.Fatal(err)
	}
	if err := fstree.Copy(filepath.Join(g.root, "ref"), filepath.Join(work, "after")); err != nil {
		t.Fatal(err)
	}
	fingerprint := func(dir, table string) string {
		return fmt.Sprintf("SELECT %s AS state, %s AS t, count() AS n, sum(cityHash64(*)) AS h FROM icebergLocal(%s)",
			chdbtest.Literal(dir), chdbtest.Literal(table), chdbtest.Literal(dir+"/tables/"+table))
	}
	var sqls []string
	for _, dir := range append([]string{"before", "after"}, states...) {
		for _, name := range tabledef.Names {
			sqls = append(sqls, fingerprint(dir, name))
		}
	}
	res := chdbtest.Query(t, work, sqls...)
	type fp struct{ n, h string }
	get := func(i int) fp {
		r := res[i][0]
		return fp{fmt.Sprint(r["n"]), fmt.Sprint(r["h"])}
	}
	nt := len(tabledef.Names)
	sawBefore, sawAfter := map[string]bool{}, map[string]bool{}
	for s, state := range states {
		for ti, name := range tabledef.Names {
			before, after, got := get(ti), get(nt+ti), get((s+2)*nt+ti)
			switch got {
			case before:
				sawBefore[name] = true
			case after:
				sawAfter[name] = true
			default:
				t.Errorf("stopped after rename %s: table %s reads %v rows (hash %v): neither the %v of before the night nor the %v after it", strings.TrimPrefix(state, "k"), name, got.n, got.h, before.n, after.n)
			}
		}
	}
	for _, name := range tabledef.Names {
		if get(0) == get(nt) && name == tabledef.Names[0] {
			t.Fatalf("table %s: the night changed nothing, so the test cannot tell", name)
		}
		if !sawBefore[name] || !sawAfter[name] {
			t.Errorf("table %s: of %d stopped commits, none read as before (%v) or none as after (%v)", name, len(states), sawBefore[name], sawAfter[name])
		}
	}
	t.Logf("%d of %d renames (%d of metadata) stopped at: every table read as before or after the night", len(states), len(j.Renames), metadata)
}

// filesPerDir counts the regular files under out by the directory that
// holds them, OUT's state directory left out.
func filesPerDir(out string) (map[string]int, error) {
	n := map[string]int{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		switch {
		case d.IsDir() && rel == ".convbatch":
			return filepath.SkipDir
		case d.Type().IsRegular():
			n[filepath.ToSlash(filepath.Dir(rel))]++
		}
		return nil
	})
	return n, err
}
