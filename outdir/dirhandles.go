package outdir

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
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
// At most about maxOpen handles stay open (the process's file limit may
// be low, and a partitioned table may have many thousands of
// directories): when the cache is full the least recently used half is
// closed, and those a file was published into are remembered. Once every
// rename is done, sync makes durable, dirSyncParallel at a time, every
// directory published into and every ancestor of one (the entry of a
// directory the commit created is in its parent). The syncs wait for the
// renames: run beside them, their writes hold up the creation of
// directories, which waits for the blocks being written.
type dirHandles struct {
	root   *os.File // OUT, opened through the os.Root
	rootFd int
	open   map[string]*dirHandle // by OUT-relative, slash-separated path, but "."
	clock  uint64                // the stamp of the latest use
	// unsynced are the directories published into whose handles were
	// closed; ancestors the proper ancestors of every directory published
	// into ("." among them). sync syncs both, and the open ones published
	// into.
	unsynced  map[string]bool
	ancestors map[string]bool
	maxOpen   int
}

// dirHandle is one open directory of dirHandles.
type dirHandle struct {
	fd    int
	used  uint64 // dirHandles.clock when last used
	dirty bool   // a file was published into it
}

const (
	// dirHandlesMax bounds the handles a commit keeps open.
	dirHandlesMax = 1024
	// dirSyncParallel is how many directories are synced at once.
	dirSyncParallel = 16
)

// dirHandlesLimit returns how many directory handles a commit keeps
// open: half of what the process may still open (the soft RLIMIT_NOFILE,
// which Go raises to the hard limit at start, less the descriptors open
// now), once the commit's other descriptors are set aside (the
// directories synced at once, a descriptor per CPU while makeDirs runs,
// the handles a lookup opens beyond the cache, one per level of a path),
// at most dirHandlesMax and at least 4. Under `ulimit -n 64` a commit
// that kept 1,024 handles failed half way with "too many open files".
func dirHandlesLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return dirHandlesMax
	}
	open := 64 // when /proc cannot say
	if entries, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = len(entries)
	}
	free := int64(rl.Cur) - int64(open)
	if rl.Cur == unix.RLIM_INFINITY || free > 1<<20 {
		return dirHandlesMax
	}
	spare := free - dirSyncParallel - int64(runtime.GOMAXPROCS(0)) - 2 - dirDepthSpare
	return int(min(max(spare/2, 4), dirHandlesMax))
}

// dirDepthSpare is the descriptors set aside for a lookup's walk to a
// directory deeper than the cache holds (dir opens every missing parent
// before makeRoom is called again).
const dirDepthSpare = 32

// newDirHandles opens OUT's directory through root.
func newDirHandles(root *os.Root, maxOpen int) (*dirHandles, error) {
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	return &dirHandles{root: f, rootFd: int(f.Fd()), open: map[string]*dirHandle{},
		unsynced: map[string]bool{}, ancestors: map[string]bool{}, maxOpen: max(maxOpen, 2)}, nil
}

// makeRoom closes the least recently used half of the open handles when
// the cache is full. It is called before a step's lookups, never between
// them, so that the handles a step holds stay open.
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
		e := h.open[a.rel]
		if e.dirty {
			h.unsynced[a.rel] = true
		}
		unix.Close(e.fd)
		delete(h.open, a.rel)
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
	fd, err := openDirAt(parent, rel, create)
	if err != nil {
		return -1, err
	}
	h.open[rel] = &dirHandle{fd: fd, used: h.clock}
	return fd, nil
}

