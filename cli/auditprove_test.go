package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/convbatch/convbatch/outdir"
)

// TestAuditProve: the chain `audit prove --json` prints is re-checked
// link by link without convbatch's code: the document line through the
// zstd command and SHA-256, the archive's digest in the manifest's bytes,
// the manifest's leaf hash and its inclusion proof with tlog.CheckRecord,
// the proof's size and root against the checkpoint the user kept.
func TestAuditProve(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("no zstd command")
	}
	dir := t.TempDir()
	out, kept, _ := threeNights(t, dir)
	// Receipts of each night: prove one of night 1 and one of night 3.
	var wants []string
	for _, rel := range []string{"receipts/receipts-r000001.jsonl", "receipts/receipts-r000003.jsonl"} {
		b, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			File string `json:"file"`
			Line int64  `json:"line"`
		}
		first, _, _ := bytes.Cut(b, []byte("\n"))
		if err := json.Unmarshal(first, &r); err != nil {
			t.Fatal(err)
		}
		wants = append(wants, fmt.Sprintf("%s:%d", r.File, r.Line))
	}
	keptCP, _ := os.ReadFile(filepath.Join(kept, "3"))
	for _, want := range wants {
		t.Run(want, func(t *testing.T) {
			r := convbatch(t, nil, "audit", "prove", "--json", out, want)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var c ProofChain
			if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%s:%d", c.Receipt.File, c.Receipt.Line) != want {
				t.Fatalf("receipt %+v, want %s", c.Receipt, want)
			}
			// The line, by the zstd command.
			arch := filepath.Join(out, filepath.FromSlash(c.Document.Archive))
			plain, err := exec.Command("zstd", "-dc", arch).Output()
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(plain, []byte("\n"))
			line := lines[c.Document.Line-1]
			if sum := sha256.Sum256(line); hex.EncodeToString(sum[:]) != c.Document.SHA256 || !bytes.Contains(line, []byte(`"`+c.Receipt.ConversationID+`"`)) {
				t.Fatalf("line %d of %s: SHA-256 %x, printed %s", c.Document.Line, arch, sum, c.Document.SHA256)
			}
			// The archive, in the manifest's bytes.
			ab, _ := os.ReadFile(arch)
			asum := sha256.Sum256(ab)
			mb, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(c.Manifest.Path)))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Files []struct {
					Path   string `json:"path"`
					Size   int64  `json:"size"`
					SHA256 string `json:"sha256"`
				} `json:"files"`
			}
			json.Unmarshal(mb, &m)
			listed := false
			for _, f := range m.Files {
				listed = listed || f.Path == c.File.Path && f.Size == int64(len(ab)) && f.SHA256 == hex.EncodeToString(asum[:]) && f.SHA256 == c.File.SHA256
			}
			if !listed || c.Manifest.Path != fmt.Sprintf(".convbatch/state/manifests/run-%06d.json", c.File.Run) {
				t.Fatalf("%s (%x) not in %s as printed", c.File.Path, asum, c.Manifest.Path)
			}
			// The leaf and its inclusion proof.
			if tlog.RecordHash(mb) != c.Manifest.LeafHash || c.Manifest.LeafIndex != int64(c.File.Run-1) {
				t.Fatalf("leaf hash %s, index %d: not the manifest's", c.Manifest.LeafHash, c.Manifest.LeafIndex)
			}
			if err := tlog.CheckRecord(c.Proof.Hashes, c.Proof.TreeSize, c.Proof.Root, c.Manifest.LeafIndex, c.Manifest.LeafHash); err != nil {
				t.Fatalf("inclusion proof: %v", err)
			}
			// The checkpoint: the kept one's size and root.
			kl := strings.Split(string(keptCP), "\n")
			if c.Checkpoint != string(keptCP) || kl[1] != fmt.Sprint(c.Proof.TreeSize) || kl[2] != c.Proof.Root.String() {
				t.Fatalf("checkpoint %q, kept %q", c.Checkpoint, keptCP)
			}
			// A forged proof does not check.
			if len(c.Proof.Hashes) > 0 {
				c.Proof.Hashes[0][0] ^= 1
				if tlog.CheckRecord(c.Proof.Hashes, c.Proof.TreeSize, c.Proof.Root, c.Manifest.LeafIndex, c.Manifest.LeafHash) == nil {
					t.Fatal("a forged proof checked")
				}
			}
			// The text form: the same links, no content without --line.
			tr := convbatch(t, nil, "audit", "prove", out, want)
			if tr.code != 0 || !strings.Contains(tr.stdout, c.Document.SHA256) || !strings.Contains(tr.stdout, c.Proof.Root.String()) || strings.Contains(tr.stdout, `"messages"`) {
				t.Fatalf("text: exit %d: %s", tr.code, tr.stdout)
			}
			if lr := convbatch(t, nil, "audit", "prove", "--line", out, want); !strings.Contains(lr.stdout, string(line)) {
				t.Fatalf("--line: the line not printed")
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no such receipt", []string{out, "conv-none"}, 2, `no receipt "conv-none"`},
		{"one argument", []string{out}, 2, "want OUT and RECEIPT"},
		{"not an OUT", []string{dir, "x:1"}, 2, "no manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := convbatch(t, nil, append([]string{"audit", "prove"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q: %s", r.code, tc.code, tc.want, r.stderr)
			}
		})
	}
	t.Run("archive edited", func(t *testing.T) {
		o2 := filepath.Join(t.TempDir(), "out")
		copyDir(t, out, o2)
		editNight(t, o2, 1, false)
		r := convbatch(t, nil, "audit", "prove", o2, wants[0])
		if r.code != 1 || !strings.Contains(r.stderr, outdir.ManifestRel(1)) {
			t.Fatalf("exit %d, want 1 naming run 1's manifest: %s", r.code, r.stderr)
		}
	})
}
