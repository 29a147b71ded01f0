package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
)

// noRead fails the test if the pipeline reads its input.
type noRead struct{ t *testing.T }

func (n noRead) Read([]byte) (int, error) {
	n.t.Error("input was read although start-up failed")
	return 0, errors.New("unexpected read")
}

type fakeHandler struct {
	name  string
	deps  []string
	sleep bool
	panic string
}

func (h fakeHandler) Manifest() transform.Manifest {
	return transform.Manifest{Name: h.name, Status: transform.StatusDraft, Requires: h.deps}
}

func (h fakeHandler) Handle(d *transform.Doc, res *transform.Result) {
	if h.sleep {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
	if h.panic != "" && strings.Contains(res.ID, h.panic) {
		panic("boom")
	}
}

func stdinInput() []stream.Input {
	return []stream.Input{{Path: stream.StdinPath, Rel: "stdin", Size: -1}}
}

func TestRegistryFailsBeforeReading(t *testing.T) {
	for name, reg := range map[string]func() *transform.Registry{
		"duplicate": func() *transform.Registry {
			r := transform.Default()
			r.Register(fakeHandler{name: "core-json"})
			return r
		},
		"missing dependency": func() *transform.Registry {
			r := transform.Default()
			r.Register(fakeHandler{name: "usage", deps: []string{"nope"}})
			return r
		},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := Run(context.Background(), Config{Inputs: stdinInput(), Stdin: noRead{t}, OutDir: out, Registry: reg()})
			if !errors.Is(err, ErrFatal) || !errors.Is(err, transform.ErrRegistry) {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output directory created although start-up failed")
			}
		})
	}
}

func lines(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for i := range n {
		switch r.IntN(10) {
		case 0:
			b.WriteString("  \n")
		case 1:
			fmt.Fprintf(&b, "{\"id\":\"bad-%d\"\n", i)
		default:
			fmt.Fprintf(&b, "{\"id\":\"c-%d\",\"messages\":[{\"role\":\"user\",\"content\":%q}]}\n", i, strings.Repeat("x", r.IntN(3000)))
		}
	}
	return b.Bytes()
}

// TestOrderWithShuffledCompletion: handlers that finish in random order on
// many workers and tiny batches still give the input order.
func TestOrderWithShuffledCompletion(t *testing.T) {
	input := lines(3000, 7)
	var archives [][]byte
	var reports []*sink.Report
	for _, workers := range []int{1, 7} {
		reg := transform.Default()
		reg.Register(fakeHandler{name: "jitter", deps: []string{"core-document"}, sleep: true})
		out := filepath.Join(t.TempDir(), "out")
		res, err := Run(context.Background(), Config{
			Inputs: stdinInput(), Stdin: bytes.NewReader(input), OutDir: out,
			Archive: sink.ArchiveJSONL, Workers: workers, Registry: reg, BatchBytes: 2048,
		})
		if err != nil {
			t.Fatal(err)
		}
		a, err := os.ReadFile(filepath.Join(out, "archive", "stdin.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, a)
		reports = append(reports, res.Report)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Fatal("archives differ between 1 and 7 workers")
	}
	var want bytes.Buffer
	for _, l := range bytes.SplitAfter(input, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(`{"id":"c-`)) {
			want.Write(l)
		}
	}
	if !bytes.Equal(archives[0], want.Bytes()) {
		t.Fatal("archive is not the input's documents in input order")
	}
	if reports[0].Totals != reports[1].Totals || reports[0].Totals.Rejects == 0 || reports[0].Totals.Blank == 0 {
		t.Fatalf("totals %+v and %+v", reports[0].Totals, reports[1].Totals)
	}
}

func TestHandlerPanicIsFatal(t *testing.T) {
	reg := transform.Default()
	reg.Register(fakeHandler{name: "fragile", deps: []string{"core-document"}, panic: "c-2"})
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), Config{Inputs: stdinInput(), Stdin: bytes.NewReader(lines(500, 3)), OutDir: out, Registry: reg})
	if !errors.Is(err, ErrFatal) || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("err = %v", err)
	}
	assertNothingPublished(t, out)
}

func TestCancelledRunPublishesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(ctx, Config{Inputs: stdinInput(), Stdin: bytes.NewReader(lines(100, 1)), OutDir: out})
	if !errors.Is(err, ErrFatal) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	assertNothingPublished(t, out)
}

// assertNothingPublished checks that a failed run left nothing in OUT but
// its staging (kept for the next run to resume from) and the lock file: no
// output, no temporary file, no journal.
func assertNothingPublished(t *testing.T, out string) {
	t.Helper()
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(out, path)
		rel = filepath.ToSlash(rel)
		if rel != ".convbatch/lock" && !strings.HasPrefix(rel, ".convbatch/staging/") {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
}

func TestNoOutDir(t *testing.T) {
	res, err := Run(context.Background(), Config{Inputs: stdinInput(), Stdin: bytes.NewReader(lines(200, 5))})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !rep.AccountingOK || rep.Totals.Lines != 200 || rep.Settings.Archive != "none" {
		t.Fatalf("report %+v", rep.Totals)
	}
}

// TestBadOptionsFailBeforeReading: invalid limits are refused up front.
func TestBadOptionsFailBeforeReading(t *testing.T) {
	_, err := Run(context.Background(), Config{Inputs: stdinInput(), Stdin: noRead{t}, ZstdMaxWindow: 1})
	if !errors.Is(err, ErrFatal) {
		t.Fatalf("err = %v", err)
	}
}
