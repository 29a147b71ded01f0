package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/chartcheck"
)

// reportJSON is the shape of report --format json.
type reportJSON struct {
	By    []string         `json:"by"`
	Rows  []map[string]any `json:"rows"`
	Total gen.UsageSum     `json:"total"`
}

// reportGroups turns report --format json rows keyed by key into usage sums.
func reportGroups(t *testing.T, out, key string) (map[string]gen.UsageSum, gen.UsageSum) {
	t.Helper()
	r := convbatch(t, nil, "report", "--by", key, "--format", "json", out)
	if r.code != 0 {
		t.Fatalf("report --by %s: exit %d: %s", key, r.code, r.stderr)
	}
	var rep reportJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report --by %s: %v\n%s", key, err, r.stdout)
	}
	got := map[string]gen.UsageSum{}
	prevCost := math.Inf(1)
	for _, row := range rep.Rows {
		name, ok := row[key].(string)
		if !ok {
			t.Fatalf("row without %s: %v", key, row)
		}
		if _, dup := got[name]; dup {
			t.Fatalf("two rows for %s %q", key, name)
		}
		s := gen.UsageSum{Messages: int64(row["messages"].(float64)), TokensInput: int64(row["tokens_input"].(float64)),
			TokensOutput: int64(row["tokens_output"].(float64)), Cost: row["cost"].(float64)}
		if s.Cost > prevCost {
			t.Fatalf("rows not sorted by cost descending: %v", rep.Rows)
		}
		prevCost = s.Cost
		got[name] = s
	}
	return got, rep.Total
}

func closeCost(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) < 1e-12
}

func checkGroups(t *testing.T, what string, got map[string]gen.UsageSum, want map[string]gen.UsageSum, total gen.UsageSum) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: gen expects no usage at all", what)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d groups, want %d", what, len(got), len(want))
	}
	var sum gen.UsageSum
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: no row for %q", what, name)
			continue
		}
		if g.Messages != w.Messages || g.TokensInput != w.TokensInput || g.TokensOutput != w.TokensOutput || !closeCost(g.Cost, w.Cost) {
			t.Errorf("%s %q: %+v, want %+v", what, name, g, w)
		}
		sum.Messages += w.Messages
		sum.TokensInput += w.TokensInput
		sum.TokensOutput += w.TokensOutput
		sum.Cost += w.Cost
	}
	if total.Messages != sum.Messages || total.TokensInput != sum.TokensInput || total.TokensOutput != sum.TokensOutput || !closeCost(total.Cost, sum.Cost) {
		t.Errorf("%s: total %+v, want %+v", what, total, sum)
	}
}

// TestReportMatchesExpect: report's sums by provider and by agent equal
// what gen says the archive holds, on a clean archive and on one with
// rejected lines (which carry no usage rows).
func TestReportMatchesExpect(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"clean.jsonl.zst", []string{"--conversations", "300", "--seed", "61"}},
		{"faulty.jsonl", []string{"--conversations", "300", "--seed", "62", "--faults", "0.2", "--max-doc-bytes", "256KiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, tc.name)
			exp := genArchive(t, in, tc.args...)
			out := filepath.Join(dir, "out-"+tc.name)
			r := convbatch(t, nil, "run", "-o", out, "--archive", "none", "--max-doc-bytes", strconv.FormatInt(exp.MaxDocBytes, 10), in)
			if r.code != 0 && r.code != 1 {
				t.Fatalf("run: exit %d: %s", r.code, r.stderr)
			}
			got, total := reportGroups(t, out, "provider")
			checkGroups(t, "by provider", got, exp.Usage.ByProvider, total)

			wantAgents := map[string]gen.UsageSum{}
			for name, s := range exp.Usage.ByAgent {
				if name == "" {
					name = "(none)" // a null agent_id
				}
				wantAgents[name] = s
			}
			got, total = reportGroups(t, out, "agent")
			checkGroups(t, "by agent", got, wantAgents, total)
		})
	}
}

