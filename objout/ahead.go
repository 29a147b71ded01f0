package objout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/convbatch/convbatch/internal/crashpoint"
	"github.com/convbatch/convbatch/outdir"
)

// ahead uploads the files a run publishes while its local commit goes on
// (issue 44 item 6): the commit tells each one as soon as its bytes are
// final and hashed for the manifest (outdir.Options.OnStaged), before it
// syncs it, writes the journal and renames it into place, so the upload
// of the archives and the table parts overlaps the rest of the commit
// instead of following it. Each goes under the key Publish would give it
// (Session.Key), with put-if-absent; nothing names it until Publish
// writes the commit record, which it does only once every upload ahead
// is done and none failed. A kill before that record leaves objects no
// commit names (gc's); the rerun, with the same scratch, keeps the run id
// and finds them: an object there with the same size and SHA-256 is its
// own, one with other bytes (a report.json that the rerun's commit wrote
// anew) is a stale one of its own and is replaced (putFile).
type ahead struct {
	s      *Session
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	queue  []aheadJob
	// running counts the workers; at most uploadWorkers.
	running int
	wg      sync.WaitGroup
	// told are the SHA-256 of the files told, by path in OUT; up those
	// uploaded.
	told map[string]string
	up   map[string]File
	err  error
}

// aheadJob is one file to upload: its record, and where it is staged
// (the commit may have renamed it into the scratch OUT since).
type aheadJob struct {
	f      File
	staged string
}

// UploadAhead returns the function to set as the local run's
// outdir.Options.OnStaged (pipeline.Config.OnStaged): it uploads each
// file the run's commit publishes as soon as the commit has read it,
// uploadWorkers at a time, and Publish then uploads only the rest.
func (s *Session) UploadAhead(ctx context.Context) func(rel, path string, rec outdir.FileRecord) {
	ctx, cancel := context.WithCancel(ctx)
	a := &ahead{s: s, ctx: ctx, cancel: cancel, told: map[string]string{}, up: map[string]File{}}
	s.ahead = a
	prev := map[string]File{}
	if s.base != nil {
		for _, f := range s.base.Files {
			prev[f.Path] = f
		}
	}
	return func(rel, path string, rec outdir.FileRecord) {
		if !ofOut(rel) {
			return
		}
		if pf, ok := prev[rel]; ok && pf.Size == rec.Size && pf.SHA256 == rec.SHA256 {
			return // Publish names the object the base commit names
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.told[rel] == rec.SHA256 || a.err != nil {
			return
		}
		a.told[rel] = rec.SHA256
		a.queue = append(a.queue, aheadJob{File{Path: rel, Key: s.loc.keyFor(rel, s.mark.RunID), Size: rec.Size, SHA256: rec.SHA256}, path})
		if a.running < uploadWorkers {
			a.running++
			a.wg.Add(1)
			go a.work()
		}
	}
}

// ofOut reports whether rel is a file of OUT that a commit record names:
// not the run's own under outdir.StateDir (its lock, staging, spool).
func ofOut(rel string) bool {
	return !strings.HasPrefix(rel, outdir.StateDir+"/") || strings.HasPrefix(rel, outdir.StateDir+"/"+stateSub+"/")
}

// work uploads queued files until the queue is empty.
func (a *ahead) work() {
	defer a.wg.Done()
	for {
		a.mu.Lock()
		if len(a.queue) == 0 || a.err != nil {
			a.running--
			a.mu.Unlock()
			return
		}
		j := a.queue[0]
		a.queue = a.queue[1:]
		a.mu.Unlock()
		err := a.s.putFile(a.ctx, j.f, j.staged, filepath.Join(a.s.Out, filepath.FromSlash(j.f.Path)))
		a.mu.Lock()
		if err != nil && a.err == nil {
			a.err = err
			a.cancel()
		}
		if err == nil && a.told[j.f.Path] == j.f.SHA256 {
			a.up[j.f.Path] = j.f
		}
		a.mu.Unlock()
	}
}

// wait waits for the uploads ahead and returns the first error.
func (a *ahead) wait() error {
	if a == nil {
		return nil
	}
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return fmt.Errorf("uploading while the run committed; nothing was committed: %w", a.err)
	}
	return nil
}

// uploaded reports whether f (its path, key, size and SHA-256) went up
// ahead.
func (a *ahead) uploaded(f File) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.up[f.Path]
	return ok && u == f
}

// stop cancels the uploads ahead and waits for them (a run that ends
// without publishing).
func (a *ahead) stop() {
	if a == nil {
		return
	}
	a.cancel()
	a.wg.Wait()
}

// putFile uploads f from the first of paths that exists, under its
// run-unique key, put-if-absent. A refusal is this run's own object when
// the try was retried (the first try landed) or the object there has f's
// size and SHA-256 (a run killed after uploading it, rerun with the
// staging it left). An object of other bytes under this session's key is
// a stale one of its own: the key carries the session's run id, which no
// commit names (a commit made from this scratch, or any newer one, makes
// the next run start with a new id), so nothing reads it; it is removed
// and put again.
func (s *Session) putFile(ctx context.Context, f File, paths ...string) error {
	var fh *os.File
	var err error
	for _, p := range paths {
		if fh, err = os.Open(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	key := s.t.Prefix + f.Key
	err = s.t.Store.Put(withDigest(ctx, f.SHA256), key, fh, f.Size, true)
	var r *retried
	if errors.Is(err, ErrPrecondition) && !errors.As(err, &r) {
		n, sum, serr := s.t.digest(ctx, f.Key)
		switch {
		case serr == nil && n == f.Size && sum == f.SHA256:
			err = nil
		case serr == nil && f.Key == s.Key(f.Path):
			if err = s.t.Store.Delete(ctx, key); err == nil {
				if _, err = fh.Seek(0, io.SeekStart); err == nil {
					err = s.t.Store.Put(withDigest(ctx, f.SHA256), key, fh, f.Size, true)
				}
			}
		}
	}
	if err != nil && !errors.As(err, &r) {
		return fmt.Errorf("%s/%s: %w", s.t.URL, f.Key, err)
	}
	crashpoint.Hit("objout-put")
	return nil
}
