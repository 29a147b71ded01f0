package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
)

// ---------------------------------------------------------------------------
// Helpers for the runs.

// runOK runs convbatch and accepts exit 0 (clean) or 1 (findings).
func runOK(t *testing.T, args ...string) result {
	t.Helper()
	r := convbatch(t, nil, args...)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("convbatch %v: exit %d: %s", args, r.code, r.stderr)
	}
	return r
}

// docLine is one document line of an input, read independently of
// convbatch with encoding/json.
type docLine struct {
	line     int64
	id       string
	title    any
	messages int
	receipt  bool
	raw      []byte // the line without BOM and CR
}

// documentLines lists the input's document lines: every line that is not
// blank and not listed in OUT/rejects/rejects.jsonl.
func documentLines(t *testing.T, in, out string) []docLine {
	t.Helper()
	rejected := map[int64]bool{}
	for _, l := range strings.Split(mustRead(t, filepath.Join(out, "rejects", "rejects.jsonl")), "\n") {
		if l == "" {
			continue
		}
		var r sink.Reject
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		rejected[r.Line] = true
	}
	data := decompress(t, in)
	data = bytes.TrimSuffix(data, []byte("\n"))
	var docs []docLine
	for i, l := range bytes.Split(data, []byte("\n")) {
		n := int64(i + 1)
		if i == 0 {
			l = bytes.TrimPrefix(l, []byte{0xEF, 0xBB, 0xBF})
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		if rejected[n] || len(bytes.Trim(l, " \t\r")) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %d is neither a reject nor a JSON object: %v", n, err)
		}
		d := docLine{line: n, raw: l}
		json.Unmarshal(m["id"], &d.id)
		if raw, ok := m["title"]; ok {
			json.Unmarshal(raw, &d.title)
		}
		var msgs []json.RawMessage
		json.Unmarshal(m["messages"], &msgs)
		d.messages = len(msgs)
		_, d.receipt = m["consensusReceipt"]
		docs = append(docs, d)
	}
	return docs
}

// hashes runs convbatch hash and returns its lines as [hex, id] pairs.
func hashes(t *testing.T, args ...string) [][2]string {
	t.Helper()
	r := runOK(t, append([]string{"hash"}, args...)...)
	var out [][2]string
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		h, id, ok := strings.Cut(l, "  ")
		if !ok || len(h) != 64 {
			t.Fatalf("hash prints %q", l)
		}
		out = append(out, [2]string{h, id})
	}
	return out
}

func closeRel(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), math.Abs(got))
}

// usageSums sums the usage table by provider and by agent, as gen's
// Expect.Usage does (a null provider or agent is "").
func usageSums(t *testing.T, tb *pqtest.Table) (byProvider, byAgent map[string]gen.UsageSum) {
	t.Helper()
	byProvider, byAgent = map[string]gen.UsageSum{}, map[string]gen.UsageSum{}
	add := func(m map[string]gen.UsageSum, key any, in, out any, cost any) {
		k, _ := key.(string)
		s := m[k]
		s.Messages++
		if v, ok := in.(int64); ok {
			s.TokensInput += v
		}
		if v, ok := out.(int64); ok {
			s.TokensOutput += v
		}
		if v, ok := cost.(float64); ok {
			s.Cost += v
		}
		m[k] = s
	}
	for r := range tb.Rows {
		in, out, cost := tb.Get(t, r, "tokens_input"), tb.Get(t, r, "tokens_output"), tb.Get(t, r, "cost")
		add(byProvider, tb.Get(t, r, "provider"), in, out, cost)
		add(byAgent, tb.Get(t, r, "agent_id"), in, out, cost)
	}
	return byProvider, byAgent
}

func compareUsage(t *testing.T, what string, got, want map[string]gen.UsageSum) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d keys %v, want %d %v", what, len(got), sortedKeysOf(got), len(want), sortedKeysOf(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Messages != w.Messages || g.TokensInput != w.TokensInput || g.TokensOutput != w.TokensOutput || !closeRel(g.Cost, w.Cost) {
			t.Errorf("%s %q: got %+v, want %+v", what, k, g, w)
		}
	}
}

func sortedKeysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tableArchive generates the faulty archive with receipts the read-back
// and DuckDB tests share, and runs it with --keys.
func tableArchive(t *testing.T) (in, out string, exp *gen.Expect) {
	t.Helper()
	dir := t.TempDir()
	in = filepath.Join(dir, "tables.jsonl.zst")
	exp = genArchive(t, in, "--conversations", "400", "--seed", "51", "--faults", "0.05", "--tamper", "0.3", "--max-doc-bytes", "256KiB")
	if exp.Rejects == 0 || len(exp.ReceiptList) == 0 || exp.Tools.Orphans == 0 || exp.Images.Messages == 0 {
		t.Fatalf("the archive lacks some feature the test needs: %+v", exp)
	}
	out = filepath.Join(dir, "out")
	runOK(t, "run", "-o", out, "--keys", in+".keys.json", "--max-doc-bytes", "256KiB", in)
	return in, out, exp
}

// ---------------------------------------------------------------------------
// The tests.

