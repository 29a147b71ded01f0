package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/duckdbtest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// statementsFilled tells whether runs fill receipt_statements: false
// until helper J's branch (h43-judge) makes the pipeline fill
// verify.ReceiptResult.Statements. While it is false, the tests that want
// rows in every table let receipt_statements be empty (statementsPending).
// h43-judge is merged: it is true, and it and statementsPending can go.
const statementsFilled = true

// statementsPending reports whether table name may be empty because runs
// do not fill receipt_statements yet (statementsFilled).
func statementsPending(name string) bool {
	return name == tabledef.ReceiptStatements && !statementsFilled
}

// keyStatuses are the values of receipt_statements.key_status
// (docs/TABLES.md).
var keyStatuses = map[string]bool{"pinned": true, "unpinned": true, "not-yet-valid": true, "expired": true, "revoked": true, "unknown": true}

// TestReceiptStatementsTable runs with --keys on a gen archive with
// receipts and reads receipt_statements and receipts back with DuckDB:
// one statement row per statement every receipt counts, each with its
// receipt's position, agent, algorithm and signature validity; report.json
// counts its rows.
func TestReceiptStatementsTable(t *testing.T) {
	_, out, exp := tableArchive(t)
	glob := func(name string) string {
		return "read_parquet(" + duckdbtest.Literal(filepath.Join(out, "tables", name, "*.parquet")) + ")"
	}
	res := duckdbtest.QueryAll(t,
		// Receipts and the statements they count, against their rows.
		"select count(*) as receipts, coalesce(sum(statements_valid + statements_invalid), 0) as statements, coalesce(sum(statements_valid), 0) as valid, "+
			"count(envelope_key_fingerprint) as env_fp, count(first_run) as first_run, count(first_committed_at) as first_at, "+
			"count(*) filter (where (first_run is null) <> (first_committed_at is null)) as first_mismatch, "+
			"count(*) filter (where envelope_key_fingerprint is not null and not regexp_full_match(envelope_key_fingerprint, '[0-9a-f]{64}')) as bad_env_fp from "+glob("receipts"),
		"select count(*) as n, count(*) filter (where signature_valid) as valid, "+
			"count(*) filter (where signature_valid and (agent_id is null or algorithm is null)) as valid_unnamed, "+
			"count(key_fingerprint) as fp, count(*) filter (where key_fingerprint is not null and not regexp_full_match(key_fingerprint, '[0-9a-f]{64}')) as bad_fp from "+glob("receipt_statements"),
		// Per receipt: its statements rows, numbered 0.., match its counts.
		"select count(*) as mismatched from "+glob("receipts")+" r left join "+
			"(select source_file, source_line, count(*) as n, count(*) filter (where signature_valid) as v, max(statement_index) as top from "+glob("receipt_statements")+" s group by all) s using (source_file, source_line) "+
			"where coalesce(s.n, 0) <> r.statements_valid + r.statements_invalid or coalesce(s.v, 0) <> r.statements_valid or coalesce(s.top, -1) <> coalesce(s.n, 0) - 1",
		"select count(*) as orphans from "+glob("receipt_statements")+" s anti join "+glob("receipts")+" r using (source_file, source_line, conversation_id)",
		"select key_status, count(*) as n from "+glob("receipt_statements")+" group by all order by all",
		"select column_name, column_type from (describe select * from "+glob("receipt_statements")+")",
	)
	rc, st := res[0].Rows[0], res[1].Rows[0]
	receipts, statements, valid := duckdbtest.Int(t, rc["receipts"]), duckdbtest.Int(t, rc["statements"]), duckdbtest.Int(t, rc["valid"])
	t.Logf("receipts %d counting %d statements (%d valid); receipt_statements rows %v (%v valid, %v fingerprinted); receipts with envelope fingerprint %v, first_run %v",
		receipts, statements, valid, st["n"], st["valid"], st["fp"], rc["env_fp"], rc["first_run"])
	if receipts != int64(len(exp.ReceiptList)) || statements == 0 || valid == 0 {
		t.Fatalf("receipts table: %d receipts counting %d statements (%d valid), want the archive's %d receipts with statements", receipts, statements, valid, len(exp.ReceiptList))
	}

	// report.json counts the table's rows, as its parts hold them.
	var rep sink.Report
	readJSON(t, filepath.Join(out, "report.json"), &rep)
	tb := pqtest.ReadTable(t, out, tabledef.ReceiptStatements)
	pqtest.CheckSchema(t, tb)
	pqtest.CheckCellTypes(t, tb)
	if got, ok := rep.Tables[tabledef.ReceiptStatements]; !ok || got.Rows != int64(len(tb.Rows)) || got.Rows != duckdbtest.Int(t, st["n"]) {
		t.Errorf("report.json tables.receipt_statements %+v (%v), the parts hold %d rows", got, ok, len(tb.Rows))
	}
	if rep.Cumulative == nil || rep.Cumulative.Rows[tabledef.ReceiptStatements] != int64(len(tb.Rows)) {
		t.Errorf("report.json cumulative rows %+v, want receipt_statements %d", rep.Cumulative, len(tb.Rows))
	}
	types := map[string]string{}
	for _, r := range res[5].Rows {
		types[r["column_name"].(string)] = r["column_type"].(string)
	}
	for col, want := range map[string]string{"statement_index": "INTEGER", "signature_valid": "BOOLEAN", "key_status": "VARCHAR", "signed_at": "TIMESTAMP WITH TIME ZONE", "source_line": "BIGINT"} {
		if types[col] != want {
			t.Errorf("DuckDB type of receipt_statements.%s: %q, want %q", col, types[col], want)
		}
	}

	switch n := duckdbtest.Int(t, st["n"]); {
	case n > 0 && !statementsFilled:
		t.Fatalf("runs fill receipt_statements now (%d rows): set statementsFilled to true in cli/statements_test.go", n)
	case n == 0 && !statementsFilled:
		// TODO(J, h43-judge): see statementsFilled.
		t.Skipf("receipt_statements is empty: verify.ReceiptResult.Statements is not filled yet (helper J, branch h43-judge); the receipts count %d statements", statements)
	}
	if n := duckdbtest.Int(t, st["n"]); n != statements {
		t.Errorf("receipt_statements has %d rows, the receipts count %d statements", n, statements)
	}
	if n := duckdbtest.Int(t, st["valid"]); n != valid {
		t.Errorf("receipt_statements has %d valid signatures, the receipts count %d", n, valid)
	}
	for _, chk := range []struct {
		what string
		v    any
	}{
		{"valid statements without agent or algorithm", st["valid_unnamed"]},
		{"receipts whose statement rows differ from their counts", res[2].Rows[0]["mismatched"]},
		{"statement rows without their receipt", res[3].Rows[0]["orphans"]},
		{"malformed key fingerprints", st["bad_fp"]},
		{"malformed envelope fingerprints", rc["bad_env_fp"]},
		{"receipts with first_run and first_committed_at not both set", rc["first_mismatch"]},
	} {
		if n := duckdbtest.Int(t, chk.v); n != 0 {
			t.Errorf("%s: %d", chk.what, n)
		}
	}
	for _, r := range res[4].Rows {
		if s, _ := r["key_status"].(string); !keyStatuses[s] {
			t.Errorf("key_status %q (%v rows) is not one docs/TABLES.md names", s, r["n"])
		}
	}
	// Every statement whose signature verifies has a well-formed key, so
	// a fingerprint; every receipt was first committed by this one run;
	// --keys pins keys.
	if n := duckdbtest.Int(t, st["fp"]); n < valid {
		t.Errorf("%d statements fingerprinted, fewer than the %d whose signature verifies", n, valid)
	}
	if n := duckdbtest.Int(t, rc["first_run"]); n != receipts {
		t.Errorf("%d receipts with a first_run, want all %d", n, receipts)
	}
	pinned := false
	for _, r := range res[4].Rows {
		pinned = pinned || r["key_status"] == "pinned"
	}
	if !pinned {
		t.Errorf("no statement key pinned under --keys: %v", res[4].Rows)
	}
}

