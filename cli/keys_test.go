package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/gcstest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
	"github.com/convbatch/convbatch/sink"
)

// hostileKeys are object keys that a store lists as they are and that a
// reader must not take for another name: an escape gocloud.dev undid, a
// "../", a newline, a tab (issue 42, item 4).
var hostileKeys = []string{
	"esc/a__0x2f__b.jsonl",
	"esc/../x.jsonl",
	"esc/n\nl.jsonl",
	"esc/t\tb.jsonl",
	"esc/plain.jsonl",
}

// TestHostileKeysEndToEnd: objects under hostile keys, listed by a glob
// over s3:// and over gs://, are every one read by its exact key: the run
// exits 0, its tables hold a row for every document, every input is
// archived byte for byte under a distinct name inside OUT, `convbatch
// check` passes, and a second incremental night over the same keys
// commits nothing (issue 42, item 4). On 8e45063 the "__0x2f__" key was
// left out of the glob and the others failed to open (404).
func TestHostileKeysEndToEnd(t *testing.T) {
	lines := bytes.SplitAfter(decompress(t, filepath.Join("..", "testdata", "sample.jsonl.zst")), []byte("\n"))
	const perKey = 3
	objects := map[string][]byte{}
	var ids []string
	for i, k := range hostileKeys {
		doc := bytes.Join(lines[i*perKey:(i+1)*perKey], nil)
		objects[k] = doc
		for _, l := range lines[i*perKey : (i+1)*perKey] {
			var d struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(l, &d); err != nil || d.ID == "" {
				t.Fatalf("sample line %d: no id (%v)", i, err)
			}
			ids = append(ids, d.ID)
		}
	}
	sort.Strings(ids)
	s3 := s3test.Start(t)
	gcs := gcstest.Start(t)
	const bucket = "cli-hostile-keys"
	s3.Bucket(t, bucket)
	gcs.Bucket(t, bucket)
	for k, b := range objects {
		s3.Put(t, bucket, k, b)
		gcs.Put(t, bucket, k, b)
	}
	for _, scheme := range []string{"s3", "gs"} {
		t.Run(scheme, func(t *testing.T) {
			base := scheme + "://" + bucket + "/"
			globs := []string{base + "esc/*.jsonl", base + "esc/*/*.jsonl"}
			t.Run("run", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				if r := convbatch(t, nil, append([]string{"run", "-q", "-o", out}, globs...)...); r.code != 0 {
					t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
				}
				checkHostileOut(t, out, base, objects, ids)
			})
			t.Run("incremental", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				var first []byte
				for night := 1; night <= 2; night++ {
					r := convbatch(t, nil, append([]string{"run", "-q", "--json", "-o", out, "--incremental"}, globs...)...)
					if r.code != 0 {
						t.Fatalf("night %d: exit %d\n%s", night, r.code, r.stderr)
					}
					var s summary
					if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
						t.Fatalf("night %d: --json: %v", night, err)
					}
					if s.Run != 1 || s.UpToDate != (night == 2) || s.AlreadyInOut != (night-1)*len(hostileKeys) {
						t.Errorf("night %d: run %d, up to date %v, %d already in OUT; want run 1, %v, %d",
							night, s.Run, s.UpToDate, s.AlreadyInOut, night == 2, (night-1)*len(hostileKeys))
					}
					rep, err := os.ReadFile(filepath.Join(out, "report.json"))
					if err != nil {
						t.Fatal(err)
					}
					if night == 1 {
						first = rep
					} else if !bytes.Equal(rep, first) {
						t.Errorf("night 2 changed report.json")
					}
				}
				checkHostileOut(t, out, base, objects, ids)
			})
		})
	}
}

// checkHostileOut checks an OUT built from objects (by key, under the URL
// prefix base): checkWhole, every object is an input whose archive holds
// its bytes, and the conversations table holds exactly the ids.
func checkHostileOut(t *testing.T, out, base string, objects map[string][]byte, ids []string) {
	t.Helper()
	checkWhole(t, out, len(objects), int64(len(objects)*3))
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	seen := map[string]bool{}
	for _, in := range rep.Inputs {
		k, ok := bytes.CutPrefix([]byte(in.Path), []byte(base))
		want, found := objects[string(k)]
		if !ok || !found {
			t.Errorf("report input %q is no object put", in.Path)
			continue
		}
		seen[string(k)] = true
		if got := decompress(t, filepath.Join(out, filepath.FromSlash(in.Archive))); !bytes.Equal(got, want) {
			t.Errorf("archive %s of %q: %d bytes, not the object's %d", in.Archive, in.Path, len(got), len(want))
		}
	}
	for k := range objects {
		if !seen[k] {
			t.Errorf("object %q was not read", k)
		}
	}
	conv := pqtest.ReadDataset(t, out, "conversations")
	var got []string
	for r := range conv.Rows {
		got = append(got, fmt.Sprint(conv.Get(t, r, "conversation_id")))
	}
	sort.Strings(got)
	if !slices.Equal(got, ids) {
		t.Errorf("conversations rows %q, want the documents' ids %q", got, ids)
	}
}
