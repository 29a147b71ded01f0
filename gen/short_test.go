package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestShortCounts(t *testing.T) {
	for _, o := range []Options{
		{Conversations: 2000, Seed: 1, Profile: ProfileShort},
		{Conversations: 300, Seed: 2, Profile: ProfileShort, NoReceipts: true},
		{Conversations: 9, Seed: 3, Profile: ProfileShort},
		{Conversations: 1, Seed: 4, Profile: ProfileShort},
		{Conversations: 500, Seed: 5, Profile: ProfileShort, MaxDocBytes: MinMaxDocBytes},
	} {
		data, e := gen(t, o)
		check(t, data, e)
		if e.Documents != int64(o.Conversations) || e.Lines != e.Documents {
			t.Errorf("%+v: %d lines, %d documents", o, e.Lines, e.Documents)
		}
		wantReceipts := 0
		if !o.NoReceipts && o.Conversations >= 10 {
			wantReceipts = 3
		}
		if len(e.ReceiptList) != wantReceipts || e.Receipts.Valid != int64(wantReceipts) || e.ReceiptsWithoutKeys.Valid != int64(wantReceipts) {
			t.Errorf("%+v: receipts %+v, want %d valid", o, e.Receipts, wantReceipts)
		}
		// Tiny documents: every line but the carrying ones is short.
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
			if !bytes.Contains(line, []byte(`"consensusReceipt"`)) && (len(line) < 60 || len(line) > 280) {
				t.Fatalf("%+v: line %d is %d bytes: %s", o, i+1, len(line), line)
			}
		}
	}
}

// TestShortShapes: the three document shapes all occur, in about the
// documented shares, and usage-metadata sits on assistant messages only.
func TestShortShapes(t *testing.T) {
	data, e := gen(t, Options{Conversations: 20000, Seed: 6, Profile: ProfileShort, NoReceipts: true})
	var user, asst, both int
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
		var d struct {
			Messages []map[string]json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		switch {
		case len(d.Messages) == 2:
			both++
		case len(d.Messages) == 1 && string(d.Messages[0]["role"]) == `"user"`:
			user++
		case len(d.Messages) == 1:
			asst++
		default:
			t.Fatalf("%d messages: %s", len(d.Messages), line)
		}
		for _, m := range d.Messages {
			if _, ok := m["tokens"]; ok != (string(m["role"]) == `"assistant"`) {
				t.Fatalf("usage on the wrong message: %s", line)
			}
		}
	}
	n := float64(e.Documents)
	for _, c := range []struct {
		name       string
		got        int
		share, tol float64
	}{{"user only", user, .35, .02}, {"assistant only", asst, .15, .02}, {"user and assistant", both, .50, .02}} {
		if s := float64(c.got) / n; s < c.share-c.tol || s > c.share+c.tol {
			t.Errorf("%s: %.3f of the documents, want about %.2f", c.name, s, c.share)
		}
	}
	if avg := float64(e.BytesIn) / n; avg < 120 || avg > 200 {
		t.Errorf("%.0f bytes a document on average", avg)
	}
}

// TestShortReferences: receipts reference documents before and after
// them, far away in the file.
func TestShortReferences(t *testing.T) {
	data, e := gen(t, Options{Conversations: 400000, Seed: 7, Profile: ProfileShort})
	if len(e.ReceiptList) != 3+4 {
		t.Fatalf("%d receipts, want 7", len(e.ReceiptList))
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
	lineOf := make(map[string]int64, len(lines))
	for i, l := range lines {
		lineOf[string(l[7:24])] = int64(i + 1) // {"id":"c + 16 hex digits
	}
	var before, after, far int
	for _, re := range e.ReceiptList {
		var d struct {
			Refs []struct{ ID string } `json:"consensusTranscripts"`
		}
		if err := json.Unmarshal(lines[re.Line-1], &d); err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Refs {
			if r.ID == re.ConversationID {
				continue
			}
			at, ok := lineOf[r.ID]
			switch {
			case !ok:
				t.Fatalf("reference to %s: no such document", r.ID)
			case at < re.Line:
				before++
			case at > re.Line:
				after++
			}
			if d := at - re.Line; d > 1000 || d < -1000 {
				far++
			}
		}
	}
	if before == 0 || after == 0 || far == 0 {
		t.Errorf("references: %d before, %d after, %d over 1000 lines away", before, after, far)
	}
}

func TestShortDeterminism(t *testing.T) {
	o := Options{Conversations: 3000, Seed: 42, Profile: ProfileShort}
	a, ea := gen(t, o)
	b, eb := gen(t, o)
	if !bytes.Equal(a, b) || !reflect.DeepEqual(ea, eb) {
		t.Fatal("same seed, different output")
	}
	// A prefix: document i depends on the seed and i, not on the count
	// (but for the documents that carry receipts, placed by the count).
	p, _ := gen(t, Options{Conversations: 5, Seed: 42, Profile: ProfileShort})
	if !bytes.HasPrefix(a, p) {
		t.Error("the first 5 documents differ from a 5-document archive")
	}
	p2 := filepath.Join(t.TempDir(), "s.jsonl.zst")
	ew, err := WriteFile(p2, o)
	if err != nil {
		t.Fatal(err)
	}
	z, err := os.ReadFile(p2)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	if w, err := dec.DecodeAll(z, nil); err != nil || !bytes.Equal(w, a) || !reflect.DeepEqual(ew, ea) {
		t.Errorf("WriteFile differs from Generate (%v)", err)
	}
	o.Seed = 43
	c, _ := gen(t, o)
	if bytes.Equal(a, c) {
		t.Fatal("different seeds, same output")
	}
	var d Options
	d.Conversations, d.Seed = 100, 42
	def, _ := gen(t, d)
	d.Profile = ProfileDefault
	def2, _ := gen(t, d)
	if !bytes.Equal(def, def2) {
		t.Error(`Profile "default" and "" differ`)
	}
}

func TestShortOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Bytes: 1 << 20, Profile: ProfileShort},
		{Conversations: 10, Faults: 0.1, Profile: ProfileShort},
		{Conversations: 10, Tamper: 0.1, Profile: ProfileShort},
		{Conversations: 10, Profile: "long"},
	} {
		if _, err := Generate(&bytes.Buffer{}, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func BenchmarkGenerateShort(b *testing.B) {
	const n = 200000
	var buf bytes.Buffer
	for i := 0; b.Loop(); i++ {
		buf.Reset()
		if _, err := Generate(&buf, Options{Conversations: n, Seed: uint64(i), Profile: ProfileShort}); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(buf.Len()))
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