// TestTablesReadBack reads every table of a run over a faulty archive with
// receipts back with pqarrow and checks it against the input, gen's Expect,
// convbatch hash and the receipts output.
func TestTablesReadBack(t *testing.T) {
	in, out, exp := tableArchive(t)

	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	checkAgainstExpect(t, &rep, exp)

	tables := map[string]*pqtest.Table{}
	var parts []string
	for _, name := range tabledef.Names {
		tb := pqtest.ReadTable(t, out, name)
		tables[name] = tb
		for _, p := range tb.Parts {
			parts = append(parts, "tables/"+name+"/"+p.Name)
		}
		pqtest.CheckSchema(t, tb)
		// Every cell's Go type matches the column's declared type.
		pqtest.CheckCellTypes(t, tb)
	}
	if !reflect.DeepEqual(rep.Outputs.Tables, parts) {
		t.Errorf("report outputs.tables %v, parts on disk %v", rep.Outputs.Tables, parts)
	}

	// conversations: one row per document, in input order.
	conv := tables[tabledef.Conversations]
	docs := documentLines(t, in, out)
	if int64(len(docs)) != exp.Documents || int64(len(conv.Rows)) != exp.Documents {
		t.Fatalf("conversations has %d rows, the input %d documents, Expect %d", len(conv.Rows), len(docs), exp.Documents)
	}
	receiptDocs := 0
	for i, d := range docs {
		got := []any{conv.Get(t, i, "conversation_id"), conv.Get(t, i, "source_line"), conv.Get(t, i, "source_file"),
			conv.Get(t, i, "message_count"), conv.Get(t, i, "has_receipt"), conv.Get(t, i, "title")}
		want := []any{d.id, d.line, in, int32(d.messages), d.receipt, d.title}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("conversations row %d: (id, line, file, messages, has_receipt, title) = %v, want %v", i, got, want)
		}
		if d.receipt {
			receiptDocs++
		}
	}
	if receiptDocs != len(exp.ReceiptList) {
		t.Errorf("%d documents carry a receipt, Expect lists %d receipts", receiptDocs, len(exp.ReceiptList))
	}

	// transcripts: the hashes convbatch hash prints, in order.
	tr := tables[tabledef.Transcripts]
	if len(tr.Rows) != len(conv.Rows) {
		t.Fatalf("transcripts has %d rows, conversations %d", len(tr.Rows), len(conv.Rows))
	}
	printed := hashes(t, "--max-doc-bytes", "256KiB", in)
	var fromTable [][2]string
	var unhashable int64
	for i := range tr.Rows {
		id, sha, size := tr.Get(t, i, "conversation_id"), tr.Get(t, i, "sha256"), tr.Get(t, i, "canonical_bytes")
		if id != conv.Get(t, i, "conversation_id") || tr.Get(t, i, "source_line") != conv.Get(t, i, "source_line") {
			t.Fatalf("transcripts row %d (%v) is not conversations row %d", i, id, i)
		}
		if sha != conv.Get(t, i, "transcript_sha256") {
			t.Fatalf("row %d: transcripts.sha256 %v, conversations.transcript_sha256 %v", i, sha, conv.Get(t, i, "transcript_sha256"))
		}
		// An independent canonicalizer: gowebpki/jcs, the reference
		// convbatch's canonicalizer is held to.
		if canon, err := jcs.Transform(docs[i].raw); err == nil {
			sum := sha256.Sum256(canon)
			if sha != hex.EncodeToString(sum[:]) || size != int64(len(canon)) {
				t.Errorf("transcripts row %d (line %d): sha256 %v, canonical_bytes %v; jcs gives %x, %d bytes", i, docs[i].line, sha, size, sum, len(canon))
			}
		} else if sha != nil {
			t.Errorf("transcripts row %d (line %d): hashed, but jcs refuses the document: %v", i, docs[i].line, err)
		}
		if sha == nil {
			unhashable++
			if size != nil {
				t.Errorf("transcripts row %d: no hash but canonical_bytes %v", i, size)
			}
			continue
		}
		if n, ok := size.(int64); !ok || n <= 0 {
			t.Errorf("transcripts row %d: canonical_bytes %v", i, size)
		}
		fromTable = append(fromTable, [2]string{sha.(string), id.(string)})
	}
	if !reflect.DeepEqual(fromTable, printed) {
		t.Errorf("transcripts table (%d hashes) differs from convbatch hash (%d lines)", len(fromTable), len(printed))
		for i := 0; i < min(len(fromTable), len(printed)); i++ {
			if fromTable[i] != printed[i] {
				t.Errorf("first difference at %d: table %v, hash %v", i, fromTable[i], printed[i])
				break
			}
		}
	}
	if unhashable != exp.Transcripts.Unhashable || int64(len(fromTable)) != exp.Transcripts.Hashed {
		t.Errorf("transcripts: %d hashed, %d unhashable; Expect %+v", len(fromTable), unhashable, exp.Transcripts)
	}

	// usage: sums by provider and by agent equal Expect.Usage.
	usage := tables[tabledef.Usage]
	byProvider, byAgent := usageSums(t, usage)
	compareUsage(t, "usage by provider", byProvider, exp.Usage.ByProvider)
	compareUsage(t, "usage by agent", byAgent, exp.Usage.ByAgent)
	// Per conversation, the usage rows add up to the conversation's totals,
	// and the tokens map agrees with tokens_input and tokens_output.
	type tot struct {
		in, out int64
		cost    float64
		rows    int
	}
	perLine := map[int64]*tot{}
	for r := range usage.Rows {
		line := usage.Get(t, r, "source_line").(int64)
		s := perLine[line]
		if s == nil {
			s = &tot{}
			perLine[line] = s
		}
		s.rows++
		in, _ := usage.Get(t, r, "tokens_input").(int64)
		o, _ := usage.Get(t, r, "tokens_output").(int64)
		c, _ := usage.Get(t, r, "cost").(float64)
		s.in, s.out, s.cost = s.in+in, s.out+o, s.cost+c
		m, _ := usage.Get(t, r, "tokens").([]pqtest.KV)
		for _, e := range m {
			if e.Key == nil {
				t.Fatalf("usage row %d: a null key in tokens", r)
			}
			if e.Key == "input" && e.Value != usage.Get(t, r, "tokens_input") {
				t.Errorf("usage row %d: tokens[input] %v, tokens_input %v", r, e.Value, usage.Get(t, r, "tokens_input"))
			}
			if e.Key == "output" && e.Value != usage.Get(t, r, "tokens_output") {
				t.Errorf("usage row %d: tokens[output] %v, tokens_output %v", r, e.Value, usage.Get(t, r, "tokens_output"))
			}
		}
		if mi := usage.Get(t, r, "message_index").(int32); mi < 0 {
			t.Errorf("usage row %d: message_index %d", r, mi)
		}
	}
	var convIn, convOut int64
	for i := range conv.Rows {
		s := perLine[conv.Get(t, i, "source_line").(int64)]
		if s == nil {
			s = &tot{}
		}
		ci, co, cc := conv.Get(t, i, "tokens_input_total").(int64), conv.Get(t, i, "tokens_output_total").(int64), conv.Get(t, i, "cost_total").(float64)
		if ci != s.in || co != s.out || !closeRel(cc, s.cost) {
			t.Errorf("conversations row %d: totals (%d, %d, %v), its usage rows sum to (%d, %d, %v)", i, ci, co, cc, s.in, s.out, s.cost)
		}
		convIn, convOut = convIn+ci, convOut+co
	}
	var wantIn, wantOut int64
	for _, s := range exp.Usage.ByProvider {
		wantIn, wantOut = wantIn+s.TokensInput, wantOut+s.TokensOutput
	}
	if convIn != wantIn || convOut != wantOut {
		t.Errorf("conversations token totals (%d, %d), Expect (%d, %d)", convIn, convOut, wantIn, wantOut)
	}

	// tool_calls and tool-linkage counts.
	tc := tables[tabledef.ToolCalls]
	if int64(len(tc.Rows)) != exp.Tools.Calls {
		t.Errorf("tool_calls has %d rows, Expect.Tools.Calls %d", len(tc.Rows), exp.Tools.Calls)
	}
	var answered int64
	callsPerLine := map[int64]int32{}
	for r := range tc.Rows {
		callsPerLine[tc.Get(t, r, "source_line").(int64)]++
		mi := tc.Get(t, r, "message_index").(int32)
		res := tc.Get(t, r, "result_message_index")
		if tc.Get(t, r, "answered").(bool) {
			answered++
			if ri, ok := res.(int32); !ok || ri <= mi {
				t.Errorf("tool_calls row %d: answered, message %d, result_message_index %v", r, mi, res)
			}
		} else if res != nil {
			t.Errorf("tool_calls row %d: not answered but result_message_index %v", r, res)
		}
		if b := tc.Get(t, r, "arguments_bytes").(int64); b < 0 {
			t.Errorf("tool_calls row %d: arguments_bytes %d", r, b)
		}
	}
	// Every result gen writes answers a distinct call (a call id repeated
	// in one conversation gets no result), so answered calls = results.
	if answered != exp.Tools.Results {
		t.Errorf("%d answered tool calls, Expect.Tools.Results %d", answered, exp.Tools.Results)
	}
	if int64(len(tc.Rows))-answered != exp.Tools.Unanswered {
		t.Errorf("%d unanswered tool calls, Expect.Tools.Unanswered %d", int64(len(tc.Rows))-answered, exp.Tools.Unanswered)
	}
	var orphans, images, imageBytes int64
	for i := range conv.Rows {
		line := conv.Get(t, i, "source_line").(int64)
		if n := conv.Get(t, i, "tool_call_count").(int32); n != callsPerLine[line] {
			t.Errorf("conversations row %d: tool_call_count %d, tool_calls rows %d", i, n, callsPerLine[line])
		}
		orphans += int64(conv.Get(t, i, "tool_result_orphans").(int32))
		images += int64(conv.Get(t, i, "image_count").(int32))
		imageBytes += conv.Get(t, i, "image_bytes").(int64)
	}
	if orphans != exp.Tools.Orphans {
		t.Errorf("tool_result_orphans sum %d, Expect.Tools.Orphans %d", orphans, exp.Tools.Orphans)
	}
	if images != exp.Images.Messages || imageBytes != exp.Images.Bytes {
		t.Errorf("images (%d, %d bytes), Expect %+v", images, imageBytes, exp.Images)
	}

	// receipts: Expect.ReceiptList, in order, and receipts/receipts.jsonl.
	rc := tables[tabledef.Receipts]
	jsonl := readReceipts(t, filepath.Join(out, "receipts", "receipts.jsonl"))
	if len(rc.Rows) != len(exp.ReceiptList) || len(jsonl) != len(exp.ReceiptList) {
		t.Fatalf("receipts table %d rows, receipts.jsonl %d, Expect %d", len(rc.Rows), len(jsonl), len(exp.ReceiptList))
	}
	// has_receipt is true exactly for the documents with a receipts row.
	var withReceipt, receiptRows []int64
	for i := range conv.Rows {
		if conv.Get(t, i, "has_receipt").(bool) {
			withReceipt = append(withReceipt, conv.Get(t, i, "source_line").(int64))
		}
	}
	for i := range rc.Rows {
		receiptRows = append(receiptRows, rc.Get(t, i, "source_line").(int64))
	}
	if !reflect.DeepEqual(withReceipt, receiptRows) {
		t.Errorf("conversations with has_receipt at lines %v, receipts rows at lines %v", withReceipt, receiptRows)
	}
	var stmtInvalid int64
	for i, w := range exp.ReceiptList {
		reasons := []any{}
		for _, s := range w.Reasons {
			reasons = append(reasons, s)
		}
		got := []any{rc.Get(t, i, "conversation_id"), rc.Get(t, i, "source_line"), rc.Get(t, i, "source_file"), rc.Get(t, i, "algorithm"), rc.Get(t, i, "status"), rc.Get(t, i, "reasons")}
		want := []any{w.ConversationID, w.Line, in, w.Algorithm, w.Status, reasons}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("receipts row %d: %v, want %v (tamper %q)", i, got, want, w.Tamper)
		}
		j := jsonl[i]
		var signedAt any
		if ts, err := time.Parse(time.RFC3339Nano, j.SignedAt); err == nil {
			signedAt = pqtest.Micros(ts.UnixMicro())
		}
		var qk, qn any
		if j.QuorumN > 0 {
			qk, qn = int32(j.QuorumK), int32(j.QuorumN)
		}
		var ph any
		if j.PayloadHash != "" {
			ph = j.PayloadHash
		}
		got = []any{rc.Get(t, i, "signed_at"), rc.Get(t, i, "quorum_k"), rc.Get(t, i, "quorum_n"), rc.Get(t, i, "statements_valid"), rc.Get(t, i, "statements_invalid"), rc.Get(t, i, "payload_hash")}
		want = []any{signedAt, qk, qn, int32(j.StatementsValid), int32(j.StatementsInvalid), ph}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("receipts row %d: (signed_at, k, n, valid, invalid, payload_hash) %v, receipts.jsonl says %v", i, got, want)
		}
		stmtInvalid += int64(rc.Get(t, i, "statements_invalid").(int32))
	}
	if stmtInvalid != exp.Receipts.StatementsInvalid {
		t.Errorf("statements_invalid sum %d, Expect %d", stmtInvalid, exp.Receipts.StatementsInvalid)
	}
	t.Logf("read back: %d conversations, %d usage rows, %d tool calls (%d answered), %d receipts, %d transcripts",
		len(conv.Rows), len(usage.Rows), len(tc.Rows), answered, len(rc.Rows), len(tr.Rows))
}

