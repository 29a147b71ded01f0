package sink

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing the n bytes of f from
// off (to the end of the file if n is 0) to disk, and does not wait for
// it: sync_file_range(2) with SYNC_FILE_RANGE_WRITE, which makes nothing
// durable (neither the file's metadata nor the disk's cache is written)
// but leaves the commit's fsync little to write. It is a hint: an error
// (a file system without it) is ignored.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
