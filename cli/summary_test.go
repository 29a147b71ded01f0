package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/sink"
)

// nightFixture is what the tests of nightly reporting run over: a clean
// directory (its sidecar and a dot-file skipped), one with findings
// (invalid receipts beside their sidecars, and a reject) and one damaged
// input.
type nightFixture struct {
	clean, findings, damaged string
	// damagedFile is the damaged input and damagedAt the decompressed
	// offset its fault is reported at.
	damagedFile string
	damagedAt   int64
}

func newNightFixture(t *testing.T) nightFixture {
	t.Helper()
	dir := t.TempDir()
	f := nightFixture{clean: filepath.Join(dir, "clean"), findings: filepath.Join(dir, "findings"), damaged: filepath.Join(dir, "damaged")}
	for _, d := range []string{f.clean, f.findings, f.damaged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	genArchive(t, filepath.Join(f.clean, "a.jsonl"), "--conversations", "8", "--seed", "1", "--no-receipts")
	putFile(t, filepath.Join(f.clean, ".DS_Store"), []byte("x"))
	genArchive(t, filepath.Join(f.findings, "t.jsonl"), "--conversations", "20", "--seed", "2", "--tamper", "0.5")
	putFile(t, filepath.Join(f.findings, "r.jsonl"), []byte(`{"id":"ok","messages":[]}`+"\n"+`not json`+"\n"))

	// Three zstd frames, the second of which fails its checksum: the input
	// is read to its end and reported zstd-checksum at the end of that
	// frame, with no reject (every line is whole).
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	var comp []byte
	var ends []int
	var plain int64
	for fr := range 3 {
		var part bytes.Buffer
		for n := range 5 {
			fmt.Fprintf(&part, `{"id":"f%d-%d","messages":[{"role":"user","content":"x"}]}`+"\n", fr, n)
		}
		if fr < 2 {
			plain += int64(part.Len())
		}
		comp = enc.EncodeAll(part.Bytes(), comp)
		ends = append(ends, len(comp))
	}
	comp[ends[1]-1] ^= 0x10
	f.damagedFile, f.damagedAt = filepath.Join(f.damaged, "d.jsonl.zst"), plain
	putFile(t, f.damagedFile, comp)
	return f
}

// damagedLine is the stderr line that names the fixture's damaged input.
func (f nightFixture) damagedLine() string {
	return fmt.Sprintf("convbatch: damaged input %s: zstd-checksum at decompressed byte %d (docs/FORMAT.md#input-faults)\n", f.damagedFile, f.damagedAt)
}

// commandArgs is how each reporting command is run over input: into a new
// OUT under dir for run and extract.
func commandArgs(t *testing.T, command, input string, extra ...string) []string {
	args := []string{command, "--progress", "never"}
	switch command {
	case "run", "extract":
		args = append(args, "-o", filepath.Join(t.TempDir(), "out"))
	}
	return append(append(args, extra...), input)
}

var reportingCommands = []string{"run", "extract", "verify", "hash"}

// TestDamagedNamed: every reporting command names each damaged input on
// stderr with its fault code and offset, as report.json has them.
func TestDamagedNamed(t *testing.T) {
	f := newNightFixture(t)
	// The reason and offset run's report.json gives.
	out := filepath.Join(t.TempDir(), "out")
	runOK(t, "run", "--progress", "never", "-o", out, f.damaged)
	var rep sink.Report
	readJSON(t, filepath.Join(out, sink.ReportFile), &rep)
	if e := rep.Inputs[0].Error; e == nil || e.Reason != "zstd-checksum" || e.Offset != f.damagedAt {
		t.Fatalf("report: input %+v, error %+v; the fixture expects zstd-checksum at %d", rep.Inputs[0], e, f.damagedAt)
	}
	for _, c := range reportingCommands {
		t.Run(c, func(t *testing.T) {
			// Beside a clean input, which is not named.
			args := append(commandArgs(t, c, f.damaged), f.clean)
			r := convbatch(t, nil, args...)
			if r.code != ExitFindings || strings.Count(r.stderr, f.damagedLine()) != 1 || strings.Count(r.stderr, "damaged input") != 1 {
				t.Errorf("exit %d, stderr:\n%s\nwant once: %s", r.code, r.stderr, f.damagedLine())
			}
		})
	}
}