// kv is a map cell's entry.
func kv(key string, value any) pqtest.KV { return pqtest.KV{Key: key, Value: value} }

// handcrafted covers the nulls and edge cases gen never writes, following
// docs/TABLES.md. Line 4 is a reject; h-5's cost is outside the double
// range, so it has no transcript hash and a null cost; h-6 has exact token
// literals, a leap second, truncated fractions, a message answering its own
// call (an orphan: a result answers an earlier call), an escaped call id, a
// null toolCallId, and a message whose only usage member is null (absent:
// no row).
const handcrafted = `{"id":"h-1","extensions":["usage-metadata","tool-linkage","agent-context","images-inline"],"title":"Hand","createdAt":"2024-05-01T10:00:00Z","agentId":"conv-agent","skillIds":["s1",7,"s2"],"messages":[` +
	`{"role":"user","content":"hi"},` +
	`{"role":"assistant","content":"a","tokens":{"input":5,"output":7,"cache_read":3},"cost":0.25},` +
	`{"role":"assistant","id":"m2","content":"b","provider":"openai","agentId":"msg-agent","createdAt":"2024-05-01T10:00:01.5+02:00"},` +
	`{"role":"assistant","content":"c","tokens":{"input":"x","output":1.5,"other":2},"cost":"free","provider":42},` +
	`{"role":"assistant","content":null,"toolCalls":[{"id":"c1","name":"search","arguments":{"q":"x"}},{"id":"c2","name":"calc","arguments":"1+1"},{"name":"noid"}]},` +
	`{"role":"tool","toolCallId":"c1","content":"r1"},` +
	`{"role":"tool","toolCallId":"c1","content":"r1 again"},` +
	`{"role":"tool","toolCallId":"zz","content":"?"},` +
	`{"role":"user","content":"data:image/png;base64,AAAA"},` +
	`{"role":"user","kind":"image","content":"QUJD"}]}
{"id":"h-2","messages":[]}
{"id":"h-3","extensions":[],"messages":[{"role":"user","content":"x","tokens":{}}]}
not json
{"id":"h-5","messages":[{"role":"assistant","content":"x","cost":1e400}]}
{"id":"h-6","createdAt":"2016-12-31T23:59:60.1234567Z","agentId":"conv6","messages":[` +
	`{"role":"assistant","content":"x","agentId":7,"tokens":{"input":-0,"output":1.2e3,"big":1e19,"neg":-1,"n":null},"cost":-0.5,"provider":null},` +
	`{"role":"assistant","content":"y","cost":1e-400,"createdAt":"2024-02-29T23:59:59.9999999-00:30"},` +
	`{"role":"assistant","content":"","toolCalls":[{"id":"self","name":"n","arguments":null},"notobj",{"id":"x\u0041","arguments":"x"}],"toolCallId":"self"},` +
	`{"role":"tool","toolCallId":"xA","content":"r"},` +
	`{"role":"tool","toolCallId":null,"content":"r"},` +
	`{"role":"assistant","content":"z","cost":null}]}
`