// auditQuery is a DuckDB query of docs/TABLES.md, "Auditing receipts".
var auditQuery = regexp.MustCompile("(?s)```sql\n-- ([a-z ]+)\n(.*?)```")

// docAuditQueries returns the queries of docs/TABLES.md by their first
// line's name, with OUT replaced by out.
func docAuditQueries(t *testing.T, out string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "TABLES.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, q := range auditQuery.FindAllStringSubmatch(string(b), -1) {
		m[q[1]] = strings.ReplaceAll(q[2], "'OUT/", "'"+filepath.ToSlash(out)+"/")
	}
	return m
}

// TestAuditQueriesDuckDB runs the auditor's queries of docs/TABLES.md as
// written on a real OUT (a run with --keys over a gen archive with
// receipts) and holds each result to what the tables hold, counted
// another way.
func TestAuditQueriesDuckDB(t *testing.T) {
	_, out, exp := tableArchive(t)
	queries := docAuditQueries(t, out)
	glob := func(name string) string {
		return "read_parquet(" + duckdbtest.Literal(filepath.Join(out, "tables", name, "*.parquet")) + ")"
	}
	truth := duckdbtest.QueryAll(t,
		"select count(*) as receipts, count(quorum_k) as quorum from "+glob("receipts"),
		"select count(*) as n, count(key_fingerprint) as fp, count(distinct (source_file, source_line)) as receipts from "+glob("receipt_statements"),
	)
	receipts, quorum := duckdbtest.Int(t, truth[0].Rows[0]["receipts"]), duckdbtest.Int(t, truth[0].Rows[0]["quorum"])
	statements, fingerprinted := duckdbtest.Int(t, truth[1].Rows[0]["n"]), duckdbtest.Int(t, truth[1].Rows[0]["fp"])
	if receipts != int64(len(exp.ReceiptList)) || quorum == 0 {
		t.Fatalf("the OUT holds %d receipts (%d with a quorum), the archive %d", receipts, quorum, len(exp.ReceiptList))
	}
	sum := func(rows []map[string]any, col string) int64 {
		var n int64
		for _, r := range rows {
			n += duckdbtest.Int(t, r[col])
		}
		return n
	}
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, rows []map[string]any)
	}{
		{"receipts by key", func(t *testing.T, rows []map[string]any) {
			if n := sum(rows, "receipts"); n != receipts {
				t.Errorf("counts %d receipts, the table holds %d", n, receipts)
			}
			if len(rows) == 0 || sum(rows, "valid") > receipts {
				t.Errorf("%d keys, %d valid receipts", len(rows), sum(rows, "valid"))
			}
		}},
		{"receipts by agent", func(t *testing.T, rows []map[string]any) {
			if n := sum(rows, "statements"); n != statements {
				t.Errorf("counts %d statements, the table holds %d", n, statements)
			}
			if statements > 0 && len(rows) < 2 {
				t.Errorf("%d agents for %d statements", len(rows), statements)
			}
		}},
		{"keys by count", func(t *testing.T, rows []map[string]any) {
			if n := sum(rows, "statements"); n != fingerprinted {
				t.Errorf("counts %d statements, the table holds %d with a key fingerprint", n, fingerprinted)
			}
			for i := 1; i < len(rows); i++ {
				if duckdbtest.Int(t, rows[i]["statements"]) > duckdbtest.Int(t, rows[i-1]["statements"]) {
					t.Errorf("row %d: not ranked by statements", i)
				}
			}
		}},
		{"quorum margin", func(t *testing.T, rows []map[string]any) {
			if int64(len(rows)) != quorum {
				t.Errorf("%d rows, %d receipts with a quorum", len(rows), quorum)
			}
			for i, r := range rows {
				va, k, m := duckdbtest.Int(t, r["valid_agents"]), duckdbtest.Int(t, r["quorum_k"]), duckdbtest.Int(t, r["margin"])
				if m != va-k || (i > 0 && m < duckdbtest.Int(t, rows[i-1]["margin"])) {
					t.Errorf("row %d: margin %d, valid agents %d, quorum_k %d (or not in margin order)", i, m, va, k)
				}
				// TODO(J, h43-judge): once statements are filled, a valid
				// receipt has a margin of at least 0.
				if statements > 0 && r["status"] == "valid" && m < 0 {
					t.Errorf("row %d: a valid receipt with margin %d", i, m)
				}
			}
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			q, ok := queries[tc.name]
			if !ok {
				t.Fatalf("docs/TABLES.md has no query %q (it has %d)", tc.name, len(queries))
			}
			res := duckdbtest.QueryAll(t, q)
			t.Logf("%s: %d rows", tc.name, len(res[0].Rows))
			tc.check(t, res[0].Rows)
		})
	}
	if len(queries) != 4 {
		t.Errorf("docs/TABLES.md has %d named queries, want 4: %v", len(queries), fmt.Sprint(queries))
	}
}

