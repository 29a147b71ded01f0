package costreport

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// period is the time one bar of the cost-over-time chart covers: a UTC
// day, a week from Monday, or a number of months or years aligned on the
// calendar (quarters from January, decades from a year ending in 0).
type period struct {
	days, months, years int // exactly one is set
}

// periods are the bar lengths the chart chooses from, finest first.
var periods = []period{{days: 1}, {days: 7}, {months: 1}, {months: 3}, {years: 1}}

// name says what one bar covers, for the axis label.
func (p period) name() string {
	switch {
	case p.days == 1:
		return "UTC day"
	case p.days == 7:
		return "week (Monday to Sunday, UTC)"
	case p.months == 1:
		return "month (UTC)"
	case p.months == 3:
		return "quarter (UTC)"
	case p.years == 1:
		return "year (UTC)"
	}
	return fmt.Sprintf("%d years (UTC)", p.years)
}

// start returns the start of the period holding the UTC midnight t.
func (p period) start(t time.Time) time.Time {
	y, m, d := t.Date()
	switch {
	case p.days == 7:
		return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
	case p.days > 0:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case p.months > 0:
		return time.Date(y, m-time.Month((int(m)-1)%p.months), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(y-mod(y, p.years), 1, 1, 0, 0, 0, 0, time.UTC)
}

// next returns the start of the period after the one starting at t.
func (p period) next(t time.Time) time.Time { return t.AddDate(p.years, p.months, p.days) }

// mod is a modulo that is never negative, for years before 0.
func mod(a, b int) int { return ((a % b) + b) % b }

// parseDay parses a YYYY-MM-DD label of the Day key, whose year may have
// more than four digits or a minus sign (time.Parse takes neither).
func parseDay(s string) (time.Time, bool) {
	if len(s) < 10 || s[len(s)-6] != '-' || s[len(s)-3] != '-' {
		return time.Time{}, false
	}
	y, err1 := strconv.Atoi(s[:len(s)-6])
	m, err2 := strconv.Atoi(s[len(s)-5 : len(s)-3])
	d, err3 := strconv.Atoi(s[len(s)-2:])
	if err1 != nil || err2 != nil || err3 != nil || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), true
}

// epochDays is t's position on the chart's time axis: days since
// 1970-01-01 UTC.
func epochDays(t time.Time) float64 { return float64(t.Unix()) / 86400 }

// timeSeries is the cost-over-time chart's data: the dated rows of the
// overview binned by period, and the undated ones summed apart.
type timeSeries struct {
	period period
	// edges are the bars' bounds, one more than bars, in epochDays.
	edges []float64
	// cost holds, per provider the charts name, the cost of each bar.
	cost [][]float64
	// undated sums the rows whose day is UnknownDay (created_at null).
	undated Row
	// outliers are the outlier days (see outlierDays), oldest first, with
	// the sum of their rows; they are not drawn.
	outliers []dayCost
}

// dayCost is the sum of one day's rows.
type dayCost struct {
	day string
	Row
}

// Outlier days of the cost chart: a dated day is an outlier when it lies
// more than outlierK times the spread before the first quartile or after
// the third quartile of the distinct dated days, the spread being their
// interquartile range, at least outlierMinIQR days (Tukey's far-out
// fences, on days, with a floor so that a run of a few nights does not
// call a day a month away an outlier). With fewer than outlierMinDays
// distinct days there are none. Quartiles are by nearest rank.
const (
	outlierK       = 3
	outlierMinIQR  = 30
	outlierMinDays = 4
)

// outlierDays returns the outliers among days (sorted, distinct, day
// numbers since the epoch), as a set.
func outlierDays(days []int64) map[int64]bool {
	n := len(days)
	if n < outlierMinDays {
		return nil
	}
	rank := func(p int) int64 { return days[(p*n+99)/100-1] } // nearest rank, p %
	q1, q3 := rank(25), rank(75)
	spread := max(q3-q1, outlierMinIQR)
	out := map[int64]bool{}
	for _, d := range days {
		if d < q1-outlierK*spread || d > q3+outlierK*spread {
			out[d] = true
		}
	}
	return out
}

// binCosts bins the day-and-provider rows into the finest period that
// gives at most maxBars bars; names and as are chartProviders'.
func binCosts(rows []Row, names []string, as map[string]string, maxBars int) timeSeries {
	var ts timeSeries
	type dated struct {
		day      time.Time
		provider int
		cost     float64
	}
	var days []dated
	for i := range rows {
		row := &rows[i]
		d, ok := parseDay(row.Values[0])
		if !ok { // UnknownDay: the Day key gives nothing else
			ts.undated.Messages += row.Messages
			ts.undated.TokensInput += row.TokensInput
			ts.undated.TokensOutput += row.TokensOutput
			ts.undated.Cost = ts.undated.Cost.Add(row.Cost)
			continue
		}
		days = append(days, dated{d, slices.Index(names, as[row.Values[1]]), row.Cost.Float64()})
	}
	if len(days) == 0 {
		return ts
	}
	distinct := make([]int64, 0, len(days))
	for _, d := range days {
		distinct = append(distinct, floorDiv(d.day.Unix(), 86400))
	}
	slices.Sort(distinct)
	if outliers := outlierDays(slices.Compact(distinct)); len(outliers) > 0 {
		kept := days[:0:0]
		sums := map[int64]*dayCost{}
		for i := range rows {
			d, ok := parseDay(rows[i].Values[0])
			if !ok || !outliers[floorDiv(d.Unix(), 86400)] {
				continue
			}
			dn := floorDiv(d.Unix(), 86400)
			if sums[dn] == nil {
				sums[dn] = &dayCost{day: rows[i].Values[0]}
			}
			_ = sums[dn].add(&rows[i]) // within the report's total: no overflow
		}
		for _, d := range days {
			if !outliers[floorDiv(d.day.Unix(), 86400)] {
				kept = append(kept, d)
			}
		}
		days = kept
		for _, dn := range slices.Sorted(maps.Keys(sums)) {
			ts.outliers = append(ts.outliers, *sums[dn])
		}
	}
	first, last := days[0].day, days[0].day
	for _, d := range days {
		if d.day.Before(first) {
			first = d.day
		}
		if d.day.After(last) {
			last = d.day
		}
	}
	ts.period = periods[len(periods)-1]
	for _, p := range periods {
		if bars(p, first, last) <= maxBars {
			ts.period = p
			break
		}
	}
	if bars(ts.period, first, last) > maxBars {
		// Past maxBars years: periods of 2, 5, 10, 20, 50... years.
		for n := 2; ; n = nextStep(n) {
			if p := (period{years: n}); bars(p, first, last) <= maxBars {
				ts.period = p
				break
			}
		}
	}
	var starts []time.Time
	for t := ts.period.start(first); !t.After(last); t = ts.period.next(t) {
		starts = append(starts, t)
		ts.edges = append(ts.edges, epochDays(t))
	}
	ts.edges = append(ts.edges, epochDays(ts.period.next(starts[len(starts)-1])))
	ts.cost = make([][]float64, len(names))
	for i := range ts.cost {
		ts.cost[i] = make([]float64, len(starts))
	}
	for _, d := range days {
		bar, _ := slices.BinarySearchFunc(starts, d.day, func(s, day time.Time) int {
			if s.After(day) {
				return 1
			}
			if !ts.period.next(s).After(day) {
				return -1
			}
			return 0
		})
		ts.cost[d.provider][bar] += d.cost
	}
	return ts
}

// bars is the number of bars of period p from first to last.
func bars(p period, first, last time.Time) int {
	n := 0
	for t := p.start(first); !t.After(last); t = p.next(t) {
		n++
		if n > 1<<20 {
			break
		}
	}
	return n
}

// nextStep returns the step after n in 1, 2, 5, 10, 20, 50...
func nextStep(n int) int {
	switch s := strconv.Itoa(n); s[0] {
	case '1':
		return n * 2
	case '2':
		return n / 2 * 5
	}
	return n * 2
}

// periodBars draws the bars of a timeSeries stacked by provider, each
// over its period on a time axis in epochDays.
type periodBars struct {
	ts     *timeSeries
	colors []color.Color
}

// maxBarWidth keeps the bar of a chart of one or two periods from
// filling the plot.
const maxBarWidth vg.Length = 40

// Plot implements plot.Plotter: each bar takes 80 % of its period, at
// most maxBarWidth, centred on it.
func (b *periodBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := range len(b.ts.edges) - 1 {
		x0, x1 := trX(b.ts.edges[i]), trX(b.ts.edges[i+1])
		w := min((x1-x0)*0.8, maxBarWidth)
		l, r := (x0+x1)/2-w/2, (x0+x1)/2+w/2
		var sum float64
		for j, cost := range b.ts.cost {
			if cost[i] <= 0 {
				continue
			}
			y0, y1 := trY(sum), trY(sum+cost[i])
			sum += cost[i]
			c.FillPolygon(b.colors[j], []vg.Point{{X: l, Y: y0}, {X: l, Y: y1}, {X: r, Y: y1}, {X: r, Y: y0}})
		}
	}
}

// DataRange implements plot.DataRanger: the periods, and cost from 0 to
// the highest stack.
func (b *periodBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	for i := range len(b.ts.edges) - 1 {
		var sum float64
		for _, cost := range b.ts.cost {
			sum += max(cost[i], 0)
		}
		ymax = max(ymax, sum)
	}
	return b.ts.edges[0], b.ts.edges[len(b.ts.edges)-1], 0, ymax
}

// swatch is a legend thumbnail: a square of one color.
type swatch struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(s.color, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}})
}

