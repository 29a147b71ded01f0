package pqtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
)

// LatestRows is a table's rows as sorted JSON strings, a receipt's latest
// verdict only (the rows an incremental OUT adds when a later night
// re-resolves it replace its earlier ones), without what is each OUT's
// own: when and in which run it first committed a receipt. Two OUTs that
// hold the same nights, built night by night or at once, by convbatch or
// convbeam, have the same LatestRows.
func LatestRows(t testing.TB, out, table string) []string {
	t.Helper()
	tb := ReadDataset(t, out, table)
	var rows []string
	switch table {
	default:
		for _, r := range tb.Rows {
			b, _ := json.Marshal(r)
			rows = append(rows, string(b))
		}
	case tabledef.ReceiptStatements:
		file, line, idx, rr := tb.Col(t, "source_file"), tb.Col(t, "source_line"), tb.Col(t, "statement_index"), tb.Col(t, "reresolves_run")
		latest := map[string][]string{}
		for _, r := range tb.Rows {
			k := fmt.Sprint(r[file], ":", r[line])
			if r[idx] == int32(0) {
				latest[k] = nil
			}
			r = slices.Clone(r)
			r[rr] = nil
			b, _ := json.Marshal(r)
			latest[k] = append(latest[k], string(b))
		}
		for _, v := range latest {
			rows = append(rows, v...)
		}
	case tabledef.Receipts:
		file, line, rr := tb.Col(t, "source_file"), tb.Col(t, "source_line"), tb.Col(t, "reresolves_run")
		latest := map[string]string{}
		for _, r := range tb.Rows {
			k := fmt.Sprint(r[file], ":", r[line])
			if _, seen := latest[k]; seen && r[rr] == nil {
				t.Errorf("receipt %s has two first verdicts", k)
			}
			r = slices.Clone(r)
			r[rr], r[tb.Col(t, "first_run")], r[tb.Col(t, "first_committed_at")] = nil, nil, nil
			b, _ := json.Marshal(r)
			latest[k] = string(b)
		}
		for _, v := range latest {
			rows = append(rows, v)
		}
	}
	sort.Strings(rows)
	return rows
}