// TestReportFormats: csv parses with its header, the table is aligned, the
// defaults are --by provider --format table, and several keys group
// together.
func TestReportFormats(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "day.jsonl.zst")
	exp := genArchive(t, in, "--conversations", "120", "--seed", "63")
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, "--tables", "usage", in); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}

	r := convbatch(t, nil, "report", "--by", "provider", "--format", "csv", out)
	if r.code != 0 {
		t.Fatalf("csv: exit %d: %s", r.code, r.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v", err)
	}
	if strings.Join(recs[0], ",") != "provider,messages,tokens_input,tokens_output,cost" {
		t.Fatalf("csv header %v", recs[0])
	}
	if len(recs)-1 != len(exp.Usage.ByProvider) {
		t.Fatalf("csv has %d records, want %d", len(recs)-1, len(exp.Usage.ByProvider))
	}
	for _, rec := range recs[1:] {
		w := exp.Usage.ByProvider[rec[0]]
		cost, err := strconv.ParseFloat(rec[4], 64)
		if err != nil || rec[1] != strconv.FormatInt(w.Messages, 10) || rec[2] != strconv.FormatInt(w.TokensInput, 10) ||
			rec[3] != strconv.FormatInt(w.TokensOutput, 10) || !closeCost(cost, w.Cost) {
			t.Errorf("csv record %v, want %+v", rec, w)
		}
	}

	table := convbatch(t, nil, "report", out)
	if table.code != 0 {
		t.Fatalf("table: exit %d: %s", table.code, table.stderr)
	}
	if explicit := convbatch(t, nil, "report", "--by", "provider", "--format", "table", out); explicit.stdout != table.stdout {
		t.Fatalf("defaults differ from --by provider --format table:\n%s\n%s", table.stdout, explicit.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(table.stdout, "\n"), "\n")
	if len(lines) != len(exp.Usage.ByProvider)+3 {
		t.Fatalf("table has %d lines, want header, %d groups, rule and total:\n%s", len(lines), len(exp.Usage.ByProvider), table.stdout)
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "provider messages tokens_input tokens_output cost" {
		t.Fatalf("table header %q", lines[0])
	}
	// Numbers are right-aligned: every column ends where its header ends.
	ends := map[string]int{}
	for _, name := range []string{"messages", "tokens_input", "tokens_output", "cost"} {
		ends[name] = strings.Index(lines[0], name) + len(name)
	}
	for i, l := range lines {
		if i == len(lines)-2 {
			if strings.Trim(l, "-") != "" || len(l) != len(lines[0]) {
				t.Fatalf("rule line %q", l)
			}
			continue
		}
		if len(l) != len(lines[0]) {
			t.Fatalf("line %d is %d wide, header %d:\n%s", i, len(l), len(lines[0]), table.stdout)
		}
		if i == 0 {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 5 {
			t.Fatalf("line %q: %d fields", l, len(f))
		}
		fieldEnds := fieldEnds(l)
		for j, name := range []string{"messages", "tokens_input", "tokens_output", "cost"} {
			if end := fieldEnds[j+1]; end != ends[name] {
				t.Fatalf("line %q: %s ends at %d, header at %d", l, name, end, ends[name])
			}
		}
		// Exact costs, padded to one number of decimals so the points line up.
		if dot := strings.IndexByte(f[4], '.'); dot < 0 || len(f[4])-dot-1 < 2 || len(f[4])-dot != len(strings.Fields(lines[1])[4])-strings.IndexByte(strings.Fields(lines[1])[4], '.') {
			t.Fatalf("cost %q not aligned on its point with %q", f[4], lines[1])
		}
		if i == len(lines)-1 {
			if f[0] != "total" {
				t.Fatalf("last line %q is not the total", l)
			}
			var msgs int64
			for _, s := range exp.Usage.ByProvider {
				msgs += s.Messages
			}
			if f[1] != strconv.FormatInt(msgs, 10) {
				t.Fatalf("total messages %s, want %d", f[1], msgs)
			}
		} else if _, ok := exp.Usage.ByProvider[f[0]]; !ok {
			t.Fatalf("line %q: unknown provider", l)
		}
	}

	// Several keys: the groups split the same totals.
	var rep reportJSON
	r = convbatch(t, nil, "report", "--by", "provider,day,role,conversation", "--format", "json", out)
	if r.code != 0 {
		t.Fatalf("json: exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.By, ",") != "provider,day,role,conversation" {
		t.Fatalf("by %v", rep.By)
	}
	byProv := map[string]int64{}
	last := ""
	for _, row := range rep.Rows {
		day := row["day"].(string)
		if day != "unknown" && (len(day) != 10 || day[4] != '-' || day[7] != '-') {
			t.Fatalf("day %q", day)
		}
		// With day among the keys the rows are a time series: oldest first,
		// unknown last.
		if day < last && last != "unknown" || last == "unknown" && day != "unknown" {
			t.Fatalf("day %s after %s: rows are not by day", day, last)
		}
		last = day
		byProv[row["provider"].(string)] += int64(row["messages"].(float64))
	}
	var provs []string
	for p, n := range byProv {
		if exp.Usage.ByProvider[p].Messages != n {
			t.Errorf("provider %q: %d messages over the groups, want %d", p, n, exp.Usage.ByProvider[p].Messages)
		}
		provs = append(provs, p)
	}
	sort.Strings(provs)
	if len(provs) != len(exp.Usage.ByProvider) {
		t.Errorf("providers %v", provs)
	}
}

// TestReportErrors: usage errors exit 2, a damaged part exits 3.
func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl")
	writeFile(t, in, `{"id":"a","extensions":["usage-metadata"],"messages":[{"role":"assistant","content":"hi","provider":"p","cost":0.5,"tokens":{"input":3,"output":1}}]}`+"\n")
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, in); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	noTables := filepath.Join(dir, "no-tables")
	if r := convbatch(t, nil, "run", "-o", noTables, "--tables", "none", in); r.code != 0 {
		t.Fatalf("run --tables none: exit %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"report"},
		{"report", out, out},
		{"report", "--by", "model", out},
		{"report", "--by", "provider,nosuch", out},
		{"report", "--by", "", out},
		{"report", "--format", "xml", out},
		{"report", "--no-such-flag", out},
		{"report", noTables},
		{"report", filepath.Join(dir, "missing")},
		{"report", in},
	} {
		r := convbatch(t, nil, args...)
		if r.code != 2 {
			t.Errorf("convbatch %v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
		if r.stdout != "" {
			t.Errorf("convbatch %v wrote to stdout: %q", args, r.stdout)
		}
	}
	if r := convbatch(t, nil, "report", "--by", "model", out); !strings.Contains(r.stderr, "provider, agent, day, role, conversation") {
		t.Errorf("unknown key error does not list the keys: %q", r.stderr)
	}
	if r := convbatch(t, nil, "help", "report"); r.code != 0 || !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "--by") {
		t.Errorf("help report: exit %d: %q", r.code, r.stdout)
	}
	if r := convbatch(t, nil, "report", "--format", "json", out); r.code != 0 || !strings.Contains(r.stdout, `"provider": "p"`) {
		t.Fatalf("report: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	// The one message has no created_at: no chart over time, a line
	// saying so and its cost, and the two other charts.
	if r := convbatch(t, nil, "report", "--format", "html", out); r.code != 0 || !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || strings.Count(r.stdout, "<svg ") != 2 ||
		!strings.Contains(r.stdout, "Not on the chart: 1 message with no created_at, costing 0.5 (100.0 % of the total)") {
		t.Fatalf("report --format html: exit %d: %.300s %s", r.code, r.stdout, r.stderr)
	}

	parts, _ := filepath.Glob(filepath.Join(out, "tables", "usage", "*.parquet"))
	if len(parts) == 0 {
		t.Fatal("no usage part")
	}
	b, _ := os.ReadFile(parts[0])
	writeFile(t, parts[0], string(b[:len(b)/2]))
	if r := convbatch(t, nil, "report", out); r.code != 3 {
		t.Errorf("damaged part: exit %d, want 3 (%s)", r.code, r.stderr)
	}
	writeFile(t, parts[0], "PAR1 not really")
	if r := convbatch(t, nil, "report", out); r.code != 3 {
		t.Errorf("not Parquet: exit %d, want 3 (%s)", r.code, r.stderr)
	}
}

// fieldEnds returns the byte offset just past each space-separated field of
// line.
func fieldEnds(line string) []int {
	var ends []int
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' && (i+1 == len(line) || line[i+1] == ' ') {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// TestReportExactCost: costs whose float64 sum shows noise
// (163.73727599999998) are summed as the archive's decimals.
func TestReportExactCost(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.jsonl")
	var msgs []string
	for _, c := range []string{"33.427282", "87.103891", "6.959626", "21.052229", "15.194248"} {
		msgs = append(msgs, `{"role":"assistant","content":"hi","provider":"p","cost":`+c+`}`)
	}
	writeFile(t, in, `{"id":"a","extensions":["usage-metadata"],"messages":[`+strings.Join(msgs, ",")+`]}`+"\n")
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, in); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	if r := convbatch(t, nil, "report", "--format", "csv", out); r.code != 0 || r.stdout != "provider,messages,tokens_input,tokens_output,cost\np,5,0,0,163.737276\n" {
		t.Errorf("csv: exit %d: %q %s", r.code, r.stdout, r.stderr)
	}
	if r := convbatch(t, nil, "report", "--format", "json", out); r.code != 0 || strings.Count(r.stdout, `"cost": 163.737276`+"\n") != 2 {
		t.Errorf("json: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestReportByConversation: the same conversation in two inputs makes one
// row per document, each with its id, source_file and source_line, not one
// row of doubled sums.
func TestReportByConversation(t *testing.T) {
	dir := t.TempDir()
	doc := `{"id":"same","extensions":["usage-metadata"],"messages":[{"role":"assistant","content":"hi","provider":"p","cost":0.1,"tokens":{"input":3,"output":1}},{"role":"assistant","content":"ho","provider":"p","cost":0.2,"tokens":{"input":4,"output":2}}]}` + "\n"
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeFile(t, a, doc)
	writeFile(t, b, doc)
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, a, b); r.code != 0 && r.code != 1 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	r := convbatch(t, nil, "report", "--by", "conversation", "--format", "csv", out)
	want := "conversation,source_file,source_line,messages,tokens_input,tokens_output,cost\n" +
		"same," + a + ",1,2,7,3,0.3\n" +
		"same," + b + ",1,2,7,3,0.3\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("report --by conversation: exit %d:\n%s\nwant\n%s%s", r.code, r.stdout, want, r.stderr)
	}
	var rep reportJSON
	r = convbatch(t, nil, "report", "--by", "conversation", "--format", "json", out)
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0]["conversation"] != "same" || rep.Rows[0]["source_line"] != 1.0 || rep.Rows[1]["source_file"] != b || rep.Total.Messages != 4 {
		t.Errorf("json: %s", r.stdout)
	}
	if r := convbatch(t, nil, "help", "report"); !strings.Contains(r.stdout, "(source_file, source_line)") {
		t.Errorf("help report does not say what --by conversation groups by:\n%s", r.stdout)
	}
}

// TestReportHTMLInChromium: report --format html on a run of the bundled
// sample (both in process) is one page that fetches nothing, and a real
// browser draws its three SVG charts: the DOM holds them with their paths,
// the screenshot shows the charts' colors on a page that is not blank,
// and, measured in the browser with the page's font and with a wider
// fallback, no label leaves its chart or lies under a bar or another
// label and no bar is under 2 px (chartcheck; costreport's
// TestWriteHTMLInChromium does the same on an archive of 1,000 days).
// CONVBATCH_KEEP_SCREENSHOT=FILE keeps the screenshot for a look.
func TestReportHTMLInChromium(t *testing.T) {
	t.Parallel() // heavy and independent: overlaps the other heavy tests (issue 45 item 14)
	bin := chartcheck.Chromium(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "-o", out, "--archive", "none", "--progress", "never", filepath.Join("..", "testdata", "sample.jsonl.zst")}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	if code := Main([]string{"report", "--format", "html", out}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("report --format html: exit %d: %s", code, stderr.String())
	}
	page := stdout.String()
	// Nothing to fetch: no URL at all, no attribute or CSS that loads one.
	if m := regexp.MustCompile(`(?i)https?:|\b(src|href|srcset|action|poster|data)\s*=|url\(|@import|<(script|link|iframe|object|embed|img)\b`).FindString(page); m != "" {
		t.Errorf("the page may fetch something: %q", m)
	}
	file := filepath.Join(dir, "cost.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + file

	dom := string(chartcheck.Run(t, bin, url, "--dump-dom"))
	svgs := regexp.MustCompile(`(?s)<svg\b.*?</svg>`).FindAllString(dom, -1)
	if len(svgs) != 3 {
		t.Fatalf("the browser's DOM holds %d svg charts, want 3", len(svgs))
	}
	for i, svg := range svgs {
		if n := strings.Count(svg, "<path "); n < 10 {
			t.Errorf("chart %d has %d paths", i, n)
		}
		if !strings.Contains(svg, "<text ") {
			t.Errorf("chart %d has no text", i)
		}
	}
	for _, h := range []string{"Cost over time", "Top 10 agents by cost", "Tokens by provider", "Cost by provider"} {
		if !strings.Contains(dom, h) {
			t.Errorf("DOM lacks %q", h)
		}
	}
	for _, l := range chartcheck.Measure(t, bin, []byte(page), chartcheck.Options{Fonts: []string{"DejaVu Sans"}}) {
		if len(l.Charts) != 3 {
			t.Errorf("font %q: %d charts measured, want 3", l.Font, len(l.Charts))
		}
		for _, p := range chartcheck.Check(l.Charts) {
			t.Errorf("font %q: %s", l.Font, p)
		}
	}

	shot := filepath.Join(dir, "cost.png")
	chartcheck.Run(t, bin, url, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1280x2000", b)
	}
	// The charts' fills: the first two colors of the palette (providers,
	// agents, input and output tokens) cover whole bars, and the page is
	// mostly white with dark text.
	blue, orange, white, dark := 0, 0, 0, 0
	near := func(c color.Color, r, g, b uint8) bool {
		cr, cg, cb, _ := c.RGBA()
		d := func(x uint32, y uint8) bool { return math.Abs(float64(x>>8)-float64(y)) <= 3 }
		return d(cr, r) && d(cg, g) && d(cb, b)
	}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := img.At(x, y)
			switch {
			case near(c, 0x4e, 0x79, 0xa7):
				blue++
			case near(c, 0xf2, 0x8e, 0x2b):
				orange++
			case near(c, 0xff, 0xff, 0xff):
				white++
			case near(c, 0x22, 0x22, 0x22) || near(c, 0, 0, 0):
				dark++
			}
		}
	}
	total := bounds.Dx() * bounds.Dy()
	t.Logf("screenshot: %d blue, %d orange, %d white, %d dark pixels of %d", blue, orange, white, dark, total)
	if blue < 5000 || orange < 1000 || white < total/2 || dark < 2000 {
		t.Errorf("screenshot does not look like the charts: %d blue, %d orange, %d white, %d dark pixels of %d", blue, orange, white, dark, total)
	}
	if keep := os.Getenv("CONVBATCH_KEEP_SCREENSHOT"); keep != "" {
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// TestReportSinceUntilTop (issue 45 item 10): on an archive whose dates
// spread over years, --since and --until keep exactly the days from one to
// the other, both included, and their sums (no undated row); --top N keeps
// the N costliest groups of the full report and sums the rest in
// "omitted"; bad values are usage errors.
func TestReportSinceUntilTop(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "spread.jsonl.zst")
	genArchive(t, in, "--conversations", "400", "--seed", "64", "--dates", "spread")
	out := filepath.Join(dir, "out")
	if r := convbatch(t, nil, "run", "-o", out, "--tables", "usage", in); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	type reportOut struct {
		Rows    []map[string]any `json:"rows"`
		Since   string           `json:"since"`
		Until   string           `json:"until"`
		Omitted *struct {
			Groups   int     `json:"groups"`
			Messages float64 `json:"messages"`
		} `json:"omitted"`
		Total struct {
			Messages float64 `json:"messages"`
		} `json:"total"`
	}
	report := func(args ...string) reportOut {
		t.Helper()
		r := convbatch(t, nil, append(append([]string{"report", "--format", "json"}, args...), out)...)
		if r.code != 0 {
			t.Fatalf("report %v: exit %d: %s", args, r.code, r.stderr)
		}
		var rep reportOut
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	all := report("--by", "day")
	var dated []map[string]any
	for _, row := range all.Rows {
		if row["day"] != "unknown" {
			dated = append(dated, row)
		}
	}
	if len(dated) < 30 || len(dated) == len(all.Rows) {
		t.Fatalf("%d dated days of %d rows: want many days and some undated rows", len(dated), len(all.Rows))
	}
	since, until := dated[len(dated)/3]["day"].(string), dated[2*len(dated)/3]["day"].(string)
	var want []string
	var messages float64
	for _, row := range dated[len(dated)/3 : 2*len(dated)/3+1] {
		want = append(want, row["day"].(string))
		messages += row["messages"].(float64)
	}
	for _, args := range [][]string{
		{"--by", "day", "--since", since, "--until", until},
		{"--by", "day,provider", "--since", since, "--until", until},
	} {
		got := report(args...)
		var days []string
		var sum float64
		for _, row := range got.Rows {
			if d := row["day"].(string); len(days) == 0 || days[len(days)-1] != d {
				days = append(days, d)
			}
			sum += row["messages"].(float64)
		}
		if strings.Join(days, ",") != strings.Join(want, ",") || sum != messages || got.Total.Messages != messages || got.Since != since || got.Until != until {
			t.Errorf("report %v: days %v (%v messages, total %v, range %s..%s), want %v (%v messages)", args, days, sum, got.Total.Messages, got.Since, got.Until, want, messages)
		}
	}
	// One end only: from the last dated day on.
	if got := report("--by", "day", "--since", dated[len(dated)-1]["day"].(string)); len(got.Rows) != 1 || got.Rows[0]["day"] != dated[len(dated)-1]["day"] {
		t.Errorf("--since the last day: rows %v", got.Rows)
	}

	agents := report("--by", "agent")
	top := report("--by", "agent", "--top", "3")
	if len(agents.Rows) <= 3 || len(top.Rows) != 3 || top.Omitted == nil || top.Omitted.Groups != len(agents.Rows)-3 || top.Total != agents.Total {
		t.Fatalf("--top 3: %d rows, omitted %+v, total %v; of %d rows, total %v", len(top.Rows), top.Omitted, top.Total, len(agents.Rows), agents.Total)
	}
	kept := top.Omitted.Messages
	for i, row := range top.Rows {
		if row["agent"] != agents.Rows[i]["agent"] {
			t.Errorf("--top 3: row %d is %v, want %v", i, row["agent"], agents.Rows[i]["agent"])
		}
		kept += row["messages"].(float64)
	}
	if kept != agents.Total.Messages {
		t.Errorf("--top 3: kept and omitted messages %v, want the total %v", kept, agents.Total.Messages)
	}

	for _, args := range [][]string{
		{"--since", "2026-13-01"},
		{"--until", "yesterday"},
		{"--since", "2026-03-02", "--until", "2026-03-01"},
		{"--top", "-1"},
	} {
		r := convbatch(t, nil, append(append([]string{"report"}, args...), out)...)
		if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, args[0]) {
			t.Errorf("report %v: exit %d, stderr %q; want 2 naming %s", args, r.code, r.stderr, args[0])
		}
	}
}