// writeReceiptParts writes receipts as run's part of the receipts and
// receipt_statements tables under out, named as an incremental run names
// its parts (part-rNNNNNN-00000.parquet).
func writeReceiptParts(t *testing.T, out string, run int, receipts []verify.ReceiptResult) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "tables")
	txn, err := sink.NewTxn(tmp)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{tabledef.Receipts, tabledef.ReceiptStatements}
	tb := parquetout.NewTables(txn, names, parquetout.TableOptions{})
	if err := tb.AddReceipts(receipts); err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		dir := filepath.Join(out, "tables", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(tmp, name, "part-00000.parquet"), filepath.Join(dir, fmt.Sprintf("part-r%06d-00000.parquet", run))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAuditQueriesExact runs the auditor's queries of docs/TABLES.md on
// tables written from receipts built by hand, over two runs (the second
// resolves a receipt of the first again), and compares every row: each
// query takes a receipt's latest rows only.
func TestAuditQueriesExact(t *testing.T) {
	fpA, fpB, fpC := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	fpE1, fpE2 := strings.Repeat("1", 64), strings.Repeat("2", 64)
	stmt := func(i int, agent, fp string, ok bool) verify.StatementKey {
		return verify.StatementKey{Index: i, AgentID: agent, Algorithm: "ed25519", Stance: "approve", Fingerprint: fp, Status: verify.KeyStatusPinned, SignatureValid: ok}
	}
	receipt := func(line int64, env string, k int, st verify.Status, rer int, stmts ...verify.StatementKey) verify.ReceiptResult {
		r := verify.ReceiptResult{File: "in.jsonl", Line: line, ConversationID: fmt.Sprintf("c%d", line), Algorithm: "ed25519",
			QuorumK: k, QuorumN: len(stmts), Status: st, Reasons: []string{}, ReresolvesRun: rer, EnvelopeKeyFingerprint: env,
			FirstRun: 1, FirstCommittedAtMicros: 1_700_000_000_000_000, Statements: stmts}
		for _, s := range stmts {
			if s.SignatureValid {
				r.StatementsValid++
			} else {
				r.StatementsInvalid++
			}
		}
		return r
	}
	out := filepath.Join(t.TempDir(), "out")
	writeReceiptParts(t, out, 1, []verify.ReceiptResult{
		receipt(1, fpE1, 2, verify.StatusValid, 0, stmt(0, "a1", fpA, true), stmt(1, "a2", fpB, true), stmt(2, "a2", fpB, true)),
		receipt(2, fpE1, 1, verify.StatusValid, 0, stmt(0, "a1", fpA, true), stmt(1, "a3", fpC, true)),
		receipt(3, fpE2, 2, verify.StatusIncomplete, 0, stmt(0, "a1", fpA, true), stmt(1, "a3", fpC, false), stmt(2, "a4", "", false)),
	})
	// Run 2 resolves line 3 again: its statements are rewritten, one
	// fewer (a stale row of run 1 must not count).
	writeReceiptParts(t, out, 2, []verify.ReceiptResult{
		receipt(3, fpE2, 2, verify.StatusInvalid, 1, stmt(0, "a1", fpA, true), stmt(1, "a3", fpC, false)),
	})
	queries := docAuditQueries(t, out)
	for _, tc := range []struct {
		name string
		cols []string
		want []string
	}{
		{"receipts by key", []string{"envelope_key_fingerprint", "receipts", "valid"}, []string{fpE1 + " 2 2", fpE2 + " 1 0"}},
		{"receipts by agent", []string{"agent_id", "receipts", "statements", "valid_statements"}, []string{"a1 3 3 3", "a3 2 2 1", "a2 1 2 2"}},
		{"keys by count", []string{"key_fingerprint", "agents", "key_status", "statements", "valid_statements", "receipts"},
			[]string{fpA + " a1 pinned 3 3 3", fpB + " a2 pinned 2 2 1", fpC + " a3 pinned 2 1 2"}},
		{"quorum margin", []string{"source_line", "status", "quorum_k", "valid_agents", "margin"}, []string{"3 invalid 2 1 -1", "1 valid 2 2 0", "2 valid 1 2 1"}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			res := duckdbtest.QueryAll(t, queries[tc.name])
			var got []string
			for _, r := range res[0].Rows {
				var cells []string
				for _, c := range tc.cols {
					cells = append(cells, fmt.Sprint(r[c]))
				}
				got = append(got, strings.Join(cells, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
			}
		})
	}
}