// TestTablesNulls checks exact cells on the handcrafted archive: absent and
// wrongly typed values are nulls, present ones keep their types.
func TestTablesNulls(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "hand.jsonl")
	writeFile(t, in, handcrafted)
	out := filepath.Join(dir, "out")
	runOK(t, "run", "-o", out, in)

	ts := func(s string) pqtest.Micros {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return pqtest.Micros(v.UnixMicro())
	}
	convTime, m2Time := ts("2024-05-01T10:00:00Z"), ts("2024-05-01T10:00:01.5+02:00")
	leapTime := ts("2017-01-01T00:00:00.123456Z") // 2016-12-31T23:59:60.1234567Z

	usage := pqtest.ReadTable(t, out, tabledef.Usage)
	// conversation_id, message_index, message_id, role, agent_id, provider,
	// tokens_input, tokens_output, tokens, cost, created_at, source_file, source_line
	wantUsage := [][]any{
		{"h-1", int32(1), nil, "assistant", "conv-agent", nil, int64(5), int64(7),
			[]pqtest.KV{kv("input", int64(5)), kv("output", int64(7)), kv("cache_read", int64(3))}, 0.25, convTime, in, int64(1)},
		{"h-1", int32(2), "m2", "assistant", "msg-agent", "openai", nil, nil, nil, nil, m2Time, in, int64(1)},
		{"h-1", int32(3), nil, "assistant", "conv-agent", nil, nil, nil,
			[]pqtest.KV{kv("input", nil), kv("output", nil), kv("other", int64(2))}, nil, convTime, in, int64(1)},
		{"h-3", int32(0), nil, "user", nil, nil, nil, nil, []pqtest.KV{}, nil, nil, in, int64(3)},
		{"h-5", int32(0), nil, "assistant", nil, nil, nil, nil, nil, nil, nil, in, int64(5)},
		{"h-6", int32(0), nil, "assistant", "conv6", nil, int64(0), int64(1200),
			[]pqtest.KV{kv("input", int64(0)), kv("output", int64(1200)), kv("big", nil), kv("neg", nil), kv("n", nil)}, -0.5, leapTime, in, int64(6)},
		{"h-6", int32(1), nil, "assistant", "conv6", nil, nil, nil, nil, 0.0, ts("2024-03-01T00:29:59.999999Z"), in, int64(6)},
	}
	pqtest.CompareRows(t, usage, wantUsage)

	conv := pqtest.ReadTable(t, out, tabledef.Conversations)
	exts := []any{"usage-metadata", "tool-linkage", "agent-context", "images-inline"}
	// conversation_id, title, created_at, extensions, message_count, agent_id,
	// skill_ids, swarm_role, leader_id, tokens_input_total, tokens_output_total,
	// cost_total, image_count, image_bytes, tool_call_count,
	// tool_result_orphans, has_receipt, transcript_sha256, source_file, source_line
	hashOf := map[string]any{}
	for _, h := range hashes(t, in) {
		hashOf[h[1]] = h[0]
	}
	wantConv := [][]any{
		{"h-1", "Hand", convTime, exts, int32(10), "conv-agent", []any{"s1", "s2"}, nil, nil, int64(5), int64(7), 0.25,
			int32(2), int64(6), int32(3), int32(1), false, hashOf["h-1"], in, int64(1)},
		{"h-2", nil, nil, nil, int32(0), nil, nil, nil, nil, int64(0), int64(0), 0.0,
			int32(0), int64(0), int32(0), int32(0), false, hashOf["h-2"], in, int64(2)},
		{"h-3", nil, nil, []any{}, int32(1), nil, nil, nil, nil, int64(0), int64(0), 0.0,
			int32(0), int64(0), int32(0), int32(0), false, hashOf["h-3"], in, int64(3)},
		{"h-5", nil, nil, nil, int32(1), nil, nil, nil, nil, int64(0), int64(0), 0.0,
			int32(0), int64(0), int32(0), int32(0), false, nil, in, int64(5)},
		{"h-6", nil, leapTime, nil, int32(6), "conv6", nil, nil, nil, int64(0), int64(1200), -0.5,
			int32(0), int64(0), int32(3), int32(2), false, hashOf["h-6"], in, int64(6)},
	}
	if _, ok := hashOf["h-5"]; ok || len(hashOf) != 4 {
		t.Errorf("convbatch hash printed %v; want h-1, h-2, h-3, h-6", hashOf)
	}
	pqtest.CompareRows(t, conv, wantConv)

	tc := pqtest.ReadTable(t, out, tabledef.ToolCalls)
	// conversation_id, message_index, call_id, name, arguments_bytes,
	// result_message_index, answered, source_file, source_line
	wantCalls := [][]any{
		{"h-1", int32(4), "c1", "search", int64(len(`{"q":"x"}`)), int32(5), true, in, int64(1)},
		{"h-1", int32(4), "c2", "calc", int64(len(`"1+1"`)), nil, false, in, int64(1)},
		{"h-1", int32(4), nil, "noid", int64(0), nil, false, in, int64(1)},
		{"h-6", int32(2), "self", "n", int64(len("null")), nil, false, in, int64(6)},
		{"h-6", int32(2), nil, nil, int64(0), nil, false, in, int64(6)},
		{"h-6", int32(2), "xA", nil, int64(len(`"x"`)), int32(3), true, in, int64(6)},
	}
	pqtest.CompareRows(t, tc, wantCalls)

	tr := pqtest.ReadTable(t, out, tabledef.Transcripts)
	for i, r := range tr.Rows {
		if i == 3 {
			if r[1] != nil || r[2] != nil {
				t.Errorf("transcripts h-5: sha256 %v, canonical_bytes %v; want nulls", r[1], r[2])
			}
			continue
		}
		if r[1] != hashOf[r[0].(string)] || r[2] == nil {
			t.Errorf("transcripts row %d: %v", i, r)
		}
	}
	rc := pqtest.ReadTable(t, out, tabledef.Receipts)
	if len(rc.Rows) != 0 {
		t.Errorf("receipts: %d rows, want 0", len(rc.Rows))
	}

	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	wantWarn := map[string]int64{
		"undeclared-extension":  5, // h-3, h-5 (usage); h-6 (usage, tools, agents)
		"usage-wrong-type":      4, // h-1 input "x", cost "free", provider 42; h-6 counter n null (a null provider or cost is absent)
		"usage-invalid-count":   4, // h-1 output 1.5; h-5 cost 1e400; h-6 big 1e19, neg -1
		"tool-result-orphan":    3, // h-1 zz; h-6 self (in its own message), null
		"transcript-unhashable": 1, // h-5
	}
	if !reflect.DeepEqual(nonNil(rep.Warnings), wantWarn) {
		t.Errorf("warnings %v, want %v", rep.Warnings, wantWarn)
	}
	if rep.Totals.Documents != 5 || rep.Totals.Rejects != 1 {
		t.Errorf("totals %+v", rep.Totals)
	}
}

