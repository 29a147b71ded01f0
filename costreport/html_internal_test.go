package costreport

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

func TestReadableTicks(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.1 + 0.2: "0.3", 2500: "2.5k", 1.5e6: "1.5M", 3e9: "3G", 1e-7: "0.0000001", -2000: "-2k"} {
		if got := readable(v); got != want {
			t.Errorf("readable(%v) = %q, want %q", v, got, want)
		}
	}
	for _, tick := range readableTicks(0, 0.7) {
		if len(tick.Label) > 4 {
			t.Errorf("tick label %q", tick.Label)
		}
	}
}

func TestParseDay(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // RFC 3339, "" for refused
	}{
		{"2026-03-01", "2026-03-01T00:00:00Z"},
		{"1969-12-31", "1969-12-31T00:00:00Z"},
		{"10000-01-02", "10000-01-02T00:00:00Z"},
		{UnknownDay, ""},
		{"2026-13-01", ""},
		{"2026-3-1", ""},
	} {
		d, ok := parseDay(tc.in)
		got := ""
		if ok {
			got = d.Format(time.RFC3339)
		}
		if got != tc.want {
			t.Errorf("parseDay(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPeriodStart(t *testing.T) {
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC) // a Wednesday
	for _, tc := range []struct {
		p    period
		want string
	}{
		{period{days: 1}, "2026-03-04"},
		{period{days: 7}, "2026-03-02"},
		{period{months: 1}, "2026-03-01"},
		{period{months: 3}, "2026-01-01"},
		{period{years: 1}, "2026-01-01"},
		{period{years: 10}, "2020-01-01"},
	} {
		if got := tc.p.start(day).Format(time.DateOnly); got != tc.want {
			t.Errorf("%s: start(%s) = %s, want %s", tc.p.name(), day.Format(time.DateOnly), got, tc.want)
		}
	}
	if got := (period{days: 7}).start(time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)).Format(time.DateOnly); got != "2026-03-02" {
		t.Errorf("the week of Sunday 2026-03-08 starts %s, want Monday 2026-03-02", got)
	}
	if got := (period{years: 10}).start(time.Date(-5, 6, 1, 0, 0, 0, 0, time.UTC)).Year(); got != -10 {
		t.Errorf("the decade of year -5 starts in %d, want -10", got)
	}
}

// TestBinCosts: the bar period is the finest giving at most maxBars bars,
// each row falls in the bar of its date, the undated rows are summed apart.
func TestBinCosts(t *testing.T) {
	names := []string{"a", "b"}
	as := map[string]string{"a": "a", "b": "b"}
	row := func(day, provider string, cost string) Row {
		c, err := ParseDecimal(cost)
		if err != nil {
			t.Fatal(err)
		}
		return Row{Values: []string{day, provider}, Messages: 1, Cost: c}
	}
	for _, tc := range []struct {
		name    string
		rows    []Row
		maxBars int
		period  string
		bars    int
		first   string
		cost    [][]float64
	}{
		{"two days", []Row{row("2026-03-01", "a", "1"), row("2026-03-02", "b", "2"), row(UnknownDay, "a", "50")},
			120, "UTC day", 2, "2026-03-01", [][]float64{{1, 0}, {0, 2}}},
		{"weeks", []Row{row("2026-01-01", "a", "1"), row("2026-03-01", "a", "2"), row("2026-03-02", "b", "4")},
			40, "week (Monday to Sunday, UTC)", 10, "2025-12-29", nil},
		{"1000 days in months", []Row{row("2023-01-01", "a", "1"), row("2023-01-31", "a", "1"), row("2025-09-27", "b", "3")},
			120, "month (UTC)", 33, "2023-01-01", nil},
		{"decades", []Row{row("1900-01-01", "a", "1"), row("2026-01-01", "b", "1")},
			20, "10 years (UTC)", 13, "1900-01-01", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := binCosts(tc.rows, names, as, tc.maxBars)
			if ts.period.name() != tc.period || len(ts.edges) != tc.bars+1 {
				t.Fatalf("%d bars of %s, want %d of %s", len(ts.edges)-1, ts.period.name(), tc.bars, tc.period)
			}
			if first := time.Unix(int64(ts.edges[0]*86400), 0).UTC().Format(time.DateOnly); first != tc.first {
				t.Errorf("first bar starts %s, want %s", first, tc.first)
			}
			var sum float64
			for _, c := range ts.cost {
				for _, v := range c {
					sum += v
				}
			}
			var want float64
			for _, r := range tc.rows {
				if r.Values[0] != UnknownDay {
					want += r.Cost.Float64()
				}
			}
			if sum != want {
				t.Errorf("bars sum %v, want %v", sum, want)
			}
			if tc.cost != nil && !reflect.DeepEqual(ts.cost, tc.cost) {
				t.Errorf("cost %v, want %v", ts.cost, tc.cost)
			}
		})
	}
	ts := binCosts([]Row{row(UnknownDay, "a", "2.5"), row(UnknownDay, "b", "0.5")}, names, as, 120)
	if len(ts.edges) != 0 || ts.undated.Messages != 2 || ts.undated.Cost.String() != "3" {
		t.Errorf("undated only: %d edges, undated %+v", len(ts.edges), ts.undated)
	}
}

