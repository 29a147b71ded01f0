package conformance

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/verify"
)

// FormatV1 is the format tag of a vector file.
const FormatV1 = "convbatch-conformance/1"

// Suite is one vector file.
type Suite struct {
	// Format is always FormatV1.
	Format string `json:"format"`
	// Vectors are run in order.
	Vectors []Vector `json:"vectors"`
}

// Vector is one case: input lines, an optional keyring, and what a
// conforming implementation reports for them.
type Vector struct {
	// Name is unique in the suite, "<extension>/<case>".
	Name string `json:"name"`
	// Extension is the registered extension the vector exercises, or
	// "canonical-json" or "core".
	Extension string `json:"extension"`
	// Description says what the vector shows.
	Description string `json:"description"`
	// Lines are the input lines, exact bytes; they are joined with "\n"
	// (no final LF) into one JSONL stream.
	Lines []string `json:"lines"`
	// Keyring is the --keys file's content, or null for no keyring.
	Keyring json.RawMessage `json:"keyring"`
	// Expect is the outcome.
	Expect Expect `json:"expect"`
}

// Expect is a vector's expected outcome. Maps are compared whole: a code
// that is absent is expected to be 0.
type Expect struct {
	// Documents lists every document in input order.
	Documents []Document `json:"documents"`
	// Rejects counts rejected lines by reason code.
	Rejects map[string]int64 `json:"rejects"`
	// Warnings counts warnings by code.
	Warnings map[string]int64 `json:"warnings"`
	// Receipts lists every receipt in the order of the documents carrying
	// them.
	Receipts []Receipt `json:"receipts"`
	// KeyringRefused, when set, is what the refusal of the vector's keyring
	// must name (an entry such as agents["agent-1"][1], or a member): the
	// keyring is refused and nothing is run, so documents, rejects,
	// warnings and receipts are empty.
	KeyringRefused string `json:"keyring_refused,omitempty"`
}

// Document is an expected document.
type Document struct {
	// Line is its 1-based line number.
	Line int64 `json:"line"`
	// ID is its id.
	ID string `json:"id"`
	// TranscriptSHA256 is the lowercase hex transcript hash, nil when the
	// document has none (transcript-unhashable).
	TranscriptSHA256 *string `json:"transcript_sha256"`
}

// Receipt is an expected receipt verdict.
type Receipt struct {
	// Line is the line of the carrying document.
	Line int64 `json:"line"`
	// ConversationID is the carrying document's id.
	ConversationID string `json:"conversation_id"`
	// Status is valid, invalid or incomplete.
	Status string `json:"status"`
	// Reasons are the receipt reason codes in the documented order.
	Reasons []string `json:"reasons"`
}

// Outcome is the result of one vector. Diffs name the field and the
// expected and actual values (counts, codes, line numbers, ids and hashes),
// never document content.
type Outcome struct {
	Name  string
	Pass  bool
	Diffs []string
}

// String returns "PASS name" or "FAIL name: diff; diff".
func (o Outcome) String() string {
	if o.Pass {
		return "PASS " + o.Name
	}
	return "FAIL " + o.Name + ": " + strings.Join(o.Diffs, "; ")
}

// Load reads and checks a vector file: its format tag, unique non-empty
// names, and known fields only.
func Load(path string) (*Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// IsVectorFile reports whether b, a JSON text, is a vector file: its
// top-level value is an object with a "vectors" member, or with a
// "format" member whose value is a string starting "convbatch-conformance/"
// (a later version of the format is a vector file that Parse refuses).
// Any other JSON text is not, and b that is not JSON at all is an error
// naming the position, since a broken vector file cannot be told from
// other broken JSON.
func IsVectorFile(b []byte) (bool, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return false, positioned(b, err, nil)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false, nil
	}
	if _, ok := obj["vectors"]; ok {
		return true, nil
	}
	f, ok := obj["format"].(string)
	return ok && strings.HasPrefix(f, "convbatch-conformance/"), nil
}

