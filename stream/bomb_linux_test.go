//go:build linux

package stream

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bombEnv names the file the child of TestZstdBombPeakMemory reads.
const bombEnv = "CONVBATCH_TEST_BOMB"

// TestZstdBombPeakMemory (issue 45 item 13): a zstd stream of zeros with
// a 128 MiB window (`zstd --long=27`), one line far over the 64 MiB cap,
// is read with the defaults and a spool in a child process, whose peak
// resident memory (VmHWM) must stay under 200 MiB: the decoder's window
// (128 MiB and two blocks) and what the line costs. Before, the line's
// buffer grew to the cap twice beside the window and the old buffers
// (128 + 64 + 64 + 32 MiB and more); now the line is spilled to the
// spool once it outgrows 16 MiB. The bound is loose on purpose (the
// child measured about 165 MiB); it asserts memory, never a speed.
func TestZstdBombPeakMemory(t *testing.T) {
	if path := os.Getenv(bombEnv); path != "" {
		bombChild(path)
		return
	}
	if testing.Short() {
		t.Skip("reads 512 MiB of decompressed zeros")
	}
	zstdCmd, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("zstd command not installed")
	}
	bomb := filepath.Join(t.TempDir(), "bomb.jsonl.zst")
	zc := exec.Command(zstdCmd, "--long=27", "-q", "-o", bomb)
	zc.Stdin = io.LimitReader(zeros{}, 512<<20)
	if out, err := zc.CombinedOutput(); err != nil {
		t.Fatalf("zstd --long=27: %v: %s", err, out)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestZstdBombPeakMemory$")
	child.Env = append(os.Environ(), bombEnv+"="+bomb)
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	var hwm, lines, length int64
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "bomb: "); ok {
			fmt.Sscanf(rest, "VmHWM %d kB, %d lines, length %d", &hwm, &lines, &length)
		}
	}
	if lines != 1 || length != 512<<20 {
		t.Fatalf("child framed %d lines, length %d; want 1 too-large line of 512 MiB: %s", lines, length, out)
	}
	t.Logf("peak RSS of the child: %d MiB", hwm>>10)
	if hwm == 0 || hwm > 200<<10 {
		t.Fatalf("peak RSS %d KiB, want under 200 MiB: %s", hwm, out)
	}
}

// bombChild frames the file at path and prints its peak RSS.
func bombChild(path string) {
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	spool, err := NewSpool(filepath.Dir(path))
	if err != nil {
		panic(err)
	}
	defer spool.Close()
	r, err := NewReader(f, path, ShapeJSONLZstd, WithSpool(spool))
	if err != nil {
		panic(err)
	}
	var length int64
	var b Batch
	for {
		err := r.ReadBatch(&b)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		for _, rec := range b.Recs {
			length += rec.Length
		}
	}
	r.Close()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		panic(err)
	}
	var hwm int64
	for _, l := range bytes.Split(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			hwm, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
		}
	}
	fmt.Printf("bomb: VmHWM %d kB, %d lines, length %d\n", hwm, r.Lines(), length)
}
