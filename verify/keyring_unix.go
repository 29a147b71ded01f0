//go:build unix

package verify

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only without blocking in open: opening
// a FIFO that has no writer, or some devices, would wait there.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// clearNonBlocking puts f, a regular file, back in blocking mode.
func clearNonBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
