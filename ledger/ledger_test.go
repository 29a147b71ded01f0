package ledger

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func records(n int, edit map[int]string) [][]byte {
	var out [][]byte
	for i := range n {
		s := fmt.Sprintf(`{"format":1,"run":%d}`+"\n", i+1)
		if e, ok := edit[i+1]; ok {
			s = e
		}
		out = append(out, []byte(s))
	}
	return out
}

func mustBuild(t *testing.T, recs [][]byte) *Tree {
	t.Helper()
	tr, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func checkpointOf(t *testing.T, tr *Tree, origin string, size int64) *Checkpoint {
	t.Helper()
	root, err := tr.Root(size)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCheckpoint(FormatCheckpoint(origin, size, root))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTreeMatchesTlog(t *testing.T) {
	recs := records(7, nil)
	tr := mustBuild(t, recs)
	// The root is RFC 6962's over the records' leaf hashes: recompute
	// it by hand for 3 leaves.
	l := func(i int) tlog.Hash { return tlog.RecordHash(recs[i]) }
	want := tlog.NodeHash(tlog.NodeHash(l(0), l(1)), l(2))
	if got, _ := tr.Root(3); got != want {
		t.Fatalf("root(3) = %s, want %s", got, want)
	}
	back, err := ParseHashes(tr.Bytes())
	if err != nil || back.N != 7 {
		t.Fatalf("ParseHashes: %v, N %v", err, back)
	}
	for i := int64(0); i < 7; i++ {
		p, err := tr.ProveRecord(7, i)
		root, _ := tr.Root(7)
		if err != nil || tlog.CheckRecord(p, 7, root, i, tlog.RecordHash(recs[i])) != nil {
			t.Fatalf("leaf %d: inclusion proof does not check: %v", i, err)
		}
	}
}

func TestParseHashesRefuses(t *testing.T) {
	good := mustBuild(t, records(5, nil)).Bytes()
	flipped := append([]byte{}, good...)
	flipped[2*32] ^= 1 // leaf 1's interior node (index 2) no longer its leaves'
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated mid-hash", good[:len(good)-5], "not a whole number"},
		{"truncated two hashes", good[:len(good)-64], "no whole tree"},
		{"interior rewritten", flipped, "not the hash of the leaves"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHashes(tc.b)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrMalformed with %q", err, tc.want)
			}
		})
	}
	if tr, err := ParseHashes(nil); err != nil || tr.N != 0 {
		t.Fatalf("empty: %v %v", tr, err)
	}
}

func TestCheckpointParseSignVerify(t *testing.T) {
	tr := mustBuild(t, records(3, nil))
	root, _ := tr.Root(3)
	text := FormatCheckpoint("0123456789abcdef", 3, root)
	skey, vkey, err := NewKey("auditor")
	if err != nil {
		t.Fatal(err)
	}
	_, otherV, _ := NewKey("auditor")
	signed, err := Sign(text, skey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Verify(signed, vkey)
	if err != nil || c.Size != 3 || c.Root != root || c.Origin != "0123456789abcdef" {
		t.Fatalf("Verify: %+v %v", c, err)
	}
	if c, err := ParseCheckpoint(signed); err != nil || !c.Signed || string(c.Text) != string(text) {
		t.Fatalf("ParseCheckpoint(signed): %+v %v", c, err)
	}
	if _, err := Verify(signed, otherV); err == nil {
		t.Fatal("a checkpoint verified under another key")
	}
	forged := []byte(strings.Replace(string(signed), "\n3\n", "\n4\n", 1))
	if _, err := Verify(forged, vkey); err == nil {
		t.Fatal("a checkpoint whose size was changed after signing verified")
	}
	if _, err := Verify(text, vkey); err == nil {
		t.Fatal("an unsigned checkpoint verified")
	}
	for _, bad := range []string{"", "convbatch OUT x\n3\n", "go.sum database tree\n3\n" + root.String() + "\n", "convbatch OUT x\n03\n" + root.String() + "\n", "convbatch OUT x\n3\nnot-base64\n", "convbatch OUT x\n3\n" + root.String() + "\n\n"} {
		if _, err := ParseCheckpoint([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseCheckpoint(%q) = %v, want ErrMalformed", bad, err)
		}
	}
	if err := CheckSigner(vkey); err == nil {
		t.Error("a verifier key accepted as a signer key")
	}
}

func TestExtends(t *testing.T) {
	const origin = "aaaaaaaaaaaaaaaa"
	orig := mustBuild(t, records(6, nil))
	edited := records(6, map[int]string{3: `{"format":1,"run":3,"edited":true}` + "\n"})
	reordered := records(6, nil)
	reordered[1], reordered[2] = reordered[2], reordered[1]
	keptAt := func(sizes ...int64) []*Checkpoint {
		var out []*Checkpoint
		for _, s := range sizes {
			out = append(out, checkpointOf(t, orig, origin, s))
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		now         [][]byte
		stored      *Tree // nil: OUT's stored tree rewritten to match now
		origin      string
		kept        []*Checkpoint
		reason      string
		first, last int64
	}{
		{name: "extends", now: append(records(6, nil), []byte("run 7\n")), kept: keptAt(2, 6), origin: origin},
		{name: "same size", now: records(6, nil), kept: keptAt(6), origin: origin},
		{name: "manifest rewritten, tree left", now: edited, stored: orig, kept: keptAt(5), origin: origin, reason: ReasonDiffers, first: 3, last: 3},
		{name: "tree rewritten too, one kept", now: edited, kept: keptAt(5), origin: origin, reason: ReasonDiffers, first: 1, last: 5},
		{name: "tree rewritten too, kept nightly", now: edited, kept: keptAt(1, 2, 3, 4, 5), origin: origin, reason: ReasonDiffers, first: 3, last: 3},
		{name: "reordered, kept nightly", now: reordered, kept: keptAt(1, 2, 3, 4, 5, 6), origin: origin, reason: ReasonDiffers, first: 2, last: 2},
		{name: "runs removed", now: records(4, nil), kept: keptAt(6), origin: origin, reason: ReasonRemoved, first: 5, last: 6},
		{name: "restarted", now: records(2, nil), kept: keptAt(6), origin: "bbbbbbbbbbbbbbbb", reason: ReasonRestarted, first: 1, last: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := mustBuild(t, tc.now)
			stored := tc.stored
			if stored == nil {
				stored = now
			}
			proofs, d := Extends(now, stored, tc.origin, tc.kept)
			if tc.reason == "" {
				if d != nil || len(proofs) != len(tc.kept) {
					t.Fatalf("Extends = %v, %v; want %d proofs", proofs, d, len(tc.kept))
				}
				for _, p := range proofs {
					old, _ := orig.Root(p.Kept)
					if err := tlog.CheckTree(p.Hashes, p.Size, p.Root, p.Kept, old); err != nil {
						t.Fatalf("proof %d->%d: %v", p.Kept, p.Size, err)
					}
				}
				return
			}
			if d == nil || d.Reason != tc.reason || d.First != tc.first || d.Last != tc.last {
				t.Fatalf("Extends = %v, want %s at %d..%d", d, tc.reason, tc.first, tc.last)
			}
		})
	}
}
