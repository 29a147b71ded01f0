package outdir

import "golang.org/x/sys/unix"

// syncFileSystem makes durable everything written to the file system that
// holds the open file fd: syncfs(2), which since Linux 5.8 reports the
// writeback errors of that file system since fd was opened.
func syncFileSystem(fd int) (bool, error) {
	return true, unix.Syncfs(fd)
}