// Parse decodes and checks a vector file's content (see Load). A JSON
// error (syntax, a value of the wrong type, a member the format does not
// have, data after the object) names its position: line, column and byte
// offset.
func Parse(b []byte) (*Suite, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Suite
	if err := dec.Decode(&s); err != nil {
		return nil, positioned(b, err, reflect.TypeFor[Suite]())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: data after the vector file's object", position(b, dec.InputOffset()))
	}
	if s.Format != FormatV1 {
		return nil, fmt.Errorf("format %q: want %q", s.Format, FormatV1)
	}
	seen := make(map[string]bool, len(s.Vectors))
	for i, v := range s.Vectors {
		if v.Name == "" {
			return nil, fmt.Errorf("vector %d: no name", i)
		}
		if seen[v.Name] {
			return nil, fmt.Errorf("vector %q: name used twice", v.Name)
		}
		seen[v.Name] = true
		for _, r := range v.Expect.Receipts {
			switch verify.Status(r.Status) {
			case verify.StatusValid, verify.StatusInvalid, verify.StatusIncomplete:
			default:
				return nil, fmt.Errorf("vector %q: receipt at line %d: status %q", v.Name, r.Line, r.Status)
			}
		}
	}
	return &s, nil
}

// Run runs every vector of s through convbatch's pipeline and compares the
// outcome with the expectation. A cancelled ctx fails the vectors not yet
// run.
func Run(ctx context.Context, s *Suite) []Outcome {
	out := make([]Outcome, 0, len(s.Vectors))
	for i := range s.Vectors {
		out = append(out, RunVector(ctx, &s.Vectors[i]))
	}
	return out
}

// RunVector runs one vector (see Run).
func RunVector(ctx context.Context, v *Vector) Outcome {
	o := Outcome{Name: v.Name}
	fail := func(format string, args ...any) Outcome {
		o.Diffs = append(o.Diffs, fmt.Sprintf(format, args...))
		return o
	}
	if err := ctx.Err(); err != nil {
		return fail("run: %v", err)
	}
	var kr *verify.Keyring
	if len(v.Keyring) > 0 && !bytes.Equal(bytes.TrimSpace(v.Keyring), []byte("null")) {
		// Read as --keys reads a keyring: expires is judged at this time.
		var err error
		kr, err = verify.DecodeKeyring(ctx, bytes.NewReader(v.Keyring))
		switch {
		case err != nil && v.Expect.KeyringRefused == "":
			return fail("keyring: %v", err)
		case err != nil && !strings.Contains(err.Error(), v.Expect.KeyringRefused):
			return fail("keyring: refused with %q, expected a refusal naming %s", err, v.Expect.KeyringRefused)
		case err != nil:
			o.Pass = true
			return o
		}
	}
	if v.Expect.KeyringRefused != "" {
		return fail("keyring: accepted, expected a refusal naming %s", v.Expect.KeyringRefused)
	}
	var docs []Document
	cfg := pipeline.Config{
		Inputs:       []stream.Input{{Path: stream.StdinPath, Rel: "stdin", Size: -1}},
		Stdin:        strings.NewReader(strings.Join(v.Lines, "\n")),
		Keyring:      kr,
		KeepReceipts: true,
		OnDocument: func(d pipeline.Document) error {
			doc := Document{Line: d.Line, ID: d.ID}
			if d.Hashed {
				h := hex.EncodeToString(d.Hash[:])
				doc.TranscriptSHA256 = &h
			}
			docs = append(docs, doc)
			return nil
		},
	}
	res, err := pipeline.Run(ctx, cfg)
	if err != nil {
		return fail("run: %v", err)
	}
	o.Diffs = append(o.Diffs, diffDocuments(v.Expect.Documents, docs)...)
	o.Diffs = append(o.Diffs, diffCounts("rejects", v.Expect.Rejects, res.Report.RejectsByReason)...)
	o.Diffs = append(o.Diffs, diffCounts("warnings", v.Expect.Warnings, res.Report.Warnings)...)
	o.Diffs = append(o.Diffs, diffReceipts(v.Expect.Receipts, res.Receipts)...)
	o.Pass = len(o.Diffs) == 0
	return o
}

