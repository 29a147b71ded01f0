package outdir

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// dirHandles is a commit's cache of open directories of OUT, so that
// apply renames each file with one renameat(2) between two directory
// handles instead of walking both paths component by component (as the
// os.Root does for every call), and makes the directories it published
// into durable in parallel instead of one fsync after the other.
//
// Every handle is confined to OUT: OUT itself is opened through the
// os.Root, and every other directory with openat(2) of a single name (a
// path component of a validated journal path: no slash, no "..") in its
// parent's handle, with O_NOFOLLOW and O_DIRECTORY, so that a symbolic
// link (or a file) where a directory belongs is refused, never followed,
// wherever it leads. Missing directories are created the same way, with
// mkdirat(2) in the parent's handle.
//
// At most maxOpen handles stay open (the process's file limit may be low,
// and a partitioned table may have many thousands of directories): when
// the cache is full the least recently used half is closed, and those a
// file was published into are synced first, in the background. Once
// every rename is done, sync makes durable the directories still open
// that were published into, and every ancestor of a directory published
// into (the entry of a directory the commit created is in its parent),
// and waits for the background syncs. A directory published into again
// after its handle was closed is opened, and synced, again.
type dirHandles struct {
	root   *os.File // OUT, opened through the os.Root
	rootFd int
	open   map[string]*dirHandle // by OUT-relative, slash-separated path, but "."
	clock  uint64                // the stamp of the latest use
	// ancestors are the proper ancestors of the directories published
	// into ("." among them), synced by sync.
	ancestors map[string]bool
	maxOpen   int

	// The background syncer: syncAsync hands it the handles it syncs,
	// then closes.
	syncq   chan int
	workers sync.WaitGroup
	errMu   sync.Mutex
	err     error // the first failed sync's
}

// dirHandle is one open directory of dirHandles.
type dirHandle struct {
	fd    int
	used  uint64 // dirHandles.clock when last used
	dirty bool   // a file was published into it since it was opened
}

const (
	// dirHandlesMax bounds the handles a commit keeps open.
	dirHandlesMax = 1024
	// dirSyncParallel is how many directories are synced at once.
	dirSyncParallel = 16
)

// newDirHandles opens OUT's directory through root.
func newDirHandles(root *os.Root, maxOpen int) (*dirHandles, error) {
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	h := &dirHandles{root: f, rootFd: int(f.Fd()), open: map[string]*dirHandle{},
		ancestors: map[string]bool{}, maxOpen: max(maxOpen, 2), syncq: make(chan int)}
	h.workers.Add(dirSyncParallel)
	for range dirSyncParallel {
		go func() {
			defer h.workers.Done()
			for fd := range h.syncq {
				h.fail(unix.Fsync(fd), "sync directory")
				unix.Close(fd)
			}
		}()
	}
	return h, nil
}

// fail records err, the first one, for sync to return.
func (h *dirHandles) fail(err error, op string) {
	if err == nil {
		return
	}
	h.errMu.Lock()
	if h.err == nil {
		h.err = fmt.Errorf("%s: %w", op, err)
	}
	h.errMu.Unlock()
}

// makeRoom closes the least recently used half of the open handles when
// the cache is full, those published into once synced in the background.
// It is called before a step's lookups, never between them, so that the
// handles a step holds stay open.
func (h *dirHandles) makeRoom() {
	if len(h.open) < h.maxOpen {
		return
	}
	type aged struct {
		rel  string
		used uint64
	}
	all := make([]aged, 0, len(h.open))
	for rel, e := range h.open {
		all = append(all, aged{rel, e.used})
	}
	slices.SortFunc(all, func(a, b aged) int { return cmp.Compare(a.used, b.used) })
	for _, a := range all[:len(all)/2] {
		h.release(a.rel)
	}
}

// dir returns the handle of OUT's directory rel (relative to OUT,
// slash-separated, clean and local), opening it, and with create the
// missing directories on its way, if needed. A directory that does not
// exist is an error that matches fs.ErrNotExist; a link or a file on the
// way is refused with ErrRefused. The handle stays valid until the next
// makeRoom, sync or close.
func (h *dirHandles) dir(rel string, create bool) (int, error) {
	if rel == "." {
		return h.rootFd, nil
	}
	h.clock++
	if e := h.open[rel]; e != nil {
		e.used = h.clock
		return e.fd, nil
	}
	parent, err := h.dir(path.Dir(rel), create)
	if err != nil {
		return -1, err
	}
	base := path.Base(rel)
	fd, err := openDirAt(parent, base)
	if err == unix.ENOENT && create {
		if err = unix.Mkdirat(parent, base, 0o755); err == nil || err == unix.EEXIST {
			fd, err = openDirAt(parent, base)
		}
	}
	switch {
	case err == unix.ELOOP || err == unix.ENOTDIR:
		return -1, fmt.Errorf("%w: %s in OUT is a symbolic link or not a directory, where OUT needs a directory of its own: convbatch never writes through a link; move it away, then rerun", ErrRefused, rel)
	case err != nil:
		return -1, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	h.open[rel] = &dirHandle{fd: fd, used: h.clock}
	return fd, nil
}

// openDirAt opens the directory name in the directory dirfd, refusing a
// link (ELOOP) or a file (ENOTDIR) there.
func openDirAt(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// published records that a file was published into the directory rel,
// whose handle dir returned last: it is synced, with its ancestors,
// before the commit publishes its report.
func (h *dirHandles) published(rel string) {
	if rel == "." {
		h.ancestors["."] = true
	}
	if e := h.open[rel]; e != nil {
		e.dirty = true
	}
	for rel != "." && !h.ancestors[path.Dir(rel)] {
		rel = path.Dir(rel)
		h.ancestors[rel] = true
	}
}

// release closes the handle of rel, after syncing it (in the background)
// if it was published into.
func (h *dirHandles) release(rel string) {
	e := h.open[rel]
	delete(h.open, rel)
	switch {
	case e.dirty && h.syncq != nil:
		h.syncq <- e.fd
	case e.dirty:
		h.fail(unix.Fsync(e.fd), "sync directory")
		unix.Close(e.fd)
	default:
		unix.Close(e.fd)
	}
}

// sync makes durable every directory published into and its ancestors:
// it syncs those still open and the ancestors, and waits for the
// background syncs of the closed ones. It returns the first error, and
// leaves no handle open but OUT's.
func (h *dirHandles) sync() error {
	for rel := range h.open {
		if !h.ancestors[rel] {
			h.release(rel)
		}
	}
	for rel := range h.ancestors {
		if rel == "." {
			continue
		}
		h.makeRoom()
		if _, err := h.dir(rel, false); err != nil {
			h.fail(err, "sync directory")
			continue
		}
		h.open[rel].dirty = true
	}
	for rel := range h.open {
		h.release(rel)
	}
	if h.ancestors["."] {
		h.fail(unix.Fsync(h.rootFd), "sync directory")
	}
	h.stop()
	h.errMu.Lock()
	defer h.errMu.Unlock()
	return h.err
}

// stop waits for the background syncs to end.
func (h *dirHandles) stop() {
	if h.syncq != nil {
		close(h.syncq)
		h.workers.Wait()
		h.syncq = nil
	}
}

// close closes every handle (without syncing what sync did not) once the
// background syncs have ended.
func (h *dirHandles) close() {
	h.stop()
	for rel, e := range h.open {
		unix.Close(e.fd)
		delete(h.open, rel)
	}
	h.root.Close()
}
