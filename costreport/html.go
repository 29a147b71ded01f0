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
	"time"
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
// the page shows the totals, three charts (cost per UTC day stacked by
// provider, the TopAgents agents by cost, input and output tokens by
// provider) and their tables, then the report's own grouping when it is
// not one of them. Without one it holds the totals and the report's table.
// Costs in the tables are exact (see Row.Cost); the charts draw them as
// doubles. The page is the same bytes for the same table.
func (r *Report) WriteHTML(w io.Writer) error {
	page := htmlPage{
		Cost:         r.Total.Cost.Text(2),
		Messages:     group3(r.Total.Messages),
		TokensInput:  group3(r.Total.TokensInput),
		TokensOutput: group3(r.Total.TokensOutput),
		Parts:        r.Parts,
	}
	if ov := r.Overview; ov != nil {
		if len(ov.ByProvider.Rows) > 0 {
			for _, c := range []struct {
				title, caption string
				draw           func(*Overview) (string, error)
			}{
				{"Cost per day", "Cost per UTC day of created_at, stacked by provider.", dayChart},
				{fmt.Sprintf("Top %d agents by cost", TopAgents), "The agents (agent_id) with the highest cost; (none) is a null agent_id.", agentChart},
				{"Tokens by provider", "Sum of tokens_input and tokens_output per provider.", tokenChart},
			} {
				svg, err := c.draw(ov)
				if err != nil {
					return fmt.Errorf("html: %s chart: %w", strings.ToLower(c.title), err)
				}
				page.Charts = append(page.Charts, htmlChart{Title: c.title, Caption: c.caption, SVG: template.HTML(svg)})
			}
		}
		page.Tables = append(page.Tables,
			tableOf("Cost by provider", ov.ByProvider),
			tableOf("Cost by agent", ov.ByAgent),
			tableOf("Cost by day and provider", ov.ByDayProvider))
	}
	if r.Overview == nil || !slices.ContainsFunc(OverviewKeys, func(keys []Key) bool { return slices.Equal(keys, r.Keys) }) {
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
	Parts                                     int
	Charts                                    []htmlChart
	Tables                                    []htmlTable
}

type htmlChart struct {
	Title, Caption string
	SVG            template.HTML
}

type htmlTable struct {
	Title   string
	Header  []htmlCell
	Rows    [][]htmlCell
	Total   []htmlCell
	NumRows int
	Order   string
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
.scroll { max-height: 520px; overflow: auto; border: 1px solid #ddd; border-radius: 6px; }
table { border-collapse: collapse; font-size: 14px; width: 100%; }
th, td { padding: 4px 10px; text-align: left; white-space: nowrap; }
th { position: sticky; top: 0; background: #f3f3f3; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
tfoot td { font-weight: bold; border-top: 2px solid #999; background: #fff; position: sticky; bottom: 0; }
</style>
</head>
<body>
<h1>convbatch cost report</h1>
<p class="note">From the usage table ({{.Parts}} Parquet part{{if ne .Parts 1}}s{{end}}). Costs are in the archive's currency and add up exactly: each is the decimal written in the archive, summed with no rounding.</p>
<div class="totals">
<div><b>{{.Cost}}</b><span>cost</span></div>
<div><b>{{.Messages}}</b><span>messages with usage</span></div>
<div><b>{{.TokensInput}}</b><span>input tokens</span></div>
<div><b>{{.TokensOutput}}</b><span>output tokens</span></div>
</div>
{{range .Charts}}<h2>{{.Title}}</h2>
<figure>
{{.SVG}}<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{range .Tables}}<h2>{{.Title}}</h2>
<p class="note">{{.NumRows}} row{{if ne .NumRows 1}}s{{end}}, {{.Order}}.</p>
<div class="scroll">
<table>
<thead><tr>{{range .Header}}<th{{if .Numeric}} class="n"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Numeric}} class="n"{{end}}>{{.Text}}</td>{{end}}</tr>
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

// dayChart draws the cost per day, a bar per day stacked by provider.
func dayChart(ov *Overview) (string, error) {
	names, as := chartProviders(ov)
	var days []string
	seen := map[string]bool{}
	for _, row := range ov.ByDayProvider.Rows {
		if d := row.Values[0]; !seen[d] {
			seen[d] = true
			days = append(days, d)
		}
	}
	slices.SortFunc(days, func(a, b string) int {
		// Dates in order, the unknown day last.
		switch {
		case a == b:
			return 0
		case a == UnknownDay:
			return 1
		case b == UnknownDay:
			return -1
		}
		return strings.Compare(a, b)
	})
	days, dense := fillDays(days)
	dayIndex := map[string]int{}
	for i, d := range days {
		dayIndex[d] = i
	}
	cost := make([]plotter.Values, len(names))
	for i := range cost {
		cost[i] = make(plotter.Values, len(days))
	}
	for _, row := range ov.ByDayProvider.Rows {
		p := slices.Index(names, as[row.Values[1]])
		cost[p][dayIndex[row.Values[0]]] += row.Cost.Float64()
	}

	const h = 300
	p := newPlot()
	p.Add(grid(false))
	p.Y.Min = 0
	p.Y.Label.Text = "cost"
	plotW := chartWidth - legendWidth(names) - 70
	barW := max(plotW/vg.Length(len(days))*0.75, 0.5)
	barW = min(barW, 40)
	var below *plotter.BarChart
	var legend []legendEntry
	for i, name := range names {
		bars, err := plotter.NewBarChart(cost[i], barW)
		if err != nil {
			return "", err
		}
		bars.Color = providerColor(names, i)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		legend = append(legend, legendEntry{printable(name), bars})
	}
	// At most one label every 70 points: a date is about 55 wide.
	step := max(1, int(math.Ceil(float64(len(days))*70/float64(plotW))))
	labels := make([]string, len(days))
	for i, d := range days {
		if i%step == 0 {
			labels[i] = d
		}
	}
	if last := len(days) - 1; days[last] == UnknownDay {
		// Always name the bar of rows without a date, clearing a label
		// too close to it.
		for i := max(0, last-step+1); i < last; i++ {
			labels[i] = ""
		}
		labels[last] = UnknownDay
	}
	p.NominalX(labels...)
	p.X.Padding = 0
	if !dense {
		p.X.Label.Text = "days with usage (days between them without any are left out)"
	}
	headroom(p, cost, true)
	return render(p, legend, h)
}

// maxDays is the longest span of days the day chart draws every day of;
// past it, it draws the days with usage only.
const maxDays = 400

// fillDays returns sorted YYYY-MM-DD days (UnknownDay last) with every
// missing day between the first and the last added, and true, when that
// makes at most maxDays; else days unchanged and false.
func fillDays(days []string) ([]string, bool) {
	known := days
	if len(known) > 0 && known[len(known)-1] == UnknownDay {
		known = known[:len(known)-1]
	}
	if len(known) < 2 {
		return days, true
	}
	first, err1 := time.Parse(time.DateOnly, known[0])
	last, err2 := time.Parse(time.DateOnly, known[len(known)-1])
	if err1 != nil || err2 != nil || last.Sub(first) >= maxDays*24*time.Hour {
		return days, false
	}
	var out []string
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	if len(known) < len(days) {
		out = append(out, UnknownDay)
	}
	return out, true
}

// headroom sets the value axis to end a little above the highest bar (of
// the stack of values, when stacked), so no bar touches the frame.
func headroom(p *plot.Plot, values []plotter.Values, stacked bool) {
	var top float64
	for i := range values[0] {
		var sum float64
		for _, vs := range values {
			if stacked {
				sum += max(vs[i], 0)
			} else {
				sum = max(sum, vs[i])
			}
		}
		top = max(top, sum)
	}
	p.Y.Max = 1 // an axis from 0 to 1 when every value is 0
	if top > 0 {
		p.Y.Max = top * 1.08
	}
}

// agentChart draws the TopAgents agents by cost, horizontal bars with the
// exact cost at their end, the first at the top.
func agentChart(ov *Overview) (string, error) {
	rows := ov.ByAgent.Rows[:min(TopAgents, len(ov.ByAgent.Rows))]
	n := len(rows)
	values := make(plotter.Values, n)
	names := make([]string, n)
	xys := make(plotter.XYs, n)
	labels := make([]string, n)
	var top float64
	for i, row := range rows {
		j := n - 1 - i // the first row at the top
		values[j] = row.Cost.Float64()
		names[j] = shorten(printable(row.Values[0]), 32)
		xys[j] = plotter.XY{X: values[j], Y: float64(j)}
		labels[j] = row.Cost.String()
		top = max(top, values[j])
	}
	h := vg.Length(50 + 26*n)
	p := newPlot()
	p.Add(grid(true))
	p.X.Label.Text = "cost"
	bars, err := plotter.NewBarChart(values, 16)
	if err != nil {
		return "", err
	}
	bars.Horizontal = true
	bars.Color = palette[0]
	bars.LineStyle.Width = 0
	p.Add(bars)
	lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return "", err
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].Font = font.From(sans, 9.5)
		lbl.TextStyle[i].YAlign = draw.YCenter
		lbl.TextStyle[i].Handler = plot.DefaultTextHandler
	}
	lbl.Offset = vg.Point{X: 4}
	p.Add(lbl)
	p.NominalY(names...)
	p.Y.Padding = 0
	p.X.Min, p.X.Max = 0, 1 // from 0 to 1 when every cost is 0
	if top > 0 {
		p.X.Max = top * 1.2 // room for the labels
	}
	return render(p, nil, h)
}

