package cli

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/internal/testkit/pqtest"
	"github.com/convbatch/convbatch/tabledef"
)

// recipeMarker is the comment in docs/TABLES.md that the ClickHouse
// recipe's SQL block follows.
const recipeMarker = "<!-- clickhouse-recipe:"

// recipeDay is the day the recipe's filter names; the test puts a day of
// its data in its place.
const recipeDay = "'2026-11-29'"

// clickHouseRecipe returns the statements of docs/TABLES.md's ClickHouse
// recipe as the page shows them (its comment lines dropped), and fails
// the test unless the recipe is the page's first section.
func clickHouseRecipe(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "TABLES.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var firstSection string
	state := 0 // 0 before the marker, 1 before the block, 2 in it, 3 after
	var sql strings.Builder
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") && firstSection == "" {
			firstSection = line
		}
		switch {
		case state == 0 && strings.HasPrefix(line, recipeMarker):
			state = 1
		case state == 1 && line == "```sql":
			state = 2
		case state == 1 && strings.TrimSpace(line) != "":
			t.Fatalf("docs/TABLES.md:%d: the recipe marker is not followed by a ```sql block", n)
		case state == 2 && line == "```":
			state = 3
		case state == 2 && !strings.HasPrefix(strings.TrimSpace(line), "--"):
			sql.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if state != 3 {
		t.Fatalf("docs/TABLES.md: no complete ClickHouse recipe after %q", recipeMarker)
	}
	if !strings.Contains(firstSection, "ClickHouse") {
		t.Errorf("docs/TABLES.md: the first section is %q, not the ClickHouse recipe", firstSection)
	}
	var out []string
	for _, s := range strings.Split(sql.String(), ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// usageGroup is the expected answer for one (day, provider) of usage.
type usageGroup struct {
	n    int64
	cost float64
}

// TestClickHouseRecipe runs docs/TABLES.md's ClickHouse recipe, exactly
// as the page shows it (OUT and its example day replaced), in chDB over a
// day-partitioned run whose null partition holds rows: the count of every
// row, the count and cost of one day, and the messages and cost by day
// and provider are those of the rows pqarrow reads from the same files
// (issue 45 item 11). ClickHouse with its default settings fails on the
// null partition, which is why the recipe exists; and the day's query
// still answers with every other day's files damaged, as the recipe says
// it reads that day's files only.
func TestClickHouseRecipe(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	chdbtest.Require(t)
	stmts := clickHouseRecipe(t)
	if len(stmts) != 4 || !strings.HasPrefix(stmts[0], "SET ") {
		t.Fatalf("the recipe has %d statements, want SET and 3 queries: %q", len(stmts), stmts)
	}

	dir := t.TempDir()
	in := filepath.Join(dir, "p.jsonl.zst")
	genArchive(t, in, "--conversations", "80", "--seed", "61", "--dates", "spread", "--max-doc-bytes", "256KiB")
	out := filepath.Join(dir, "out")
	runOK(t, "run", "-q", "-o", out, "--partition-by", "day", "--max-doc-bytes", "256KiB", in)

	// What the recipe must answer, from the rows pqarrow reads.
	tb := pqtest.ReadDataset(t, out, tabledef.Usage)
	groups := map[[2]string]*usageGroup{}
	byDay := map[string]*usageGroup{}
	var nulls int64
	for r := range tb.Rows {
		day := "NULL"
		if v := tb.Get(t, r, tabledef.ColCreatedAt); v != nil {
			day = time.UnixMicro(int64(v.(pqtest.Micros))).UTC().Format(time.DateOnly)
		} else {
			nulls++
		}
		provider := "NULL"
		if v := tb.Get(t, r, tabledef.ColProvider); v != nil {
			provider = v.(string)
		}
		cost := 0.0
		if v := tb.Get(t, r, tabledef.ColCost); v != nil {
			cost = v.(float64)
		}
		for _, g := range []*usageGroup{group(groups, [2]string{day, provider}), group(byDay, day)} {
			g.n++
			g.cost += cost
		}
	}
	if nulls == 0 || len(byDay) < 10 {
		t.Fatalf("the data has %d days and %d rows without a time: the recipe would not be tested on a null partition", len(byDay), nulls)
	}
	busiest := ""
	for d, g := range byDay {
		if d != "NULL" && (busiest == "" || g.n > byDay[busiest].n || g.n == byDay[busiest].n && d < busiest) {
			busiest = d
		}
	}

	for i, s := range stmts {
		if !strings.Contains(s, "'OUT/") {
			continue
		}
		stmts[i] = strings.ReplaceAll(s, "'OUT/", "'out/")
	}
	if !strings.Contains(stmts[2], recipeDay) {
		t.Fatalf("the recipe's day filter names no %s: %s", recipeDay, stmts[2])
	}
	stmts[2] = strings.ReplaceAll(stmts[2], recipeDay, "'"+busiest+"'")

	// The defaults fail on the null partition, the reason for the SET,
	// when ClickHouse lists a dated directory first: the glob of the
	// recipe's count() lists them in the file system's order (on tmpfs
	// the null partition, made last, comes first and the guess is a
	// string), so the same count() names the busiest day first.
	dated := strings.Replace(stmts[1], "/*/*.parquet", "/{day="+busiest+",day=__HIVE_DEFAULT_PARTITION__}/*.parquet", 1)
	if dated == stmts[1] {
		t.Fatalf("the recipe's count() reads no /*/*.parquet glob: %s", stmts[1])
	}
	if _, err := chdbtest.QueryErr(t, dir, dated); err == nil || !strings.Contains(err.Error(), "__HIVE_DEFAULT_PARTITION__") {
		t.Errorf("%s with ClickHouse's default settings: error %v, want one on __HIVE_DEFAULT_PARTITION__ (if ClickHouse reads it now, simplify the recipe)", dated, err)
	}

	res := chdbtest.Query(t, dir, stmts...)
	if got := chdbtest.Int(t, res[1][0]["messages"]); got != int64(len(tb.Rows)) {
		t.Errorf("count(): %d rows, want %d", got, len(tb.Rows))
	}
	checkDay := func(what string, row map[string]any) {
		t.Helper()
		want := byDay[busiest]
		if got := chdbtest.Int(t, row["messages"]); got != want.n {
			t.Errorf("%s: day %s: %d rows, want %d", what, busiest, got, want.n)
		}
		if got := jsonFloat(t, row["cost"]); !closeTo(got, want.cost) {
			t.Errorf("%s: day %s: cost %v, want %v", what, busiest, got, want.cost)
		}
	}
	checkDay("the day's query", res[2][0])
	seen := 0
	for _, row := range res[3] {
		day, provider := "NULL", "NULL"
		if v, ok := row["utc_day"].(string); ok {
			day = v
		}
		if v, ok := row["provider"].(string); ok {
			provider = v
		}
		want := groups[[2]string{day, provider}]
		if want == nil {
			t.Errorf("GROUP BY: a group (%s, %s) the data does not have: %v", day, provider, row)
			continue
		}
		seen++
		if got := chdbtest.Int(t, row["messages"]); got != want.n {
			t.Errorf("GROUP BY: (%s, %s): %d rows, want %d", day, provider, got, want.n)
		}
		if got := jsonFloat(t, row["cost"]); !closeTo(got, want.cost) {
			t.Errorf("GROUP BY: (%s, %s): cost %v, want %v", day, provider, got, want.cost)
		}
	}
	if seen != len(groups) {
		t.Errorf("GROUP BY: %d groups, want %d", seen, len(groups))
	}

	// Every other day's file damaged: the day's query still answers. The
	// file ClickHouse reads the schema from (it names it when it is
	// damaged) is given back its bytes.
	saved := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(out, "tables", tabledef.Usage), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) == "day="+busiest {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		saved[p] = b
		return os.WriteFile(p, []byte("not parquet\n"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	schemaFile := regexp.MustCompile(`in file/uri ([^)]*\.parquet)\)`)
	for try := 0; ; try++ {
		res, err := chdbtest.QueryErr(t, dir, stmts[0], stmts[2])
		if err == nil {
			checkDay(fmt.Sprintf("the day's query with %d of the other days' %d files damaged", len(saved)-try, len(saved)), res[1][0])
			break
		}
		m := schemaFile.FindStringSubmatch(err.Error())
		if m == nil || saved[m[1]] == nil || try == 3 {
			t.Fatalf("the day's query with the other days' files damaged: %v", err)
		}
		if err := os.WriteFile(m[1], saved[m[1]], 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// group returns m[k], made first if missing.
func group[K comparable](m map[K]*usageGroup, k K) *usageGroup {
	if m[k] == nil {
		m[k] = &usageGroup{}
	}
	return m[k]
}

// jsonFloat reads a float of a chDB result: a number, a decimal string,
// or null (an empty sum) as 0.
func jsonFloat(t *testing.T, v any) float64 {
	t.Helper()
	if v == nil {
		return 0
	}
	f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	if err != nil {
		t.Fatalf("not a number: %v", v)
	}
	return f
}

// closeTo compares sums of the same floats added in another order.
func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
