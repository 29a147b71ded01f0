package costreport

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart limits of the HTML page.
const (
	// TopAgents is the number of agents the top-agents chart shows.
	TopAgents = 10
	// ChartProviders is the number of providers the charts name; the
	// others are summed as OtherLabel.
	ChartProviders = 9
	// OtherLabel names the providers past ChartProviders in the charts.
	OtherLabel = "(others)"
)

// palette is the Tableau 10 palette: distinct hues readable on white. The
// last one (grey) is for OtherLabel.
var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff},
	{0x76, 0xb7, 0xb2, 0xff}, {0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff},
	{0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff}, {0x9c, 0x75, 0x5f, 0xff},
	{0xba, 0xb0, 0xac, 0xff},
}

// sans is the plots' typeface: Liberation Sans, which ships with the
// plotting library and has Arial's metrics, so a browser without it lays
// out the text the same with Arial or Helvetica.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// chartWidth is the width of every chart, in points (960 CSS pixels).
const chartWidth vg.Length = 720

// WriteHTML writes the report as one self-contained HTML page: no script,
// no stylesheet, font or image fetched from anywhere; the charts are
// inline SVG drawn with gonum.org/v1/plot. With an Overview (WithOverview)
// the page shows the totals, three charts and their tables, then the
// report's own grouping when it is not one of them: the cost over time
// stacked by provider, on a time axis with one bar per UTC day, week,
// month, quarter or year (the finest that leaves each bar 6 CSS pixels
// of room), the cost of rows without a created_at in a line apart, and
// so the days far from the others (outliers, see outlierDays: a single
// 1970 date does not squeeze years of usage to the right edge); the
// TopAgents agents by cost; input and output tokens by provider. Names
// are written above their bars, left-aligned, so a browser font wider
// than Liberation Sans cannot push them out of the chart or under a bar.
// Without an Overview the page holds the totals and the report's table.
// Costs in the tables are exact (see Row.Cost); the charts draw them as
// doubles. The tables scroll in a box on screen and print whole (a print
// style sheet drops the boxes). The page is the same bytes for the same
// table.
func (r *Report) WriteHTML(w io.Writer) error {
	page := htmlPage{
		Cost:         r.Total.Cost.Text(2),
		Messages:     group3(r.Total.Messages),
		TokensInput:  group3(r.Total.TokensInput),
		TokensOutput: group3(r.Total.TokensOutput),
		Parts:        r.Parts,
	}
	if r.Dated {
		since, until := r.Since, r.Until
		if since == "" {
			since = "the first date"
		}
		if until == "" {
			until = "the last"
		}
		page.Range = fmt.Sprintf("Only messages whose created_at falls on a UTC day from %s to %s, both included; messages without one are left out.", since, until)
	}
	if ov := r.Overview; ov != nil {
		if len(ov.ByProvider.Rows) > 0 {
			for _, draw := range []func(*Overview) (htmlChart, error){timeChart, agentChart, tokenChart} {
				c, err := draw(ov)
				if err != nil {
					return fmt.Errorf("html: %s chart: %w", strings.ToLower(c.Title), err)
				}
				page.Charts = append(page.Charts, c)
			}
		}
		page.Tables = append(page.Tables,
			tableOf("Cost by provider", ov.ByProvider),
			tableOf("Cost by agent", ov.ByAgent),
			tableOf("Cost by day and provider", ov.ByDayProvider))
	}
	if r.Overview == nil || r.OmittedGroups > 0 || !slices.ContainsFunc(OverviewKeys, func(keys []Key) bool { return slices.Equal(keys, r.Keys) }) {
		page.Tables = append(page.Tables, tableOf("Cost by "+strings.Join(r.Fields(), ", "), r))
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// htmlPage is what pageTemplate shows.
type htmlPage struct {
	Cost, Messages, TokensInput, TokensOutput string
	// Range says the date range of the report, "" for none.
	Range  string
	Parts  int
	Charts []htmlChart
	Tables []htmlTable
}

// htmlChart is one chart of the page: its SVG ("" for none), what it
// shows, and notes on what it leaves out: undated rows (Note) and outlier
// days (Outliers).
type htmlChart struct {
	Title, Caption, Note, Outliers string
	// Bars is the direction of the chart's bars, vertical or horizontal,
	// written as the figure's data-bars attribute for the browser test.
	Bars string
	SVG  template.HTML
}

type htmlTable struct {
	Title   string
	Header  []htmlCell
	Rows    [][]htmlCell
	Total   []htmlCell
	NumRows int
	Order   string
	// Omitted is the row of the groups Report.Top left out, nil for none.
	Omitted []htmlCell
}

type htmlCell struct {
	Text    string
	Numeric bool
}

// tableOf lays out a report as an HTML table: key fields, then the metrics,
// costs padded to one number of decimals.
func tableOf(title string, r *Report) htmlTable {
	fields := r.Fields()
	t := htmlTable{Title: title, NumRows: len(r.Rows), Order: "by cost, highest first"}
	if slices.Contains(r.Keys, Day) {
		t.Order = "by day, oldest first (unknown last), then by cost"
	}
	for _, f := range fields {
		t.Header = append(t.Header, htmlCell{Text: f, Numeric: numericField(f)})
	}
	for _, m := range metricNames {
		t.Header = append(t.Header, htmlCell{Text: m, Numeric: true})
	}
	decimals := max(2, r.Total.Cost.Decimals())
	for i := range r.Rows {
		decimals = max(decimals, r.Rows[i].Cost.Decimals())
	}
	line := func(values []string, row *Row) []htmlCell {
		var out []htmlCell
		for j, v := range values {
			out = append(out, htmlCell{Text: printable(v), Numeric: numericField(fields[j])})
		}
		return append(out, htmlCell{group3(row.Messages), true}, htmlCell{group3(row.TokensInput), true},
			htmlCell{group3(row.TokensOutput), true}, htmlCell{row.Cost.Text(decimals), true})
	}
	for i := range r.Rows {
		t.Rows = append(t.Rows, line(r.Rows[i].Values, &r.Rows[i]))
	}
	if r.OmittedGroups > 0 {
		keys := make([]string, len(fields))
		keys[0] = omittedLabel(r.OmittedGroups)
		t.Omitted = line(keys, &r.Omitted)
		t.Order = fmt.Sprintf("the %d of highest cost of %d, %s", len(r.Rows), len(r.Rows)+r.OmittedGroups, t.Order)
	}
	totalKeys := make([]string, len(fields))
	totalKeys[0] = TotalLabel
	t.Total = line(totalKeys, &r.Total)
	return t
}

// group3 writes n with thin spaces between groups of three digits.
func group3(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(c)
	}
	return b.String()
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>convbatch cost report</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; color: #222; margin: 0 auto; padding: 24px; max-width: 1000px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; }
.note { color: #555; font-size: 14px; margin: 0 0 16px; }
.totals { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.totals div { border: 1px solid #ddd; border-radius: 6px; padding: 10px 16px; min-width: 150px; }
.totals b { display: block; font-size: 22px; font-variant-numeric: tabular-nums; }
.totals span { color: #555; font-size: 13px; }
figure { margin: 0; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 13px; margin-top: 4px; }
.apart { font-size: 14px; margin: 6px 0 0; padding: 6px 10px; border-left: 3px solid #bab0ac; background: #f7f7f7; }
.scroll { max-height: 520px; overflow: auto; border: 1px solid #ddd; border-radius: 6px; }
table { border-collapse: collapse; font-size: 14px; width: 100%; }
th, td { padding: 4px 10px; text-align: left; white-space: nowrap; }
th { position: sticky; top: 0; background: #f3f3f3; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
tfoot td { font-weight: bold; border-top: 2px solid #999; background: #fff; position: sticky; bottom: 0; }
tr.omitted td { font-style: italic; }
@media print {
  body { max-width: none; padding: 0; }
  .scroll { max-height: none; overflow: visible; border: none; }
  th, tfoot td { position: static; }
  thead { display: table-header-group; }
  tr, figure { break-inside: avoid; }
}
</style>
</head>
<body>
<h1>convbatch cost report</h1>
<p class="note">From the usage table ({{.Parts}} Parquet part{{if ne .Parts 1}}s{{end}}). Costs are in the archive's currency and add up exactly: each is the decimal written in the archive, summed with no rounding.{{if .Range}} {{.Range}}{{end}}</p>
<div class="totals">
<div><b>{{.Cost}}</b><span>cost</span></div>
<div><b>{{.Messages}}</b><span>messages with usage</span></div>
<div><b>{{.TokensInput}}</b><span>input tokens</span></div>
<div><b>{{.TokensOutput}}</b><span>output tokens</span></div>
</div>
{{range .Charts}}<h2>{{.Title}}</h2>
<figure data-bars="{{.Bars}}">
{{.SVG}}<figcaption>{{.Caption}}</figcaption>
{{if .Note}}<p class="apart">{{.Note}}</p>
{{end}}{{if .Outliers}}<p class="apart outliers">{{.Outliers}}</p>
{{end}}</figure>
{{end}}{{range .Tables}}<h2>{{.Title}}</h2>
<p class="note">{{.NumRows}} row{{if ne .NumRows 1}}s{{end}}, {{.Order}}.</p>
<div class="scroll">
<table>
<thead><tr>{{range .Header}}<th{{if .Numeric}} class="n"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Numeric}} class="n"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}{{with .Omitted}}<tr class="omitted">{{range .}}<td{{if .Numeric}} class="n"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
<tfoot><tr>{{range .Total}}<td{{if .Numeric}} class="n"{{end}}>{{.Text}}</td>{{end}}</tr></tfoot>
</table>
</div>
{{end}}</body>
</html>
`))

// chartProviders returns the providers the charts name, by cost (the order
// of ByProvider), and the name each provider is drawn under: itself, or
// OtherLabel past the first ChartProviders.
func chartProviders(ov *Overview) ([]string, map[string]string) {
	var names []string
	as := map[string]string{}
	for i, row := range ov.ByProvider.Rows {
		p := row.Values[0]
		if i < ChartProviders || len(ov.ByProvider.Rows) == ChartProviders+1 {
			names = append(names, p)
			as[p] = p
		} else {
			as[p] = OtherLabel
		}
	}
	if len(names) < len(ov.ByProvider.Rows) {
		names = append(names, OtherLabel)
	}
	return names, as
}

// providerColor is the color of the i-th of names.
func providerColor(names []string, i int) color.Color {
	if names[i] == OtherLabel && i == len(names)-1 && i >= ChartProviders {
		return palette[len(palette)-1]
	}
	return palette[i%len(palette)]
}

// minSlot is the least room a bar of the cost-over-time chart has on its
// time axis: 4.5 points, 6 CSS pixels, so that each bar (80 % of it) is
// at least 4.8 pixels wide on a page 960 pixels wide.
const minSlot vg.Length = 4.5

// timeChart draws the cost over time, stacked by provider, on a time axis:
// one bar per day, week, month, quarter or year, the finest that gives
// each bar minSlot. Rows without a date are not drawn; the note says
// their cost.
func timeChart(ov *Overview) (htmlChart, error) {
	names, as := chartProviders(ov)
	lw := legendWidth(names)
	plotW := chartWidth - lw - 70
	ts := binCosts(ov.ByDayProvider.Rows, names, as, int(plotW/minSlot))
	chart := htmlChart{
		Title: "Cost over time",
		Bars:  "vertical",
		Note:  undatedNote(ts.undated, ov.ByDayProvider.Total),
	}
	chart.Outliers = outlierNote(ts.outliers)
	if len(ts.edges) == 0 {
		chart.Caption = "No message with usage has a created_at: there is no time to draw the cost over."
		return chart, nil
	}
	chart.Caption = fmt.Sprintf("Cost per %s of created_at, stacked by provider.", ts.period.name())
	const h = 300
	p := newPlot()
	p.Add(grid(false))
	p.Y.Min = 0
	p.Y.Label.Text = "cost"
	p.X.Label.Text = "one bar per " + ts.period.name()
	p.X.Tick.Marker = timeTicker(ts.period, plotW, p.X.Tick.Label.Width)
	p.X.Padding = 0
	bars := &periodBars{ts: &ts}
	var legend []legendEntry
	for i, name := range names {
		bars.colors = append(bars.colors, providerColor(names, i))
		legend = append(legend, legendEntry{shorten(printable(name), legendChars), swatch{bars.colors[i]}})
	}
	p.Add(bars)
	// The axis ends a little above the highest bar, so no bar touches the
	// frame; it runs from 0 to 1 when every cost is 0.
	p.Y.Max = 1
	if _, _, _, top := bars.DataRange(); top > 0 {
		p.Y.Max = top * 1.08
	}
	svg, err := render(p, legend, h)
	chart.SVG = template.HTML(svg)
	return chart, err
}

// undatedNote says what the cost chart leaves out: the rows without a
// created_at, with their share of the total cost; "" when there are none.
func undatedNote(undated, total Row) string {
	if undated.Messages == 0 {
		return ""
	}
	share := ""
	if t := total.Cost.Float64(); t > 0 {
		share = fmt.Sprintf(" (%s %% of the total)", strconv.FormatFloat(100*undated.Cost.Float64()/t, 'f', 1, 64))
	}
	what := "messages"
	if undated.Messages == 1 {
		what = "message"
	}
	return fmt.Sprintf("Not on the chart: %s %s with no created_at, costing %s%s; the table %q lists them as day %s.",
		group3(undated.Messages), what, undated.Cost.String(), share, "Cost by day and provider", UnknownDay)
}

// maxOutliersListed is the number of outlier days outlierNote names.
const maxOutliersListed = 10

// outlierNote lists the outlier days the cost chart leaves out, oldest
// first, with their messages and cost; "" when there are none.
func outlierNote(days []dayCost) string {
	if len(days) == 0 {
		return ""
	}
	var parts []string
	for _, d := range days[:min(len(days), maxOutliersListed)] {
		what := "messages"
		if d.Messages == 1 {
			what = "message"
		}
		parts = append(parts, fmt.Sprintf("%s (%s %s, cost %s)", d.day, group3(d.Messages), what, d.Cost.String()))
	}
	if len(days) > maxOutliersListed {
		parts = append(parts, fmt.Sprintf("and %d more days", len(days)-maxOutliersListed))
	}
	return fmt.Sprintf("Not on the chart, far from the other dates (more than %d × their interquartile range, at least %d days, outside their quartiles): %s; the table %q lists them.",
		outlierK, outlierMinIQR, strings.Join(parts, ", "), "Cost by day and provider")
}

// agentChart draws the TopAgents agents by cost, horizontal bars with the
// exact cost at their end, the first at the top.
func agentChart(ov *Overview) (htmlChart, error) {
	rows := ov.ByAgent.Rows[:min(TopAgents, len(ov.ByAgent.Rows))]
	var names, labels []string
	var values []float64
	for _, row := range rows {
		names = append(names, shorten(printable(row.Values[0]), 40))
		values = append(values, row.Cost.Float64())
		labels = append(labels, row.Cost.String())
	}
	p := newPlot()
	p.X.Label.Text = "cost"
	svg, err := rowChart(p, names, []rowSeries{{values: values, labels: labels, color: palette[0]}}, nil)
	return htmlChart{
		Title:   fmt.Sprintf("Top %d agents by cost", TopAgents),
		Caption: "The agents (agent_id) with the highest cost; (none) is a null agent_id.",
		Bars:    "horizontal",
		SVG:     template.HTML(svg),
	}, err
}

// tokenChart draws the input and output tokens of each provider the charts
// name, a pair of horizontal bars each.
func tokenChart(ov *Overview) (htmlChart, error) {
	names, as := chartProviders(ov)
	in := make([]float64, len(names))
	out := make([]float64, len(names))
	for _, row := range ov.ByProvider.Rows {
		i := slices.Index(names, as[row.Values[0]])
		in[i] += float64(row.TokensInput)
		out[i] += float64(row.TokensOutput)
	}
	labelsOf := func(vs []float64) []string {
		var out []string
		for _, v := range vs {
			out = append(out, roughly(v))
		}
		return out
	}
	shown := make([]string, len(names))
	for i, n := range names {
		shown[i] = shorten(printable(n), 40)
	}
	p := newPlot()
	p.X.Label.Text = "tokens"
	series := []rowSeries{
		{name: "input", values: in, labels: labelsOf(in), color: palette[0]},
		{name: "output", values: out, labels: labelsOf(out), color: palette[1]},
	}
	svg, err := rowChart(p, shown, series, []string{"input", "output"})
	return htmlChart{
		Title:   "Tokens by provider",
		Caption: "Sum of tokens_input and tokens_output per provider.",
		Bars:    "horizontal",
		SVG:     template.HTML(svg),
	}, err
}

// rowSeries is one bar of each row of a rowChart.
type rowSeries struct {
	name   string
	values []float64
	labels []string // the value written at the end of each bar
	color  color.Color
}

// Geometry of a rowChart, in points.
const (
	rowBar  vg.Length = 11 // the thickness of a bar
	rowName vg.Length = 16 // the room of a row's name, above its bars
	rowGap  vg.Length = 9  // between a row's bars and the next row's name
)

// rowChart draws one row per name, the first at the top: the name above,
// left-aligned at the value axis' 0, and below it a horizontal bar of each
// series with its label at its end. A name starts at a fixed point and
// runs to the right over empty room, so a browser font wider than the
// chart font lengthens it but cannot push it out of the chart or under a
// bar. With legend names, the series are named in a legend on the right.
func rowChart(p *plot.Plot, names []string, series []rowSeries, legendNames []string) (string, error) {
	n := len(names)
	pitch := rowName + rowBar*vg.Length(len(series)) + rowGap
	h := 50 + pitch*vg.Length(n)
	p.Add(grid(true))
	p.HideY()
	var xmax float64
	nameXYs := make(plotter.XYs, n)
	var legend []legendEntry
	for k, sr := range series {
		values := make(plotter.Values, n)
		xys := make(plotter.XYs, n)
		labels := make([]string, n)
		for i := range names {
			j := n - 1 - i // the first row at the top
			values[j] = sr.values[i]
			labels[j] = sr.labels[i]
			xys[j] = plotter.XY{X: max(sr.values[i], 0), Y: float64(j)}
			nameXYs[j] = plotter.XY{X: 0, Y: float64(j)}
			xmax = max(xmax, sr.values[i])
		}
		bars, err := plotter.NewBarChart(values, rowBar)
		if err != nil {
			return "", err
		}
		bars.Horizontal = true
		bars.Color = sr.color
		bars.LineStyle.Width = 0
		// A row's center is between its name and its bars; the bars
		// hang below it, the first series on top.
		bars.Offset = pitch/2 - rowName - rowBar*(vg.Length(k)+0.5)
		p.Add(bars)
		lbl, err := textLabels(xys, labels, 9.5, draw.YCenter)
		if err != nil {
			return "", err
		}
		lbl.Offset = vg.Point{X: 4, Y: bars.Offset}
		p.Add(lbl)
		if legendNames != nil {
			legend = append(legend, legendEntry{legendNames[k], bars})
		}
	}
	names2 := make([]string, n)
	for i, name := range names {
		names2[n-1-i] = name
	}
	nameLabels, err := textLabels(nameXYs, names2, 10, draw.YBottom)
	if err != nil {
		return "", err
	}
	nameLabels.Offset = vg.Point{Y: pitch/2 - rowName + 3}
	p.Add(nameLabels)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.Y.Padding = 0
	p.X.Min, p.X.Max = 0, 1 // from 0 to 1 when every value is 0
	if xmax > 0 {
		p.X.Max = xmax * 1.25 // room for the labels at the bars' ends
	}
	return render(p, legend, h)
}

// newPlot returns a plot in the page's style: Liberation Sans, grey axes,
// readable tick labels.
func newPlot() *plot.Plot {
	p := plot.New()
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 11)
		ax.Tick.Label.Font = font.From(sans, 9.5)
		ax.Tick.Marker = plot.TickerFunc(readableTicks)
		ax.Color = color.Gray{0x88}
		ax.Tick.Color = color.Gray{0x88}
	}
	return p
}

// grid returns light grid lines across the value axis.
func grid(vertical bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = nil, nil
	line := &g.Horizontal
	if vertical {
		line = &g.Vertical
	}
	line.Color = color.Gray{0xdd}
	line.Width = vg.Points(0.5)
	return g
}

// readableTicks are the default ticks with labels such as 250k, 1.5M or
// 0.3 (never an exponent or float noise).
func readableTicks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = readable(ticks[i].Value)
		}
	}
	return ticks
}

func readable(v float64) string {
	suffix := ""
	for _, u := range []struct {
		div float64
		s   string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			v /= u.div
			suffix = u.s
			break
		}
	}
	// Round away the noise of the tick arithmetic (0.30000000000000004).
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64) + suffix
}

// roughly writes v to three significant digits, as readable does (48.2M).
func roughly(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return readable(r)
}

// shorten cuts s to at most n characters, ending in an ellipsis when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// legendChars is the longest name a legend shows, in characters.
const legendChars = 24

// legendEntry is one line of a chart's legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

var legendStyle = func() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, 10)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 10
	l.Padding = 2
	return l
}()

// legendWidth is the width of a legend of names, 0 for none.
func legendWidth(names []string) vg.Length {
	if len(names) == 0 {
		return 0
	}
	var w vg.Length
	for _, n := range names {
		w = max(w, legendStyle.TextStyle.Width(" "+shorten(printable(n), legendChars)))
	}
	// A fifth more than the chart font needs, for a browser drawing the
	// names in a wider fallback font.
	return w*1.2 + legendStyle.ThumbnailWidth + 16
}

// render draws p, and its legend to the right of it, as an SVG element to
// inline in HTML.
func render(p *plot.Plot, legend []legendEntry, h vg.Length) (string, error) {
	c := vgsvg.New(chartWidth, h)
	dc := draw.New(c)
	var names []string
	for _, e := range legend {
		names = append(names, e.name)
	}
	lw := legendWidth(names)
	// A margin all round the plot, for labels at its ends drawn wider
	// by a browser than the chart font measures them.
	const margin = 8
	p.Draw(draw.Crop(dc, margin, -max(lw, margin), 0, 0))
	if len(legend) > 0 {
		l := legendStyle
		for _, e := range legend {
			l.Add(e.name, e.thumb)
		}
		l.Draw(draw.Crop(dc, chartWidth-lw+8, -8, 0, -10))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	return inlineSVG(buf.String()), nil
}

var (
	xmlPreamble = regexp.MustCompile(`(?s)\A.*?(<svg\s)`)
	xmlns       = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)
)

// inlineSVG turns a standalone SVG document into an element for an HTML
// page: no XML declaration or comment, no namespace attributes (HTML puts
// svg in its namespace, and the page then names no URL at all), and a font
// list that falls back to the metric-compatible Arial and Helvetica.
func inlineSVG(s string) string {
	s = xmlPreamble.ReplaceAllString(s, `<svg role="img" `)
	s = xmlns.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
}

// textLabels are labels at xys in the sans font at size points, aligned
// vertically by yAlign.
func textLabels(xys plotter.XYs, labels []string, size vg.Length, yAlign draw.YAlignment) (*plotter.Labels, error) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sans, size)
		l.TextStyle[i].YAlign = yAlign
		l.TextStyle[i].Handler = plot.DefaultTextHandler
	}
	return l, nil
}
