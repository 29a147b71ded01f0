//go:build unix

package verify

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadKeyringRefuses: what is not a readable keyring file of at most
// the cap is refused at once, by name, with what it is; none of it waits.
func TestLoadKeyringRefuses(t *testing.T) {
	dir := t.TempDir()
	good := []byte(`{"agents":{}}` + strings.Repeat(" ", 100))
	regular := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(regular, good, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO with a writer that never writes nor closes: reading it would
	// wait for ever.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lonely := filepath.Join(dir, "lonely.fifo")
	if err := syscall.Mkfifo(lonely, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "k.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name, path string
		ctx        context.Context
		opts       []KeyringOption
		is         error
		says       []string
	}{
		{name: "over the cap", path: regular, opts: []KeyringOption{WithMaxKeyringBytes(100)}, is: ErrKeyringTooLarge,
			says: []string{regular, "113 B (113 bytes)", "over the keyring size cap of 100 B (100 bytes)"}},
		{name: "dev zero", path: "/dev/zero", is: ErrKeyringNotRegular, says: []string{"keyring /dev/zero is a character device, not a regular file"}},
		{name: "fifo with a writer", path: fifo, is: ErrKeyringNotRegular, says: []string{fifo, "is a named pipe (FIFO)"}},
		{name: "fifo without a writer", path: lonely, is: ErrKeyringNotRegular, says: []string{lonely, "is a named pipe (FIFO)"}},
		{name: "directory", path: dir, is: ErrKeyringNotRegular, says: []string{dir, "is a directory"}},
		{name: "socket", path: sock, is: ErrKeyringNotRegular, says: []string{sock, "is a socket"}},
		{name: "missing", path: filepath.Join(dir, "nope.json"), is: fs.ErrNotExist, says: []string{"nope.json"}},
		{name: "cancelled context", path: regular, ctx: cancelled, is: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			done := make(chan error, 1)
			go func() {
				_, err := LoadKeyringContext(ctx, tc.path, tc.opts...)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("LoadKeyringContext did not return")
			}
			if !errors.Is(err, tc.is) {
				t.Fatalf("error %v, want %v", err, tc.is)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
	// At the cap, the file is read.
	if _, err := LoadKeyringContext(context.Background(), regular, WithMaxKeyringBytes(int64(len(good)))); err != nil {
		t.Errorf("a keyring of exactly the cap: %v", err)
	}
	if _, err := LoadKeyringContext(context.Background(), regular, WithMaxKeyringBytes(0)); err == nil {
		t.Error("a cap of 0 accepted")
	}
}
