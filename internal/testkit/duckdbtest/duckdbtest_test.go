package duckdbtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestQuery(t *testing.T) {
	rows := Query(t, "select 42::integer as i, 9007199254740993::bigint as b, 0.1::double as d, null as n, 'it''s' as s, [1, 2] as l")
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if Int(t, r["i"]) != 42 || Int(t, r["b"]) != 9007199254740993 || Float(t, r["d"]) != 0.1 || r["n"] != nil || r["s"] != "it's" {
		t.Errorf("row %v", r)
	}
	if l, ok := r["l"].([]any); !ok || len(l) != 2 {
		t.Errorf("list %v", r["l"])
	}
}

func TestQueryAllSharesOneDatabase(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a b's.csv")
	if err := os.WriteFile(csv, []byte("x,y\n1,a\n2,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := QueryAll(t,
		"create view v as select * from read_csv("+Literal(csv)+")",
		"select sum(x) as total, string_agg(y, '' order by y) as ys from v",
		"select column_name, column_type from (describe v) order by column_name")
	if got := res[1].Rows[0]; Int(t, got["total"]) != 3 || got["ys"] != "ab" {
		t.Errorf("sum over the view: %v", got)
	}
	if res[1].Columns[0] != "total" || res[1].Types[0] != "HUGEINT" && res[1].Types[0] != "BIGINT" {
		t.Errorf("columns %v types %v", res[1].Columns, res[1].Types)
	}
	if len(res[2].Rows) != 2 {
		t.Errorf("describe: %v", res[2].Rows)
	}
}
