package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convbatch/convbatch/verify"
)

// TestKeysRefused: every command that takes --keys refuses, at once and
// with exit 2, a keyring over --max-keyring-bytes (naming the file, its
// size and the flag), one that is not a regular file (naming what it
// is), and a --max-keyring-bytes that is not a size of at least a byte;
// a cap raised to the keyring's size reads it.
func TestKeysRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	genArchive(t, in, "--conversations", "20", "--seed", "5")
	keys := in + ".keys.json"
	st, err := os.Stat(keys)
	if err != nil {
		t.Fatal(err)
	}
	size := st.Size()
	fifo := filepath.Join(dir, "keys.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"run", "-o", filepath.Join(dir, "out")}, {"extract", "-o", filepath.Join(dir, "out")}, {"verify"}} {
		for _, tc := range []struct {
			name string
			args []string
			code int
			says []string
		}{
			{name: "over the cap", args: []string{"--keys", keys, "--max-keyring-bytes", fmt.Sprint(size - 1)}, code: ExitUsage,
				says: []string{keys, fmt.Sprintf("(%d bytes)", size), "--max-keyring-bytes"}},
			{name: "dev zero", args: []string{"--keys", "/dev/zero"}, code: ExitUsage, says: []string{"/dev/zero is a character device, not a regular file"}},
			{name: "fifo", args: []string{"--keys", fifo}, code: ExitUsage, says: []string{fifo + " is a named pipe (FIFO)"}},
			{name: "directory", args: []string{"--keys", dir}, code: ExitUsage, says: []string{dir + " is a directory"}},
			{name: "not a size", args: []string{"--keys", keys, "--max-keyring-bytes", "lots"}, code: ExitUsage, says: []string{`--max-keyring-bytes "lots" is not a size`}},
			{name: "zero", args: []string{"--keys", keys, "--max-keyring-bytes", "0"}, code: ExitUsage, says: []string{`--max-keyring-bytes "0": want a size of at least 1 byte`}},
			{name: "at the cap", args: []string{"--keys", keys, "--max-keyring-bytes", fmt.Sprint(size)}, code: ExitOK},
		} {
			t.Run(cmd[0]+"/"+tc.name, func(t *testing.T) {
				args := append(append(append([]string{}, cmd...), tc.args...), in)
				start := time.Now()
				r := convbatch(t, nil, args...)
				if r.code != tc.code {
					t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
				}
				for _, s := range tc.says {
					if !strings.Contains(r.stderr, s) {
						t.Errorf("stderr %q does not say %q", r.stderr, s)
					}
				}
				if d := time.Since(start); tc.code != ExitOK && d > 30*time.Second {
					t.Errorf("refused after %v", d)
				}
			})
		}
	}
	if r := convbatch(t, nil, "hash", "--max-keyring-bytes", "1MiB", in); r.code != ExitUsage {
		t.Errorf("hash took --max-keyring-bytes: exit %d", r.code)
	}
}

// TestKeyringErr: a keyring error while the run is interrupted is the
// interrupt (exit 3), not a usage error.
func TestKeyringErr(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, tooLarge := verify.DecodeKeyring(context.Background(), strings.NewReader("{}  "), verify.WithMaxKeyringBytes(2))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		code int
	}{
		{"interrupted", cancelled, context.Canceled, ExitFatal},
		{"too large", context.Background(), tooLarge, ExitUsage},
		{"other", context.Background(), os.ErrNotExist, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := keyringErr(&env{ctx: tc.ctx}, "k.json", tc.err)
			ee, ok := err.(*exitError)
			if !ok || ee.code != tc.code {
				t.Errorf("%v: want exit %d", err, tc.code)
			}
		})
	}
}
