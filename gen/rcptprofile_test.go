package gen_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/cli"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/verify"
)

// receiptLine is what the tests read back of a carrying document.
type receiptLine struct {
	ID               string `json:"id"`
	ConsensusReceipt *struct {
		Algorithm string `json:"algorithm"`
		SignedAt  string `json:"signed_at"`
		Payload   struct {
			Quorum     struct{ K, N int } `json:"quorum"`
			Statements []struct {
				AgentID   string `json:"agentId"`
				Algorithm string `json:"algorithm"`
			} `json:"statements"`
		} `json:"payload"`
	} `json:"consensusReceipt"`
}

// readReceiptLines decodes every line of a .jsonl.zst archive.
func readReceiptLines(t *testing.T, path string) []receiptLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	var lines []receiptLine
	for sc.Scan() {
		var l receiptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s line %d: %v", path, len(lines)+1, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// verifyJSON runs `convbatch verify --json --keys KEYS DIR` in process and
// returns its receipts by file and line.
func verifyJSON(t *testing.T, keys, dir string) (map[string]int64, map[string]verify.ReceiptResult) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"verify", "--json", "--progress", "never", "--keys", keys, dir}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("verify: exit %d: %s", code, stderr.String())
	}
	var rep struct {
		Receipts struct {
			Valid, Invalid, Incomplete int64
			Reasons                    map[string]int64
		} `json:"receipts"`
		ReceiptList []verify.ReceiptResult `json:"receipt_list"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("verify --json: %v", err)
	}
	counts := map[string]int64{"valid": rep.Receipts.Valid, "invalid": rep.Receipts.Invalid, "incomplete": rep.Receipts.Incomplete}
	for k, v := range rep.Receipts.Reasons {
		counts[k] = v
	}
	byPos := map[string]verify.ReceiptResult{}
	for _, r := range rep.ReceiptList {
		rel, err := filepath.Rel(dir, r.File)
		if err != nil {
			t.Fatal(err)
		}
		byPos[filepath.ToSlash(rel)+":"+itoa(r.Line)] = r
	}
	return counts, byPos
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestReceiptsProfile: a set of the receipts profile holds a receipt in
// every document but the evidence, of quorum 2 of 3 and 1 in 10 ML-DSA-65;
// `convbatch verify --keys keys.json` finds the counts expect.json gives;
// under rotated.keys.json (format 2) exactly the receipts of the revoked
// agent, and those of the expired agent signed from the middle night on,
// turn invalid, receipt for receipt.
func TestReceiptsProfile(t *testing.T) {
	const nights, perNight, convs = 4, 2, 300
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	var stderr bytes.Buffer
	if code := cli.Main([]string{"gen", "-o", set, "--nights", "4", "--conversations", "300", "--profile", "receipts", "--seed", "7"},
		strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "rotated.keys.json") {
		t.Errorf("gen's summary does not name rotated.keys.json: %q", stderr.String())
	}
	var ne gen.NightsExpect
	readJSON(t, filepath.Join(set, "expect.json"), &ne)
	wantReceipts := int64(nights * perNight * (convs - 3)) // 3 evidence documents a file
	a := ne.All.Receipts
	if got := a.Valid + a.Invalid + a.Incomplete; got != wantReceipts || ne.All.Documents != nights*perNight*convs {
		t.Fatalf("%d receipts in %d documents, want %d in %d", got, ne.All.Documents, wantReceipts, nights*perNight*convs)
	}
	if a.Invalid != 0 || a.Incomplete == 0 || a.Valid == 0 {
		t.Errorf("receipts %+v: want valid and incomplete (the last night's references to night %d), none invalid", a, nights+1)
	}
	if len(ne.All.ReceiptList) != 0 || len(ne.CrossFile) != 0 {
		t.Errorf("expect.json lists %d receipts and %d cross-file ones, want none (the files' .expect.json list them)", len(ne.All.ReceiptList), len(ne.CrossFile))
	}

	// What the archives hold.
	type rc struct {
		agents   []string
		signedAt time.Time
	}
	receipts := map[string]rc{}
	var mldsa, total int
	for _, nf := range ne.Files {
		var fe gen.Expect
		readJSON(t, filepath.Join(set, filepath.FromSlash(nf.Path))+".expect.json", &fe)
		if int64(len(fe.ReceiptList)) != convs-3 {
			t.Errorf("%s: %d receipts listed, want %d", nf.Path, len(fe.ReceiptList), convs-3)
		}
		for n, l := range readReceiptLines(t, filepath.Join(set, filepath.FromSlash(nf.Path))) {
			cr := l.ConsensusReceipt
			if cr == nil {
				if !strings.HasPrefix(l.ID, "ev-") {
					t.Errorf("%s line %d: %s carries no receipt", nf.Path, n+1, l.ID)
				}
				continue
			}
			total++
			q := cr.Payload.Quorum
			if q.K != 2 || q.N != 3 || len(cr.Payload.Statements) != 3 {
				t.Errorf("%s line %d: quorum %d of %d, %d statements; want 2 of 3", nf.Path, n+1, q.K, q.N, len(cr.Payload.Statements))
			}
			var x rc
			ml := 0
			for _, s := range cr.Payload.Statements {
				x.agents = append(x.agents, s.AgentID)
				if s.Algorithm == "ml-dsa-65" {
					ml++
				}
			}
			if cr.Algorithm == "ml-dsa-65" {
				mldsa++
				if ml != 1 {
					t.Errorf("%s line %d: an ML-DSA-65 envelope with %d ML-DSA-65 statements, want 1", nf.Path, n+1, ml)
				}
			} else if ml != 0 {
				t.Errorf("%s line %d: an Ed25519 envelope with %d ML-DSA-65 statements, want 0", nf.Path, n+1, ml)
			}
			var err error
			if x.signedAt, err = time.Parse(time.RFC3339Nano, cr.SignedAt); err != nil {
				t.Fatalf("%s line %d: signed_at: %v", nf.Path, n+1, err)
			}
			if day := x.signedAt.UTC().Format(time.DateOnly); day != nf.Day {
				t.Errorf("%s line %d: signed on %s, want the file's day %s", nf.Path, n+1, day, nf.Day)
			}
			receipts[nf.Path+":"+itoa(int64(n+1))] = x
		}
	}
	if int64(total) != wantReceipts {
		t.Fatalf("%d receipts in the archives, want %d", total, wantReceipts)
	}
	if share := float64(mldsa) / float64(total); share < 0.06 || share > 0.14 {
		t.Errorf("%d of %d receipts (%.3f) are ML-DSA-65, want about 1 in 10", mldsa, total, share)
	}

	// keys.json: the counts expect.json gives.
	counts, pinned := verifyJSON(t, filepath.Join(set, "keys.json"), set)
	want := map[string]int64{"valid": a.Valid, "invalid": a.Invalid, "incomplete": a.Incomplete}
	for k, v := range a.Reasons {
		want[k] = v
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("verify --keys keys.json: %v, want %v", counts, want)
	}
	if len(pinned) != total {
		t.Fatalf("verify lists %d receipts, want %d", len(pinned), total)
	}

	// rotated.keys.json: which receipts change, and why.
	var kr struct {
		Agents map[string][]struct {
			NotAfter string `json:"not_after"`
			Revoked  *struct {
				CompromisedSince string `json:"compromised_since"`
			} `json:"revoked"`
		} `json:"agents"`
	}
	readJSON(t, filepath.Join(set, gen.RotatedKeysName), &kr)
	var revoked, expired string
	var mid time.Time
	for id, keys := range kr.Agents {
		if len(keys) != 1 {
			t.Fatalf("agent %s: %d keys, want 1", id, len(keys))
		}
		if r := keys[0].Revoked; r != nil {
			revoked = id
			mid, _ = time.Parse(time.RFC3339, r.CompromisedSince)
		}
		if keys[0].NotAfter != "" {
			expired = id
			if na, _ := time.Parse(time.RFC3339, keys[0].NotAfter); !na.Equal(nightStart(t, ne.Files[0], nights/2+1)) {
				t.Errorf("not_after %s, want night %d's start", keys[0].NotAfter, nights/2+1)
			}
		}
	}
	if revoked == "" || expired == "" || revoked == expired || !mid.Equal(nightStart(t, ne.Files[0], nights/2+1)) {
		t.Fatalf("rotated keyring: revoked %q (since %s), expired %q; want two agents, night %d", revoked, mid, expired, nights/2+1)
	}
	counts, rotated := verifyJSON(t, filepath.Join(set, gen.RotatedKeysName), set)
	if counts["key-revoked"] == 0 || counts["key-expired"] == 0 || counts["key-expired"] >= int64(total)/2 {
		t.Errorf("rotated: %v; want some key-revoked and key-expired (fewer than half)", counts)
	}
	for pos, x := range receipts {
		p, okP := pinned[pos]
		r, okR := rotated[pos]
		if !okP || !okR {
			t.Fatalf("%s: not in verify's receipt_list", pos)
		}
		wantReasons := slices.Clone(p.Reasons)
		// The run witnesses every receipt now, after compromised_since:
		// each statement of the revoked key fails, whenever signed.
		if slices.Contains(x.agents, revoked) {
			wantReasons = append(wantReasons, "key-revoked")
		}
		if slices.Contains(x.agents, expired) && !x.signedAt.Before(mid) {
			wantReasons = append(wantReasons, "key-expired")
		}
		got := slices.Clone(r.Reasons)
		slices.Sort(got)
		slices.Sort(wantReasons)
		if !slices.Equal(got, wantReasons) {
			t.Errorf("%s: reasons %v under the rotated keyring, want %v (agents %v, signed %s)", pos, r.Reasons, wantReasons, x.agents, x.signedAt)
		}
		if len(wantReasons) > len(p.Reasons) && r.Status != verify.StatusInvalid {
			t.Errorf("%s: %s under the rotated keyring, want invalid", pos, r.Status)
		}
	}
}

// nightStart is the start (00:00Z) of night n of the set nf belongs to.
func nightStart(t *testing.T, nf gen.NightsFile, n int) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, nf.Day)
	if err != nil {
		t.Fatal(err)
	}
	return d.AddDate(0, 0, n-nf.Night)
}

// TestReceiptsProfileStable: the same options write the same bytes, and
// the first nights of a longer set are byte for byte those of a shorter
// one (archives and their .expect.json); only expect.json and
// rotated.keys.json (whose middle night is nights/2+1) may differ.
func TestReceiptsProfileStable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, nights int) map[string][]byte {
		t.Helper()
		d := filepath.Join(dir, name)
		if _, err := gen.WriteNights(d, gen.NightsOptions{Nights: nights, FilesPerNight: 2, Conversations: 60, Seed: 3, Profile: gen.ProfileReceipts}); err != nil {
			t.Fatal(err)
		}
		return readTree(t, d)
	}
	a, b, longer := write("a", 2), write("b", 2), write("c", 3)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same options wrote different sets")
	}
	for _, name := range []string{"keys.json", gen.RotatedKeysName, "expect.json", "night-1/a.jsonl.zst", "night-2/b.jsonl.zst.expect.json"} {
		if len(a[name]) == 0 {
			t.Errorf("%s missing or empty", name)
		}
	}
	for name, data := range a {
		switch {
		case name == gen.RotatedKeysName: // its middle night is nights/2+1
		case name == "expect.json":
			if bytes.Equal(data, longer[name]) {
				t.Errorf("%s: the same with 2 and 3 nights", name)
			}
		case !bytes.Equal(data, longer[name]):
			t.Errorf("%s: differs between 2 and 3 nights", name)
		}
	}
	if len(longer) != len(a)+4 { // night-3/{a,b}.jsonl.zst and their .expect.json
		t.Errorf("%d files with 3 nights, %d with 2", len(longer), len(a))
	}
}

// TestReceiptsProfileFlagErrors: gen refuses what the receipts profile
// cannot write, with a usage error (exit 2) naming the flag, before
// writing anything.
func TestReceiptsProfileFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		out  string
		args []string
	}{
		{"x.jsonl", []string{"--profile", "receipts", "--conversations", "100"}},
		{"set", []string{"--nights", "2", "--profile", "short", "--conversations", "100"}},
		{"set", []string{"--nights", "2", "--profile", "receipts", "--conversations", "100", "--tamper", "0.1"}},
		{"set", []string{"--nights", "2", "--profile", "receipts", "--conversations", "100", "--faults", "0.1"}},
	} {
		out := filepath.Join(dir, tc.out)
		var stderr bytes.Buffer
		code := cli.Main(append([]string{"gen", "-o", out}, tc.args...), strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--profile") {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", tc.args, out)
		}
	}
}
