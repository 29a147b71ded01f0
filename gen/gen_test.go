package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/codes"
)

// tally is an independent reading of an archive, following docs/FORMAT.md.
type tally struct {
	lines, docs, rejects, blank, bytesIn, messages int64
	reasons, warnings, unknown                     map[string]int64
	byProv, byAgent                                map[string]UsageSum
	tools                                          ToolTotals
	images                                         ImageTotals
	ids                                            map[string]bool
	docList                                        []*tdoc
	transcripts                                    TranscriptTotals
}

// extFields are the fields of each known extension (docs/FORMAT.md,
// "Extension warnings"): conversation-level, then message-level.
var extFields = map[string][2][]string{
	"usage-metadata":    {nil, {"tokens", "cost", "provider"}},
	"tool-linkage":      {nil, {"toolCalls", "toolCallId"}},
	"agent-context":     {{"agentId", "skillIds", "swarmRole", "leaderId"}, {"agentId"}},
	"consensus-receipt": {{"consensusReceipt", "consensusTranscripts"}, nil},
}

var known = map[string]bool{"images-inline": true, "usage-metadata": true, "tool-linkage": true, "agent-context": true, "consensus-receipt": true}

var rfc3339 = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$`)

func validTime(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	m := rfc3339.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	ok := n(2) >= 1 && n(2) <= 12 && n(3) >= 1 && n(3) <= 31 && n(4) <= 23 && n(5) <= 59 && n(6) <= 60
	if m[9] != "" {
		ok = ok && n(9) <= 23 && n(10) <= 59
	}
	return ok
}

func isNull(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

func isString(raw json.RawMessage) bool {
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil
}

func depth(b []byte) int {
	d, maxD, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			d++
			maxD = max(maxD, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return maxD
}

// dupKey reports whether some object has a repeated member name.
func dupKey(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj    bool
		keys   map[string]bool
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			panic(err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				goto valueDone
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.expKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, expKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	valueDone:
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].expKey = true
		}
	}
}

// classify returns the reject reason of a document line, "" if it is a
// good document.
func classify(b []byte) (string, map[string]json.RawMessage) {
	switch {
	case !utf8.Valid(b):
		return "invalid-utf8", nil
	case !json.Valid(b):
		return "not-json", nil
	case depth(b) > 512:
		return "too-deep", nil
	case b[0] != '{':
		return "not-object", nil
	case dupKey(b):
		return "duplicate-key", nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	var id string
	if json.Unmarshal(doc["id"], &id) != nil || !isString(doc["id"]) || id == "" {
		return "bad-id", nil
	}
	var msgs []json.RawMessage
	if isNull(doc["messages"]) || doc["messages"][0] != '[' {
		return "bad-messages", nil
	}
	json.Unmarshal(doc["messages"], &msgs)
	var ms []map[string]json.RawMessage
	for _, m := range msgs {
		if m[0] != '{' {
			return "bad-message", nil
		}
		var mm map[string]json.RawMessage
		json.Unmarshal(m, &mm)
		ms = append(ms, mm)
	}
	for _, m := range ms {
		if !isString(m["role"]) {
			return "bad-role", nil
		}
	}
	if e := doc["extensions"]; !isNull(e) {
		var names []json.RawMessage
		if e[0] != '[' {
			return "bad-extensions", nil
		}
		json.Unmarshal(e, &names)
		seen := map[string]bool{}
		for _, n := range names {
			var s string
			if !isString(n) || seen[s] {
				return "bad-extensions", nil
			}
			json.Unmarshal(n, &s)
			if seen[s] {
				return "bad-extensions", nil
			}
			seen[s] = true
		}
	}
	if t := doc["title"]; !isNull(t) && !isString(t) {
		return "bad-title", nil
	}
	if c := doc["createdAt"]; !isNull(c) && !validTime(c) {
		return "bad-created-at", nil
	}
	for _, m := range ms {
		if c := m["createdAt"]; !isNull(c) && !validTime(c) {
			return "bad-created-at", nil
		}
	}
	for _, m := range ms {
		for _, f := range []string{"id", "kind"} {
			if v := m[f]; !isNull(v) && !isString(v) {
				return "bad-message-field", nil
			}
		}
	}
	return "", doc
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

func (t *tally) doc(doc map[string]json.RawMessage, raw []byte, line int64) {
	t.docs++
	id := str(doc["id"])
	td := &tdoc{line: line, id: id, doc: doc}
	td.sum, td.ok = refHash(raw)
	t.docList = append(t.docList, td)
	if td.ok {
		t.transcripts.Hashed++
	} else {
		t.transcripts.Unhashable++
		t.warnings["transcript-unhashable"]++
	}
	if t.ids[id] {
		t.warnings["duplicate-id"]++
	}
	t.ids[id] = true
	var exts []string
	json.Unmarshal(doc["extensions"], &exts)
	declared := map[string]bool{}
	for _, e := range exts {
		declared[e] = true
		if !known[e] {
			t.warnings["unknown-extension"]++
			t.unknown[e]++
		}
	}
	var ms []map[string]json.RawMessage
	json.Unmarshal(doc["messages"], &ms)
	for ext, f := range extFields {
		used := false
		for _, k := range f[0] {
			used = used || doc[k] != nil
		}
		for _, m := range ms {
			for _, k := range f[1] {
				used = used || m[k] != nil
			}
		}
		if used && !declared[ext] {
			t.warnings["undeclared-extension"]++
		}
	}
	convAgent := str(doc["agentId"])
	var msgs []map[string]json.RawMessage
	json.Unmarshal(doc["messages"], &msgs)
	calls := map[string]bool{}
	callIDs := map[string]bool{}
	for _, m := range msgs {
		t.messages++
		if m["tokens"] != nil || m["cost"] != nil || m["provider"] != nil {
			var tok map[string]int64
			if err := json.Unmarshal(m["tokens"], &tok); err != nil {
				panic(err)
			}
			cost, err := strconv.ParseFloat(string(m["cost"]), 64)
			if err != nil {
				panic(err)
			}
			agent := convAgent
			if a := str(m["agentId"]); a != "" {
				agent = a
			}
			add := func(mp map[string]UsageSum, k string) {
				s := mp[k]
				s.Messages++
				s.TokensInput += tok["input"]
				s.TokensOutput += tok["output"]
				s.Cost += cost
				mp[k] = s
			}
			add(t.byProv, str(m["provider"]))
			add(t.byAgent, agent)
		}
		var tcs []struct{ ID string }
		json.Unmarshal(m["toolCalls"], &tcs)
		for _, c := range tcs {
			if callIDs[c.ID] {
				t.warnings["tool-call-duplicate-id"]++
			}
			callIDs[c.ID] = true
			t.tools.Calls++
			t.tools.Unanswered++
			calls[c.ID] = true
		}
		if id := str(m["toolCallId"]); id != "" {
			if calls[id] {
				t.tools.Results++
				t.tools.Unanswered--
				delete(calls, id)
			} else {
				t.tools.Orphans++
				t.warnings["tool-result-orphan"]++
			}
		}
		if c := m["content"]; isString(c) {
			s := str(c)
			i := strings.Index(s, ";base64,")
			if strings.HasPrefix(s, "data:image/") && i >= 0 {
				s = s[i+len(";base64,"):]
			} else if str(m["kind"]) != "image" {
				continue
			}
			t.images.Messages++
			t.images.Bytes += int64(len(s)/4*3 - strings.Count(s[max(0, len(s)-2):], "="))
		}
	}
}

func read(t *testing.T, data []byte, maxDoc int64) *tally {
	t.Helper()
	ta := &tally{
		reasons: map[string]int64{}, warnings: map[string]int64{}, unknown: map[string]int64{},
		byProv: map[string]UsageSum{}, byAgent: map[string]UsageSum{}, ids: map[string]bool{},
		bytesIn: int64(len(data)),
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatal("output does not end in LF")
	}
	for i, line := range bytes.Split(data[:max(0, len(data)-1)], []byte{'\n'}) {
		if len(data) == 0 {
			break
		}
		ta.lines++
		if i == 0 && bytes.HasPrefix(line, []byte{0xEF, 0xBB, 0xBF}) {
			line = line[3:]
			ta.warnings["bom-dropped"]++
		}
		if int64(len(line)) > maxDoc {
			ta.rejects++
			ta.reasons["too-large"]++
			continue
		}
		cr := bytes.HasSuffix(line, []byte{'\r'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.Trim(line, " \t\r")) == 0 {
			ta.blank++
			continue
		}
		if cr {
			ta.warnings["crlf"]++
		}
		reason, doc := classify(line)
		if reason != "" {
			ta.rejects++
			ta.reasons[reason]++
			continue
		}
		ta.doc(doc, line, int64(i+1))
	}
	return ta
}

func check(t *testing.T, data []byte, e *Expect) {
	t.Helper()
	if e.Lines != e.Documents+e.Rejects+e.Blank {
		t.Errorf("accounting: lines %d != documents %d + rejects %d + blank %d", e.Lines, e.Documents, e.Rejects, e.Blank)
	}
	ta := read(t, data, e.MaxDocBytes)
	var kr *tkeyring
	if len(e.ReceiptList) > 0 {
		kb, err := KeysJSON(e.Seed)
		if err != nil {
			t.Fatal(err)
		}
		kr = loadKeyring(t, kb)
	}
	with, without, list, unknownAgents := verifyReceipts(ta.docList, kr)
	if unknownAgents > 0 {
		ta.warnings["statement-agent-unknown"] += unknownAgents
	}
	if len(list) == len(e.ReceiptList) {
		for i := range list {
			list[i].Tamper = e.ReceiptList[i].Tamper // the generator's own note
		}
	}
	got := Expect{
		Seed: e.Seed, MaxDocBytes: e.MaxDocBytes, Lines: ta.lines, Documents: ta.docs,
		Rejects: ta.rejects, Blank: ta.blank, BytesIn: ta.bytesIn, RejectsByReason: ta.reasons,
		Warnings: ta.warnings, ExtensionsUnknown: ta.unknown,
		Usage:    UsageTotals{ByProvider: ta.byProv, ByAgent: ta.byAgent},
		Messages: ta.messages, Tools: ta.tools, Images: ta.images,
		Receipts: with, ReceiptsWithoutKeys: without, ReceiptList: list, Transcripts: ta.transcripts,
	}
	got.Dates, got.Day = datesOf(ta.docList, e.Dates, e.Day)
	if !reflect.DeepEqual(&got, e) {
		a, _ := json.MarshalIndent(e, "", " ")
		b, _ := json.MarshalIndent(&got, "", " ")
		t.Errorf("expect mismatch\ngenerator: %s\nreader:    %s", a, b)
	}
}

func gen(t testing.TB, o Options) ([]byte, *Expect) {
	var buf bytes.Buffer
	e, err := Generate(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), e
}

func TestGenerateCounts(t *testing.T) {
	for _, o := range []Options{
		{Conversations: 300, Seed: 1},
		{Conversations: 400, Seed: 2, Faults: 0.3, MaxDocBytes: 64 << 10},
		{Conversations: 100, Seed: 3, Faults: 1, MaxDocBytes: 32 << 10},
		{Bytes: 3 << 20, Seed: 4, Faults: 0.02},
		{Conversations: 1, Seed: 5, Faults: 0.5},
		{Seed: 6},
	} {
		data, e := gen(t, o)
		check(t, data, e)
		if o.Conversations > 0 && e.Documents != int64(o.Conversations) {
			t.Errorf("%+v: %d documents", o, e.Documents)
		}
		if o.Bytes > 0 && e.BytesIn < o.Bytes {
			t.Errorf("%+v: only %d bytes", o, e.BytesIn)
		}
		if o.Faults == 0 && (e.Rejects != 0 || e.Blank != 0 || len(e.Warnings) > 1 || len(e.Warnings) == 1 && e.Warnings["tool-result-orphan"] == 0) {
			t.Errorf("clean archive has faults: %v %v %v", e.Rejects, e.Blank, e.Warnings)
		}
	}
}

func TestAllFaultKinds(t *testing.T) {
	data, e := gen(t, Options{Conversations: 400, Seed: 7, Faults: 0.8, MaxDocBytes: 32 << 10})
	check(t, data, e)
	// Every reject reason and warning that needs no strict mode, no
	// damaged input and no keyring.
	for _, r := range codes.Rejects() {
		switch r {
		case codes.RejectInputChecksum, codes.RejectBOM, codes.RejectInputTruncated:
			continue
		}
		if e.RejectsByReason[r.String()] == 0 {
			t.Errorf("reason %s never produced", r)
		}
	}
	for _, w := range []codes.Warning{codes.WarnBOMDropped, codes.WarnCRLF, codes.WarnDuplicateID,
		codes.WarnUnknownExtension, codes.WarnToolResultOrphan, codes.WarnToolCallDuplicateID, codes.WarnTranscriptUnhashable} {
		if e.Warnings[w.String()] == 0 {
			t.Errorf("warning %s never produced", w)
		}
	}
	if e.Tools.Orphans == 0 || e.Tools.Unanswered == 0 || e.Images.Messages == 0 || len(e.Usage.ByAgent) < 2 {
		t.Errorf("extension coverage: %+v %+v %d", e.Tools, e.Images, len(e.Usage.ByAgent))
	}
	for _, want := range []string{`\ud83d\ude00`, `\u2028`, "😀", "中文", "\r\n", `"developer"`, "1E-7", ":-0"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("output lacks %q", want)
		}
	}
	// too-large lines are MaxDocBytes+1 .. MaxDocBytes+65536 long.
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if n := int64(len(l)); n > e.MaxDocBytes+65536 {
			t.Errorf("too-large line of %d bytes", n)
		}
	}
}

func TestNoTooLargeOverCap(t *testing.T) {
	_, e := gen(t, Options{Conversations: 200, Seed: 8, Faults: 0.5, MaxDocBytes: 8 << 20})
	if e.RejectsByReason["too-large"] != 0 {
		t.Errorf("too-large produced with an 8 MiB cap")
	}
}

func TestDeterminism(t *testing.T) {
	o := Options{Conversations: 150, Seed: 42, Faults: 0.1, Tamper: 0.3}
	a, ea := gen(t, o)
	b, eb := gen(t, o)
	if !bytes.Equal(a, b) || !reflect.DeepEqual(ea, eb) {
		t.Fatal("same seed, different output")
	}
	dir := t.TempDir()
	var files [2][3][]byte
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("d%d.jsonl", i))
		if _, err := WriteFile(p, o); err != nil {
			t.Fatal(err)
		}
		for k, suffix := range []string{"", ".expect.json", ".keys.json"} {
			files[i][k], _ = os.ReadFile(p + suffix)
		}
	}
	if !reflect.DeepEqual(files[0], files[1]) || !bytes.Equal(files[0][0], a) {
		t.Fatal("WriteFile: same seed, different files")
	}
	o.Seed = 43
	c, _ := gen(t, o)
	if bytes.Equal(a, c) {
		t.Fatal("different seeds, same output")
	}
}

func TestOptionErrors(t *testing.T) {
	for _, o := range []Options{{Conversations: -1}, {Bytes: -1}, {Faults: 1.5}, {Faults: math.NaN()}, {Conversations: 1, MaxDocBytes: 100}} {
		if _, err := Generate(io.Discard, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	o := Options{Conversations: 50, Seed: 9, Faults: 0.2}
	want, we := gen(t, o)
	for _, name := range []string{"a.jsonl", "b.jsonl.zst"} {
		p := filepath.Join(dir, name)
		e, err := WriteFile(p, o)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".zst") {
			dec, _ := zstd.NewReader(nil)
			if data, err = dec.DecodeAll(data, nil); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(data, want) || !reflect.DeepEqual(e, we) {
			t.Errorf("%s: differs from Generate", name)
		}
		js, err := os.ReadFile(p + ".expect.json")
		if err != nil {
			t.Fatal(err)
		}
		var back Expect
		if err := json.Unmarshal(js, &back); err != nil || !bytes.HasSuffix(js, []byte("}\n")) {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, e) {
			t.Errorf("%s: expect.json does not round-trip", name)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 6 {
		t.Errorf("%d files in dir, want 6 (no temp files left)", len(ents))
	}
	k1, err1 := os.ReadFile(filepath.Join(dir, "a.jsonl.keys.json"))
	k2, err2 := os.ReadFile(filepath.Join(dir, "b.jsonl.zst.keys.json"))
	if kj, _ := KeysJSON(o.Seed); err1 != nil || err2 != nil || !bytes.Equal(k1, kj) || !bytes.Equal(k2, kj) {
		t.Error("keys.json differs from KeysJSON")
	}
	if _, err := WriteFile(filepath.Join(dir, "c.txt"), o); err == nil {
		t.Error("bad extension accepted")
	}
}

func BenchmarkGenerate(b *testing.B) {
	const size = 64 << 20
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		if _, err := Generate(io.Discard, Options{Bytes: size, Seed: uint64(i), Faults: 0.001}); err != nil {
			b.Fatal(err)
		}
	}
}
