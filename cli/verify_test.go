package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// TestVerifyTampered: verify on a gen --tamper archive gives exactly the
// statuses gen expects, with and without the keyring, and the exit code
// says whether anything is invalid.
func TestVerifyTampered(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "audit.jsonl.zst")
	exp := genArchive(t, in, "--conversations", "600", "--seed", "31", "--tamper", "0.6")
	if exp.Receipts.Invalid == 0 || exp.Receipts.Incomplete == 0 || exp.ReceiptsWithoutKeys.Valid == exp.Receipts.Valid {
		t.Fatalf("the archive does not exercise every status: %+v", exp.Receipts)
	}
	for _, keys := range []bool{true, false} {
		args := []string{"verify", "--json"}
		if keys {
			args = append(args, "--keys", in+".keys.json")
		}
		r := convbatch(t, nil, append(args, in)...)
		if r.code != 1 {
			t.Fatalf("keys=%v: exit %d, want 1: %s", keys, r.code, r.stderr)
		}
		var out struct {
			sink.Report
			ReceiptList []verify.ReceiptResult `json:"receipt_list"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("verify --json: %v", err)
		}
		checkAgainstExpect(t, &out.Report, exp)
		checkReceiptList(t, out.ReceiptList, exp, keys)
		if keys != (out.Receipts.Keyring == "pinned") {
			t.Errorf("keyring mode %q with keys=%v", out.Receipts.Keyring, keys)
		}
		if !strings.Contains(r.stderr, fmt.Sprintf("%d invalid", out.Receipts.Invalid)) {
			t.Errorf("summary lacks the invalid count: %s", r.stderr)
		}
		if !keys && !strings.Contains(r.stderr, "self-consistency only") {
			t.Errorf("summary does not say the receipts were checked for self-consistency only")
		}
	}
	// Untampered: exit 0.
	clean := filepath.Join(dir, "clean.jsonl")
	genArchive(t, clean, "--conversations", "150", "--seed", "32")
	if r := convbatch(t, nil, "verify", "--keys", clean+".keys.json", clean); r.code != 0 {
		t.Fatalf("clean verify: exit %d: %s", r.code, r.stderr)
	}
	if r := convbatch(t, nil, "verify", "--keys", filepath.Join(dir, "nope.json"), clean); r.code != 2 {
		t.Fatalf("missing keyring: exit %d", r.code)
	}
}

// TestHashMatchesReference: convbatch hash prints, in input order, the
// SHA-256 of the reference JCS of every document.
func TestHashMatchesReference(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "h.jsonl")
	genArchive(t, in, "--conversations", "120", "--seed", "41")
	r := convbatch(t, nil, "hash", "-j", "2", in)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	docs := bytes.Split(bytes.TrimSuffix(decompress(t, in), []byte("\n")), []byte("\n"))
	if len(lines) != len(docs) {
		t.Fatalf("%d hash lines for %d documents", len(lines), len(docs))
	}
	for i, d := range docs {
		canon, err := jcs.Transform(d)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(canon)
		var doc struct{ ID string }
		json.Unmarshal(d, &doc)
		if want := hex.EncodeToString(sum[:]) + "  " + doc.ID; lines[i] != want {
			t.Fatalf("line %d: %q, want %q", i+1, lines[i], want)
		}
	}
	// An unhashable document is named on stderr and the exit code is 1.
	bad := filepath.Join(dir, "bad.jsonl")
	writeFile(t, bad, `{"id":"u","messages":[],"x":1e400}`+"\n"+`{"id":"ok","messages":[]}`+"\n")
	r = convbatch(t, nil, "hash", bad)
	if r.code != 1 || !strings.Contains(r.stderr, bad+":1: no transcript hash") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("unhashable: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestConformanceCommand runs the committed vectors through the command.
func TestConformanceCommand(t *testing.T) {
	r := convbatch(t, nil, "conformance", filepath.Join("..", "conformance", "vectors"))
	if r.code != 0 || !strings.Contains(r.stdout, " passed, 0 failed") || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := convbatch(t, nil, "conformance", filepath.Join(t.TempDir(), "none")); r.code != 2 {
		t.Fatalf("missing dir: exit %d", r.code)
	}
}
