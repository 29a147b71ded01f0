package transform

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/stream"
)

// TestTranscriptHashMatchesReference: the hash handler equals SHA-256 of the
// reference JCS output.
func TestTranscriptHashMatchesReference(t *testing.T) {
	for _, line := range []string{
		`{"id":"a","messages":[{"role":"user","content":"caf\u00e9 \ud83d\ude00","n":1E3}],"b":[0.10,-0]}`,
		`{"id":"a","messages":[]}`,
		`{"messages":[],"id":"z","\ufb33":1,"😀":2}`,
	} {
		res := runStandard(t, line)
		ref, err := jcs.Transform([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(ref)
		if !res.Hashed || res.Hash != want {
			t.Errorf("%s: hash %s, want %s", line, hex.EncodeToString(res.Hash[:]), hex.EncodeToString(want[:]))
		}
	}
}

// TestTranscriptHashBatch: under ProcessBatch the hashes are left to
// FinishBatch; each equals SHA-256 of the reference JCS output, for
// documents already canonical (hashed in place), ones that are not,
// documents larger than the batch buffer, rejects, blank lines and
// unhashable documents between them, over several batches through one
// processor (the buffer grows, then is reused).
func TestTranscriptHashBatch(t *testing.T) {
	handlers, err := Standard(Options{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("x\\u00e9", 40000) + `"}],"id":"big"}`
	// Larger than the buffer of canonical forms: hashed alone.
	huge := `{"messages":[{"role":"user","content":"` + strings.Repeat("y\\u00e9", 100000) + `"}],"id":"huge"}`
	// 300 KB waiting, then a line that fits in the room left but whose
	// canonical form (1E3 is 1000) does not.
	wide := `{"messages":[{"role":"user","content":"` + strings.Repeat("z", 300000) + `"}],"id":"wide"}`
	longer := `{"id":"longer","messages":[],"n":[` + strings.Repeat("1E3,", 50000) + `1]}`
	lines := []string{
		`{"id":"a","messages":[]}`, // canonical: in place
		`{"messages":[],"id":"b"}`,
		``, // blank
		`{"id":"c","messages":[{"role":"user","content":"caf\u00e9","n":1E3}],"b":[0.10,-0]}`,
		`{"id":"d","messages":[` + "\x00" + `]}`, // rejected by core-json
		big,
		`{"id":"e","messages":[],"x":1e400}`, // not hashable: a number out of range
		`{"messages":[],"id":"f","\ufb33":1,"😀":2}`,
		big,
		`{"messages":[],"id":"g"}`,
		huge,
		wide,
		longer,
		`{"messages":[],"id":"h"}`,
	}
	recs := make([]stream.Record, len(lines))
	for i, l := range lines {
		recs[i] = stream.Record{Kind: stream.KindLine, Raw: []byte(l), Data: []byte(l), Line: int64(i + 1)}
		if l == "" {
			recs[i].Kind = stream.KindBlank
		}
	}
	p := NewProcessor(handlers)
	var results []Result
	for round := range 3 {
		for _, cut := range [][2]int{{0, len(recs)}, {0, 4}, {4, len(recs)}, {11, 13}, {5, 6}} {
			batch := recs[cut[0]:cut[1]]
			results = p.ProcessBatch(batch, results)
			for i, rec := range batch {
				res := &results[i]
				single := runStandard(t, string(rec.Data))
				if rec.Kind != stream.KindLine {
					single = &Result{}
				}
				if res.Panic != nil {
					t.Fatal(res.Panic)
				}
				if res.Hashed != single.Hashed || res.Hash != single.Hash || res.Rows.CanonicalBytes != single.Rows.CanonicalBytes {
					t.Errorf("round %d, line %d: batch hash %v %x (%d bytes), alone %v %x (%d bytes)", round, rec.Line,
						res.Hashed, res.Hash, res.Rows.CanonicalBytes, single.Hashed, single.Hash, single.Rows.CanonicalBytes)
				}
				if !res.Hashed {
					continue
				}
				ref, err := jcs.Transform(rec.Data)
				if err != nil {
					t.Fatal(err)
				}
				if want := sha256.Sum256(ref); res.Hash != want {
					t.Errorf("round %d, line %d: hash %x, want %x", round, rec.Line, res.Hash, want)
				}
			}
		}
	}
	hashed := 0
	for _, res := range results {
		if res.Hashed {
			hashed++
		}
	}
	if hashed != 1 { // the last batch: one big document
		t.Errorf("last batch: %d hashed, want 1", hashed)
	}
}
