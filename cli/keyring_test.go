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

// TestKeysGivenOnce: every command that takes --keys refuses it given
// more than once (exit 2, one line naming every file, a URL without its
// user information or query), before it reads or writes anything,
// instead of silently using the last keyring (issue 45 item 3); --help
// says so. A keyring that pins no key is used, with a warning that -q
// leaves out; one that pins a key gets none.
func TestKeysGivenOnce(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	genArchive(t, in, "--conversations", "10", "--seed", "3")
	keys := in + ".keys.json"
	other := filepath.Join(dir, "b.keys.json")
	putFile(t, other, []byte(`{"envelope_keys": [], "agents": {}}`))
	empty := filepath.Join(dir, "empty.json")
	putFile(t, empty, []byte(`{}`))
	noAgentKeys := filepath.Join(dir, "noagentkeys.json")
	putFile(t, noAgentKeys, []byte(`{"envelope_keys": [], "agents": {"agent-1": []}}`))
	url := "https://user:secret@keys.example/k.json?X-Amz-Signature=secret"
	out := filepath.Join(dir, "out")
	for _, cmd := range [][]string{{"run", "-o", out}, {"extract", "-o", out}, {"verify"}} {
		if r := convbatch(t, nil, "help", cmd[0]); !strings.Contains(r.stdout, "two keyrings are refused, not merged") {
			t.Errorf("help %s does not say --keys is given once:\n%s", cmd[0], r.stdout)
		}
		for _, tc := range []struct {
			name string
			keys []string
			want string
		}{
			{"twice", []string{keys, other}, "convbatch: --keys given twice (" + keys + ", " + other + "): give one keyring; put both files' keys in one\n"},
			{"same file twice", []string{keys, keys}, "convbatch: --keys given twice (" + keys + ", " + keys + "): give one keyring; put both files' keys in one\n"},
			{"three times", []string{keys, other, empty}, "convbatch: --keys given 3 times (" + keys + ", " + other + ", " + empty + "): give one keyring; put both files' keys in one\n"},
			{"a URL", []string{url, keys}, "convbatch: --keys given twice (https://keys.example/k.json, " + keys + "): give one keyring; put both files' keys in one\n"},
		} {
			t.Run(cmd[0]+"/"+tc.name, func(t *testing.T) {
				args := append([]string{}, cmd...)
				for _, k := range tc.keys {
					args = append(args, "--keys", k)
				}
				r := convbatch(t, nil, append(args, in)...)
				if r.code != ExitUsage || r.stderr != tc.want || r.stdout != "" {
					t.Errorf("exit %d, stderr %q, want exit 2 and %q", r.code, r.stderr, tc.want)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("the refused command created %s", out)
				}
			})
		}
		for _, tc := range []struct {
			name, keys   string
			quiet, warns bool
		}{
			{"{}", empty, false, true},
			{"empty lists", other, false, true},
			{"an agent without keys", noAgentKeys, false, true},
			{"{} with -q", empty, true, false},
			{"pins keys", keys, false, false},
		} {
			t.Run(cmd[0]+"/"+tc.name, func(t *testing.T) {
				args := append(append([]string{}, cmd...), "--keys", tc.keys)
				if cmd[0] != "verify" {
					args[2] = filepath.Join(t.TempDir(), "out")
				}
				if tc.quiet {
					args = append(args, "-q")
				}
				r := convbatch(t, nil, append(args, in)...)
				warning := "convbatch: warning: --keys " + tc.keys + " pins no key (no envelope_keys, no agents): no receipt can be valid against it (see docs/FORMAT.md#keyring---keys-file)\n"
				if n := strings.Count(r.stderr, warning); tc.warns && n != 1 || !tc.warns && strings.Contains(r.stderr, "pins no key") {
					t.Errorf("warned %d times (want %v): %s", n, tc.warns, r.stderr)
				}
				// Not refused: the keyring is used, and every receipt
				// is invalid against an empty one.
				want := ExitOK
				if tc.keys != keys {
					want = ExitFindings
				}
				if r.code != want {
					t.Errorf("exit %d, want %d: %s", r.code, want, r.stderr)
				}
			})
		}
	}
}