func hashString(h *string) string {
	if h == nil {
		return "null"
	}
	return *h
}

func diffDocuments(want, got []Document) []string {
	var diffs []string
	if len(want) != len(got) {
		diffs = append(diffs, fmt.Sprintf("documents: expected %d, got %d (lines %v vs %v)", len(want), len(got), docLines(want), docLines(got)))
	}
	for i := range min(len(want), len(got)) {
		w, g := want[i], got[i]
		if w.Line != g.Line {
			diffs = append(diffs, fmt.Sprintf("documents[%d].line: expected %d, got %d", i, w.Line, g.Line))
		}
		if w.ID != g.ID {
			diffs = append(diffs, fmt.Sprintf("documents[%d].id: expected %q, got %q", i, w.ID, g.ID))
		}
		if hashString(w.TranscriptSHA256) != hashString(g.TranscriptSHA256) {
			diffs = append(diffs, fmt.Sprintf("documents[%d].transcript_sha256 (line %d): expected %s, got %s", i, w.Line, hashString(w.TranscriptSHA256), hashString(g.TranscriptSHA256)))
		}
	}
	return diffs
}

func docLines(docs []Document) []int64 {
	out := make([]int64, len(docs))
	for i, d := range docs {
		out[i] = d.Line
	}
	return out
}

// diffCounts compares two count maps whole; a missing code counts as 0.
func diffCounts(field string, want, got map[string]int64) []string {
	codes := make(map[string]bool)
	for k := range want {
		codes[k] = true
	}
	for k := range got {
		codes[k] = true
	}
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		if want[k] != got[k] {
			diffs = append(diffs, fmt.Sprintf("%s[%s]: expected %d, got %d", field, k, want[k], got[k]))
		}
	}
	return diffs
}

func diffReceipts(want []Receipt, got []verify.ReceiptResult) []string {
	var diffs []string
	if len(want) != len(got) {
		ws := make([]string, len(want))
		for i, r := range want {
			ws[i] = fmt.Sprintf("%d:%s[%s]", r.Line, r.Status, strings.Join(r.Reasons, ","))
		}
		gs := make([]string, len(got))
		for i, r := range got {
			gs[i] = fmt.Sprintf("%d:%s[%s]", r.Line, r.Status, strings.Join(r.Reasons, ","))
		}
		diffs = append(diffs, fmt.Sprintf("receipts: expected %d {%s}, got %d {%s}", len(want), strings.Join(ws, " "), len(got), strings.Join(gs, " ")))
	}
	for i := range min(len(want), len(got)) {
		w, g := want[i], got[i]
		if w.Line != g.Line {
			diffs = append(diffs, fmt.Sprintf("receipts[%d].line: expected %d, got %d", i, w.Line, g.Line))
		}
		if w.ConversationID != g.ConversationID {
			diffs = append(diffs, fmt.Sprintf("receipts[%d].conversation_id: expected %q, got %q", i, w.ConversationID, g.ConversationID))
		}
		if w.Status != string(g.Status) {
			diffs = append(diffs, fmt.Sprintf("receipts[%d].status (line %d): expected %s, got %s", i, w.Line, w.Status, g.Status))
		}
		if !slices.Equal(w.Reasons, g.Reasons) {
			diffs = append(diffs, fmt.Sprintf("receipts[%d].reasons (line %d): expected [%s], got [%s]", i, w.Line, strings.Join(w.Reasons, ","), strings.Join(g.Reasons, ",")))
		}
	}
	return diffs
}
