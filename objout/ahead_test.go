package objout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/outdir"
)

// stageAll tells the session's UploadAhead hook of every file the
// scratch OUT's manifest of run names, as a local commit does, from
// several goroutines at once; the staged path of each is one that no
// longer exists (the commit renamed it), so the upload opens the file in
// the scratch OUT.
func stageAll(t *testing.T, s *Session, run int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(outdir.ManifestRel(run))))
	if err != nil {
		t.Fatal(err)
	}
	var m outdir.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	hook := s.UploadAhead(context.Background())
	var wg sync.WaitGroup
	for _, f := range m.Files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hook(f.Path, filepath.Join(s.dir, "gone", f.Path), f)
		}()
	}
	wg.Wait()
}

// rewriteReport gives the scratch OUT of run a report.json of other
// bytes, and its manifest the record of them (a rerun's commit writes
// its report anew).
func rewriteReport(t *testing.T, out string, run int, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(out, outdir.ReportFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(out, filepath.FromSlash(outdir.ManifestRel(run)))
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m outdir.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	for i := range m.Files {
		if m.Files[i].Path == outdir.ReportFile {
			m.Files[i].Size, m.Files[i].SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
		}
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUploadAheadKillRerun (issue 44 item 6): a run whose commit
// uploaded its files ahead and was killed before Publish leaves objects
// no commit names; the rerun with the same scratch keeps the run id,
// finds its own objects (same bytes: the refused put-if-absent is its
// own), replaces the one its new commit wrote anew (report.json, other
// bytes) and commits; Publish uploads only what the commit did not tell
// (the manifest); check passes and gc finds nothing unnamed.
func TestUploadAheadKillRerun(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	ctx := context.Background()
	scratch := t.TempDir()
	s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	runID := s.RunID()
	writeNight(t, s.Out, 1, "n1")
	stageAll(t, s, 1)
	if err := s.ahead.wait(); err != nil {
		t.Fatal(err)
	}
	s.Close() // killed before Publish
	uploaded := keys(t, f)
	if len(uploaded) != 4 {
		t.Fatalf("uploaded ahead: %v, want the 4 files the commit told", uploaded)
	}
	for k := range uploaded {
		if !strings.Contains(k, "/"+runID+".") {
			t.Errorf("%s: not under the run id %s", k, runID)
		}
	}
	if c, err := tg.Latest(ctx); c != nil || err != nil {
		t.Fatalf("a commit after the kill: %+v %v", c, err)
	}

	s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.RunID() != runID {
		t.Fatalf("the rerun's run id %s, want the killed run's %s", s.RunID(), runID)
	}
	rewriteReport(t, s.Out, 1, `{"run":1,"rerun":true}`)
	stageAll(t, s, 1)
	if err := s.ahead.wait(); err != nil {
		t.Fatal(err)
	}
	puts := f.puts.Load() // the uploads ahead are done
	c, err := s.Publish(ctx)
	if err != nil || c == nil || c.Number != 1 {
		t.Fatalf("rerun: %+v %v", c, err)
	}
	if n := f.puts.Load() - puts; n != 2 {
		t.Errorf("Publish made %d PUTs, want 2 (the manifest, the record)", n)
	}
	if got := keys(t, f); len(got) != len(uploaded)+2 {
		t.Errorf("after the rerun: %d objects, want the %d uploaded, the manifest and the record: %v", len(got), len(uploaded), got)
	}
	b, err := tg.getAll(ctx, runKey(runID, outdir.ReportFile), 1<<20)
	if err != nil || string(b) != `{"run":1,"rerun":true}` {
		t.Errorf("report.json's object: %q %v, want the rerun's", b, err)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Errorf("check: %v %v", problems, err)
	}
	if res, err := tg.GC(ctx, 0, time.Now().Add(48*time.Hour)); err != nil || res.Objects != 0 {
		t.Errorf("gc: %+v %v, want every object named", res, err)
	}
}

// TestUploadAheadFails (issue 44 item 6): an upload ahead that fails
// (the store answers 500 to every try) fails Publish before anything is
// committed; with the store healthy again, the same scratch publishes.
func TestUploadAheadFails(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	ctx := context.Background()
	scratch := t.TempDir()
	s := preparedNight(t, tg, scratch, 1, "n1")
	f.setFail(status(func(r *http.Request) int {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/archive/") {
			return http.StatusInternalServerError
		}
		return 0
	}))
	stageAll(t, s, 1)
	c, err := s.Publish(ctx)
	s.Close()
	if err == nil || c != nil || !strings.Contains(err.Error(), "nothing was committed") || !strings.Contains(err.Error(), "/archive/") {
		t.Fatalf("publish with a failing upload ahead: %+v, %v", c, err)
	}
	if c, err := tg.Latest(ctx); c != nil || err != nil {
		t.Fatalf("a commit after the failed upload: %+v %v", c, err)
	}
	f.setFail(nil)
	s, err = tg.Prepare(ctx, Options{ScratchRoot: scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stageAll(t, s, 1)
	if c, err := s.Publish(ctx); err != nil || c == nil || c.Number != 1 {
		t.Fatalf("publish once the store is healthy: %+v %v", c, err)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Errorf("check: %v %v", problems, err)
	}
}

// TestPublishDescribesEMFILE: an upload ahead that ran out of
// descriptors fails Publish saying what to do (outdir.Describe), as the
// local commit does, its cause kept; nothing is committed. Seen in
// crashtest's TestObjectScratchFaults/EMFILE, where 24 descriptors
// sometimes ran out in an upload ahead instead of the local commit, and
// the message did not say to raise `ulimit -n`.
func TestPublishDescribesEMFILE(t *testing.T) {
	newS3(t)
	tg := openT(t)
	s := preparedNight(t, tg, t.TempDir(), 1, "n1")
	defer s.Close()
	stageAll(t, s, 1)
	s.ahead = &ahead{cancel: func() {}, err: &fs.PathError{Op: "open", Path: "archive/a.jsonl.zst", Err: syscall.EMFILE}}
	c, err := s.Publish(context.Background())
	if c != nil || err == nil || !errors.Is(err, syscall.EMFILE) || !strings.Contains(err.Error(), "raise `ulimit -n`") || !strings.Contains(err.Error(), "nothing was committed") {
		t.Fatalf("publish after an upload ahead out of descriptors: %+v, %v", c, err)
	}
	if c, err := tg.Latest(context.Background()); c != nil || err != nil {
		t.Fatalf("a commit after the failed upload: %+v %v", c, err)
	}
}