// TestTimeTicks: ticks fall on calendar boundaries (at noon under day
// bars), and the ticker thins them to what fits the width.
func TestTimeTicks(t *testing.T) {
	at := func(s string) float64 {
		d, _ := parseDay(s)
		return epochDays(d)
	}
	labels := func(ticks []plot.Tick) []string {
		var out []string
		for _, tk := range ticks {
			out = append(out, tk.Label)
		}
		return out
	}
	got := timeTicks(tickSteps[0], period{days: 1}, at("2026-03-01"), at("2026-03-03"))
	if !reflect.DeepEqual(labels(got), []string{"2026-03-01", "2026-03-02"}) || got[0].Value != at("2026-03-01")+0.5 {
		t.Errorf("day ticks %+v", got)
	}
	got = timeTicks(tickSteps[4], period{days: 7}, at("2025-12-29"), at("2026-03-09"))
	if !reflect.DeepEqual(labels(got), []string{"2026-01", "2026-02", "2026-03"}) || got[0].Value != at("2026-01-01") {
		t.Errorf("month ticks %+v", got)
	}
	width := func(s string) vg.Length { return vg.Length(len(s)) * 5 }
	for _, tc := range []struct {
		from, to string
		want     string // the first label
	}{
		{"2026-03-01", "2026-03-03", "2026-03-01"},
		{"2023-01-01", "2025-10-01", "2023-01"},
		{"1900-01-01", "2030-01-01", "1900"},
	} {
		ticks := timeTicker(period{months: 1}, 500, width).Ticks(at(tc.from), at(tc.to))
		if len(ticks) == 0 || ticks[0].Label != tc.want {
			t.Errorf("%s to %s: ticks %v, want the first %s", tc.from, tc.to, labels(ticks), tc.want)
		}
		if need := vg.Length(len(ticks)) * (width(ticks[0].Label)*1.2 + 12); need > 500 {
			t.Errorf("%s to %s: %d ticks need %v points of 500", tc.from, tc.to, len(ticks), need)
		}
	}
}

// TestOutlierDays: the fences are 3 × max(IQR, 30 days) outside the
// quartiles of the distinct days; fewer than 4 days have no outlier.
func TestOutlierDays(t *testing.T) {
	day := func(s string) int64 {
		d, ok := parseDay(s)
		if !ok {
			t.Fatalf("bad day %q", s)
		}
		return floorDiv(d.Unix(), 86400)
	}
	days := func(ss ...string) []int64 {
		var out []int64
		for _, s := range ss {
			out = append(out, day(s))
		}
		slices.Sort(out)
		return out
	}
	years := func(extra ...string) []int64 { // four years, one day a month
		var ss []string
		for y := 2023; y <= 2026; y++ {
			for m := 1; m <= 12; m++ {
				ss = append(ss, fmt.Sprintf("%d-%02d-15", y, m))
			}
		}
		return days(append(ss, extra...)...)
	}
	for _, tc := range []struct {
		name string
		days []int64
		want []string
	}{
		{"four years and 1970", years("1970-01-01"), []string{"1970-01-01"}},
		{"four years and 2099", years("2099-12-31"), []string{"2099-12-31"}},
		{"four years and 2019: inside the fence (2017-12)", years("2019-01-01"), nil},
		{"four years and 2016: outside", years("2016-01-01"), []string{"2016-01-01"}},
		{"two points: no telling", days("1970-01-01", "2026-01-01"), nil},
		{"three nights and 1970", days("2026-11-29", "2026-11-30", "2026-12-01", "1970-01-01"), nil}, // fewer than 4 distinct days are the bulk
		{"four nights and 1970", days("2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02", "1970-01-01"), []string{"1970-01-01"}},
		// The 30-day floor: nights and a day 80 days before are kept,
		// 100 days before is an outlier (fence 90 days before q1).
		{"nights and 80 days before", days("2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02", "2026-09-10"), nil},
		{"nights and 100 days before", days("2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02", "2026-08-21"), []string{"2026-08-21"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := outlierDays(tc.days)
			var names []string
			for _, d := range tc.days {
				if got[d] {
					names = append(names, time.Unix(d*86400, 0).UTC().Format(time.DateOnly))
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Fatalf("outliers %v, want %v", names, tc.want)
			}
		})
	}
}