// TestTablesDuckDB reads the tables of the shared archive with DuckDB's
// read_parquet and compares its sums with the pqarrow read-back and with
// gen's Expect.
func TestTablesDuckDB(t *testing.T) {
	_, out, exp := tableArchive(t)
	glob := func(name string) string {
		return "read_parquet(" + duckdbtest.Literal(filepath.Join(out, "tables", name, "*.parquet")) + ")"
	}
	res := duckdbtest.QueryAll(t,
		"select provider, count(*) as n, sum(cost) as cost, sum(tokens_input) as tin, sum(tokens_output) as tout from "+glob("usage")+" group by provider order by provider",
		"select coalesce(agent_id, '') as agent, count(*) as n, sum(cost) as cost, sum(tokens_input) as tin, sum(tokens_output) as tout from "+glob("usage")+" group by all order by agent",
		"select count(*) as n, sum(cost) as cost, sum(tokens_input) as tin, sum(tokens_output) as tout, count(*) filter (where tokens['input'] is distinct from tokens_input) as map_mismatch from "+glob("usage"),
		"select count(*) as n, sum(tool_result_orphans) as orphans, sum(image_count) as images, sum(image_bytes) as image_bytes, sum(tool_call_count) as calls, count(*) filter (where has_receipt) as receipts from "+glob("conversations"),
		"select count(*) as n, count(*) filter (where answered) as answered from "+glob("tool_calls"),
		"select status, count(*) as n from "+glob("receipts")+" group by status order by status",
		"select count(*) as n, count(sha256) as hashed from "+glob("transcripts"),
		"select column_name, column_type from (describe select * from "+glob("usage")+")",
		"select column_name, column_type from (describe select * from "+glob("conversations")+")",
	)

	// pqarrow's sums of the same files.
	usage := pqtest.ReadTable(t, out, tabledef.Usage)
	pqProvider, pqAgent := usageSums(t, usage)

	duckSums := func(rows []map[string]any, key string) map[string]gen.UsageSum {
		m := map[string]gen.UsageSum{}
		for _, r := range rows {
			k, _ := r[key].(string)
			m[k] = gen.UsageSum{Messages: duckdbtest.Int(t, r["n"]), Cost: duckdbtest.Float(t, r["cost"]),
				TokensInput: duckdbtest.Int(t, r["tin"]), TokensOutput: duckdbtest.Int(t, r["tout"])}
		}
		return m
	}
	duckProvider, duckAgent := duckSums(res[0].Rows, "provider"), duckSums(res[1].Rows, "agent")
	for _, k := range sortedKeysOf(duckProvider) {
		s := duckProvider[k]
		t.Logf("DuckDB usage provider=%-13q count=%d sum(cost)=%.9f sum(tokens_input)=%d sum(tokens_output)=%d", k, s.Messages, s.Cost, s.TokensInput, s.TokensOutput)
	}
	compareUsage(t, "DuckDB by provider vs Expect", duckProvider, exp.Usage.ByProvider)
	compareUsage(t, "DuckDB by provider vs pqarrow", duckProvider, pqProvider)
	compareUsage(t, "DuckDB by agent vs Expect", duckAgent, exp.Usage.ByAgent)
	compareUsage(t, "DuckDB by agent vs pqarrow", duckAgent, pqAgent)

	all := res[2].Rows[0]
	var want gen.UsageSum
	for _, s := range exp.Usage.ByProvider {
		want.Messages, want.TokensInput, want.TokensOutput, want.Cost = want.Messages+s.Messages, want.TokensInput+s.TokensInput, want.TokensOutput+s.TokensOutput, want.Cost+s.Cost
	}
	got := gen.UsageSum{Messages: duckdbtest.Int(t, all["n"]), Cost: duckdbtest.Float(t, all["cost"]), TokensInput: duckdbtest.Int(t, all["tin"]), TokensOutput: duckdbtest.Int(t, all["tout"])}
	t.Logf("DuckDB usage total: count=%d sum(cost)=%.9f sum(tokens_input)=%d sum(tokens_output)=%d", got.Messages, got.Cost, got.TokensInput, got.TokensOutput)
	compareUsage(t, "DuckDB usage total vs Expect", map[string]gen.UsageSum{"": got}, map[string]gen.UsageSum{"": want})
	if int64(len(usage.Rows)) != got.Messages {
		t.Errorf("DuckDB counts %d usage rows, pqarrow %d", got.Messages, len(usage.Rows))
	}
	if n := duckdbtest.Int(t, all["map_mismatch"]); n != 0 {
		t.Errorf("DuckDB: %d usage rows where tokens['input'] differs from tokens_input", n)
	}

	c := res[3].Rows[0]
	t.Logf("DuckDB conversations: count=%v orphans=%v images=%v image_bytes=%v tool_calls=%v with_receipt=%v", c["n"], c["orphans"], c["images"], c["image_bytes"], c["calls"], c["receipts"])
	for _, chk := range []struct {
		what      string
		got, want int64
	}{
		{"count(*) conversations", duckdbtest.Int(t, c["n"]), exp.Documents},
		{"sum(tool_result_orphans)", duckdbtest.Int(t, c["orphans"]), exp.Tools.Orphans},
		{"sum(image_count)", duckdbtest.Int(t, c["images"]), exp.Images.Messages},
		{"sum(image_bytes)", duckdbtest.Int(t, c["image_bytes"]), exp.Images.Bytes},
		{"sum(tool_call_count)", duckdbtest.Int(t, c["calls"]), exp.Tools.Calls},
		{"count(has_receipt)", duckdbtest.Int(t, c["receipts"]), int64(len(exp.ReceiptList))},
		{"count(*) tool_calls", duckdbtest.Int(t, res[4].Rows[0]["n"]), exp.Tools.Calls},
		{"count(answered) tool_calls", duckdbtest.Int(t, res[4].Rows[0]["answered"]), exp.Tools.Results},
		{"count(*) transcripts", duckdbtest.Int(t, res[6].Rows[0]["n"]), exp.Documents},
		{"count(sha256) transcripts", duckdbtest.Int(t, res[6].Rows[0]["hashed"]), exp.Transcripts.Hashed},
	} {
		if chk.got != chk.want {
			t.Errorf("DuckDB %s = %d, want %d", chk.what, chk.got, chk.want)
		}
	}
	status := map[string]int64{}
	for _, r := range res[5].Rows {
		status[r["status"].(string)] = duckdbtest.Int(t, r["n"])
	}
	t.Logf("DuckDB receipts by status: %v", status)
	wantStatus := map[string]int64{}
	for k, v := range map[string]int64{"valid": exp.Receipts.Valid, "invalid": exp.Receipts.Invalid, "incomplete": exp.Receipts.Incomplete} {
		if v > 0 {
			wantStatus[k] = v
		}
	}
	if !reflect.DeepEqual(status, wantStatus) {
		t.Errorf("DuckDB receipts by status %v, want %v", status, wantStatus)
	}

	// DuckDB sees the narrow types and the UTC timestamps.
	types := map[string]string{}
	for _, r := range append(append([]map[string]any{}, res[7].Rows...), res[8].Rows...) {
		types[r["column_name"].(string)] = r["column_type"].(string)
	}
	for col, want := range map[string]string{
		"message_index": "INTEGER", "message_count": "INTEGER", "image_count": "INTEGER", "tool_result_orphans": "INTEGER",
		"tokens_input": "BIGINT", "source_line": "BIGINT", "cost": "DOUBLE", "created_at": "TIMESTAMP WITH TIME ZONE",
		"tokens": "MAP(VARCHAR, BIGINT)", "extensions": "VARCHAR[]", "has_receipt": "BOOLEAN",
	} {
		if types[col] != want {
			t.Errorf("DuckDB type of %s: %q, want %q", col, types[col], want)
		}
	}
}