// tickStep is a spacing of the time axis' labeled ticks.
type tickStep struct {
	period
	layout string // the label's time layout
}

// tickSteps are the spacings the time axis chooses from, finest first;
// past them, years in 1, 2, 5 steps.
var tickSteps = []tickStep{
	{period{days: 1}, time.DateOnly}, {period{days: 2}, time.DateOnly}, {period{days: 7}, time.DateOnly},
	{period{days: 14}, time.DateOnly}, {period{months: 1}, "2006-01"}, {period{months: 2}, "2006-01"},
	{period{months: 3}, "2006-01"}, {period{months: 6}, "2006-01"}, {period{years: 1}, "2006"},
}

// timeTicker returns the ticks of a time axis in epochDays, labeled on
// calendar boundaries (at noon under day bars), as many as fit in width
// without their labels touching. Labels are measured with the chart font
// and a fifth more, for a browser drawing them with a wider fallback.
func timeTicker(bar period, width vg.Length, style func(string) vg.Length) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ticks []plot.Tick
		for i := 0; ; i++ {
			step := tickStep{period{years: 1}, "2006"}
			if i < len(tickSteps) {
				step = tickSteps[i]
			} else {
				n := 1
				for range i - len(tickSteps) + 1 {
					n = nextStep(n)
				}
				step.period = period{years: n}
			}
			ticks = timeTicks(step, bar, lo, hi)
			need := vg.Length(len(ticks)) * (style(strings.Repeat("0", len(step.layout)))*1.2 + 12)
			if need <= width || len(ticks) <= 1 {
				return ticks
			}
		}
	})
}

// timeTicks returns the ticks of step from lo to hi (epochDays).
func timeTicks(step tickStep, bar period, lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	offset := 0.0
	if bar.days == 1 && step.days > 0 && step.days != 7 {
		offset = 0.5 // under the bar of the day
	}
	from := time.Unix(int64(math.Floor(lo))*86400, 0).UTC()
	t := step.start(from)
	if step.days > 1 && step.days != 7 {
		// Every n days counted from the epoch, so ticks do not move with lo.
		d := int(math.Floor(epochDays(t)))
		t = t.AddDate(0, 0, -mod(d, step.days))
	}
	for ; epochDays(t) <= hi; t = step.next(t) {
		if x := epochDays(t) + offset; x >= lo && x <= hi {
			ticks = append(ticks, plot.Tick{Value: x, Label: t.Format(step.layout)})
		}
		if len(ticks) > 10000 {
			break
		}
	}
	return ticks
}