// tokenChart draws the input and output tokens of each provider the charts
// name, side by side.
func tokenChart(ov *Overview) (string, error) {
	names, as := chartProviders(ov)
	in := make(plotter.Values, len(names))
	out := make(plotter.Values, len(names))
	for _, row := range ov.ByProvider.Rows {
		i := slices.Index(names, as[row.Values[0]])
		in[i] += float64(row.TokensInput)
		out[i] += float64(row.TokensOutput)
	}
	const h = 280
	p := newPlot()
	p.Add(grid(false))
	p.Y.Min = 0
	p.Y.Label.Text = "tokens"
	legendNames := []string{"input", "output"}
	plotW := chartWidth - legendWidth(legendNames) - 70
	w := min(plotW/vg.Length(len(names))*0.35, 36)
	var legend []legendEntry
	for i, vs := range []plotter.Values{in, out} {
		bars, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return "", err
		}
		bars.Color = palette[i]
		bars.LineStyle.Width = 0
		bars.Offset = w * (vg.Length(i) - 0.5)
		p.Add(bars)
		legend = append(legend, legendEntry{legendNames[i], bars})
	}
	headroom(p, []plotter.Values{in, out}, false)
	labels := make([]string, len(names))
	for i, n := range names {
		labels[i] = shorten(printable(n), 18)
	}
	p.NominalX(labels...)
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

// shorten cuts s to at most n characters, ending in an ellipsis when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

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
		w = max(w, legendStyle.TextStyle.Width(" "+printable(n)))
	}
	return w + legendStyle.ThumbnailWidth + 16
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
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
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