// TestTablesRoundTrip checks the round-trip law on the tables: run on an
// archive and run on its own written-back archive give the same rows in
// every table (source_file aside).
func TestTablesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl")
	genArchive(t, in, "--conversations", "300", "--seed", "53", "--tamper", "0.3")
	out1, out2 := filepath.Join(dir, "out1"), filepath.Join(dir, "out2")
	runOK(t, "run", "-o", out1, "--keys", in+".keys.json", in)
	back := filepath.Join(out1, "archive", "x.jsonl.zst")
	runOK(t, "run", "-o", out2, "--keys", in+".keys.json", back)
	for _, name := range tabledef.Names {
		a, b := pqtest.ReadTable(t, out1, name), pqtest.ReadTable(t, out2, name)
		if !pqtest.SameFields(a.Schema, b.Schema) {
			t.Errorf("table %s: schemas differ", name)
		}
		if len(a.Rows) != len(b.Rows) {
			t.Errorf("table %s: %d rows, %d after the round trip", name, len(a.Rows), len(b.Rows))
			continue
		}
		if len(a.Rows) == 0 && !statementsPending(name) {
			t.Errorf("table %s: no rows to compare", name)
		}
		src := a.Col(t, "source_file")
		// A receipt's first_committed_at is each OUT's own commit time.
		at := -1
		if name == tabledef.Receipts {
			at = a.Col(t, tabledef.ColFirstCommittedAt)
		}
		diffs := 0
		for r := range a.Rows {
			for c := range a.Rows[r] {
				if c == src || c == at {
					continue
				}
				if !reflect.DeepEqual(a.Rows[r][c], b.Rows[r][c]) {
					diffs++
					if diffs <= 5 {
						t.Errorf("table %s row %d %s: %#v, after the round trip %#v", name, r, a.Schema.Field(c).Name, a.Rows[r][c], b.Rows[r][c])
					}
				}
			}
			if a.Rows[r][src] != in || b.Rows[r][src] != back {
				t.Errorf("table %s row %d: source_file %v and %v, want %s and %s", name, r, a.Rows[r][src], b.Rows[r][src], in, back)
			}
		}
		if diffs > 0 {
			t.Errorf("table %s: %d cells differ", name, diffs)
		}
	}
}

