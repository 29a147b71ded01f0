package convbeam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"github.com/convbatch/convbatch/objout"
)

// TestFetchShards: the publishing step into an OUT on object storage
// reads the shards' files locally: those on another file system are
// downloaded (their bytes), local ones kept where they are, the results
// given to it left as they were; a file that is gone is an error naming
// the input and shard.
func TestFetchShards(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root := fmt.Sprintf("memfs://fetch-%d", memRuns.Add(1))
	memfs.Write(root+"/tmp/a", []byte("alpha"))
	memfs.Write(root+"/tmp/b", []byte("beta"))
	kept := filepath.Join(dir, "kept")
	os.WriteFile(kept, []byte("local"), 0o644)
	byInput := [][]ShardResult{{
		{Input: 0, Index: 0, Path: "in/x.jsonl", Files: []TempFile{{Rel: "tables/usage/part-00000.parquet", Temp: root + "/tmp/a", Table: "usage", Rows: 3}, {Rel: "x.jsonl.zst", Temp: kept}}},
		{Input: 0, Index: 1, Path: "in/x.jsonl", Files: []TempFile{{Rel: "x.jsonl.zst", Temp: root + "/tmp/b"}}},
	}}
	local := filepath.Join(dir, "local")
	os.Mkdir(local, 0o755)
	got, err := fetchShards(ctx, byInput, local)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"alpha", "local"}, {"beta"}}
	for k, s := range got[0] {
		for n, tf := range s.Files {
			b, err := os.ReadFile(tf.Temp)
			if err != nil || string(b) != want[k][n] || !strings.HasPrefix(tf.Temp, dir) {
				t.Errorf("shard %d file %d at %s holds %q (%v), want %q, local", k, n, tf.Temp, b, err, want[k][n])
			}
			if tf.Rel != byInput[0][k].Files[n].Rel || tf.Table != byInput[0][k].Files[n].Table || tf.Rows != byInput[0][k].Files[n].Rows {
				t.Errorf("shard %d file %d: %+v, its place changed from %+v", k, n, tf, byInput[0][k].Files[n])
			}
		}
	}
	if byInput[0][0].Files[0].Temp != root+"/tmp/a" {
		t.Errorf("the results given were changed: %s", byInput[0][0].Files[0].Temp)
	}
	byInput[0][1].Files[0].Temp = root + "/tmp/gone"
	if _, err := fetchShards(ctx, byInput, local); err == nil || !strings.Contains(err.Error(), "in/x.jsonl's shard 1") {
		t.Errorf("a file gone: %v, want an error naming the input and shard", err)
	}
}

// TestIsConflict: a refused commit is recognized as the error itself and
// as the text a runner gives back of the failed step; other failures are
// not conflicts.
func TestIsConflict(t *testing.T) {
	ce := &objout.ConflictError{URL: "s3://b/out/_commits/0000000002.json", Number: 2}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{ce, true},
		{fmt.Errorf("publish: %w", ce), true},
		{errors.New("bundle failed: stage publish: " + ce.Error()), true},
		{errors.New("uploading; nothing was committed: 503"), false},
		{nil, false},
	} {
		if got := IsConflict(tc.err); got != tc.want {
			t.Errorf("IsConflict(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