// openDirAt opens (and with create makes, if missing) the directory rel,
// whose parent's handle is parent: the last element of rel in parent. A
// link or a file there is refused, never followed.
func openDirAt(parent int, rel string, create bool) (int, error) {
	base := path.Base(rel)
	open := func() (int, error) {
		for {
			fd, err := unix.Openat(parent, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != unix.EINTR {
				return fd, err
			}
		}
	}
	fd, err := open()
	if err == unix.ENOENT && create {
		if err = unix.Mkdirat(parent, base, 0o755); err == nil || err == unix.EEXIST {
			fd, err = open()
		}
	}
	switch {
	case err == unix.ELOOP || err == unix.ENOTDIR:
		return -1, fmt.Errorf("%w: %s in OUT is a symbolic link or not a directory, where OUT needs a directory of its own: convbatch never writes through a link; move it away, then rerun", ErrRefused, rel)
	case err != nil:
		return -1, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	return fd, nil
}

// makeDirs makes the directories dirs (OUT-relative, as for dir) that are
// missing, before the renames into them: the directories of one parent
// one after the other (mkdir(2) locks the parent), those of different
// parents (the tables) at once, one parent per CPU. A partitioned night
// of 10,000 days makes as many directories in each table, which the
// renames alone made one at a time: 3.5 of the commit's 4.2 CPU-seconds.
// A link or a file where a parent belongs is refused as by dir; one where
// a directory of dirs belongs is left for the renames to refuse.
func (h *dirHandles) makeDirs(dirs []string) error {
	children := map[string][]string{}
	seen := map[string]bool{}
	for _, rel := range dirs {
		if rel == "." || seen[rel] {
			continue
		}
		seen[rel] = true
		children[path.Dir(rel)] = append(children[path.Dir(rel)], path.Base(rel))
	}
	// A parent that is itself among dirs is made first, by the walk of
	// dir below.
	parents := make([]string, 0, len(children))
	for p := range children {
		parents = append(parents, p)
	}
	slices.Sort(parents)
	type job struct {
		fd    int
		names []string
	}
	jobs := make(chan job)
	errs := make(chan error, len(parents))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(parents)) {
		wg.Go(func() {
			for j := range jobs {
				errs <- mkdirsAt(j.fd, j.names)
				unix.Close(j.fd)
			}
		})
	}
	var err error
	for _, p := range parents {
		h.makeRoom()
		var fd int
		if fd, err = h.dir(p, true); err == nil {
			// A copy of its own: the cache may close the handle.
			fd, err = unix.Dup(fd)
		}
		if err != nil {
			break
		}
		jobs <- job{fd, children[p]}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for e := range errs {
		if err == nil {
			err = e
		}
	}
	return err
}

// mkdirsAt makes the directories names in the directory parent, those
// that are missing.
func mkdirsAt(parent int, names []string) error {
	for _, name := range names {
		if err := unix.Mkdirat(parent, name, 0o755); err != nil && err != unix.EEXIST {
			return &fs.PathError{Op: "mkdir", Path: name, Err: err}
		}
	}
	return nil
}

// published records that a file was published into the directory rel,
// whose handle dir returned last: sync makes it durable, with its
// ancestors.
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

// sync makes durable every directory published into and its ancestors,
// dirSyncParallel at a time, each through a handle of its own opened in
// its parent's; it returns the first error. The cached handles stay open.
func (h *dirHandles) sync() error {
	todo := h.unsynced
	h.unsynced = map[string]bool{}
	for rel, e := range h.open {
		if e.dirty {
			todo[rel] = true
			e.dirty = false
		}
	}
	for rel := range h.ancestors {
		todo[rel] = true
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	fds := make(chan int)
	wg.Add(dirSyncParallel)
	for range dirSyncParallel {
		go func() {
			defer wg.Done()
			for fd := range fds {
				if err := unix.Fsync(fd); err != nil {
					fail(fmt.Errorf("sync directory: %w", err))
				}
				unix.Close(fd)
			}
		}()
	}
	for rel := range todo {
		if rel == "." {
			continue
		}
		h.makeRoom()
		parent, err := h.dir(path.Dir(rel), false)
		var fd int
		if err == nil {
			fd, err = openDirAt(parent, rel, false)
		}
		if err != nil {
			fail(fmt.Errorf("sync directory: %w", err))
			break
		}
		fds <- fd
	}
	close(fds)
	wg.Wait()
	if todo["."] {
		if err := unix.Fsync(h.rootFd); err != nil {
			fail(fmt.Errorf("sync directory: %w", err))
		}
	}
	return firstErr
}

// close closes every handle.
func (h *dirHandles) close() {
	for rel, e := range h.open {
		unix.Close(e.fd)
		delete(h.open, rel)
	}
	h.root.Close()
}