// TestTablesFlag checks --tables: a subset writes only its directories,
// none writes no tables/, an empty table still has one part with its
// schema, an unknown name is a usage error.
func TestTablesFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl.zst")
	genArchive(t, in, "--conversations", "60", "--seed", "54", "--no-receipts")

	listDirs := func(out string) []string {
		entries, err := os.ReadDir(filepath.Join(out, "tables"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	some := filepath.Join(dir, "some")
	runOK(t, "run", "-o", some, "--tables", "usage,receipts", in)
	if got := listDirs(some); !reflect.DeepEqual(got, []string{"receipts", "usage"}) {
		t.Errorf("--tables usage,receipts wrote %v", got)
	}
	var rep sink.Report
	readJSON(t, filepath.Join(some, "report.json"), &rep)
	if want := []string{"tables/usage/part-00000.parquet", "tables/receipts/part-00000.parquet"}; !reflect.DeepEqual(rep.Outputs.Tables, want) {
		t.Errorf("report outputs.tables %v, want %v", rep.Outputs.Tables, want)
	}
	if !reflect.DeepEqual(rep.Settings.Tables, []string{"usage", "receipts"}) {
		t.Errorf("report settings.tables %v", rep.Settings.Tables)
	}
	// No receipts in the archive: the receipts table is one part with the
	// schema and no rows.
	rc := pqtest.ReadTable(t, some, tabledef.Receipts)
	if len(rc.Parts) != 1 || len(rc.Rows) != 0 || !pqtest.SameFields(rc.Schema, parquetout.Schema(tabledef.Receipts)) {
		t.Errorf("empty receipts table: %d parts, %d rows, schema %v", len(rc.Parts), len(rc.Rows), rc.Schema)
	} else if rc.Parts[0].RowGroups != 0 {
		// docs/TABLES.md: "A table with no rows still gets one part
		// (schema, no row groups)".
		t.Errorf("empty receipts table: %d row groups %v, want none", rc.Parts[0].RowGroups, rc.Parts[0].RGRows)
	}
	if u := pqtest.ReadTable(t, some, tabledef.Usage); len(u.Rows) == 0 {
		t.Error("usage table is empty")
	}

	none := filepath.Join(dir, "none")
	runOK(t, "run", "-o", none, "--tables", "none", in)
	if _, err := os.Stat(filepath.Join(none, "tables")); !os.IsNotExist(err) {
		t.Errorf("--tables none: tables/ exists (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(none, "report.json")); err != nil {
		t.Errorf("--tables none: %v", err)
	}

	bogus := filepath.Join(dir, "bogus")
	if r := convbatch(t, nil, "run", "-o", bogus, "--tables", "bogus", in); r.code != 2 || !strings.Contains(r.stderr, "bogus") {
		t.Errorf("--tables bogus: exit %d (%s), want 2 naming the table", r.code, r.stderr)
	}
	if _, err := os.Stat(bogus); !os.IsNotExist(err) {
		t.Errorf("--tables bogus created the output directory (%v)", err)
	}
}
