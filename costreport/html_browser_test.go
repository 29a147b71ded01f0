package costreport_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/costreport"
	"github.com/convbatch/convbatch/internal/testkit/chartcheck"
)

// nightRows is a small archive's usage: one night of three providers and
// four agents, long names among them, and a few messages with no date.
func nightRows() []usageRow {
	var rows []usageRow
	agents := []string{"orchestrator", "agent-researcher", "agent-coder", "agent-researcher-with-a-name-of-forty-chars"}
	providers := []string{"anthropic", "openai", "azure-openai"}
	start := time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC)
	for i := range 60 {
		at := start.Add(time.Duration(i) * 9 * time.Minute).Format(time.RFC3339)
		if i%10 == 9 {
			at = ""
		}
		rows = append(rows, usageRow{conv: fmt.Sprintf("c%d", i/4+1), role: "assistant", agent: sp(agents[i%len(agents)]),
			provider: sp(providers[i%len(providers)]), in: ip(int64(1000 + 37*i)), out: ip(int64(100 + i)), cost: fp(float64(1+i%7) / 100), at: at})
	}
	return rows
}

// spanRows is the usage of an archive spanning 1,000 days from 2023-01-01
// with none from day 400 to day 699, eleven providers (more than the
// charts name), a cost that grows over the span, and undated messages
// costing more than any month.
func spanRows() []usageRow {
	var rows []usageRow
	first := time.Date(2023, 1, 1, 12, 0, 0, 0, time.UTC)
	for d := range 1000 {
		if d >= 400 && d < 700 {
			continue
		}
		for k := range 3 {
			p := fmt.Sprintf("provider-%02d", (d+k)%11)
			agent := fmt.Sprintf("agent-%02d-%s", (d*3+k)%14, strings.Repeat("x", (d+k)%30))
			rows = append(rows, usageRow{conv: fmt.Sprintf("c%d", d+1), role: "assistant", agent: &agent, provider: &p,
				in: ip(int64(500 + d)), out: ip(int64(50 + k)), cost: fp(float64(500+d) / 10000),
				at: first.AddDate(0, 0, d).Format(time.RFC3339)})
		}
	}
	for i := range 40 {
		rows = append(rows, usageRow{conv: fmt.Sprintf("u%d", i), role: "assistant", provider: sp("provider-00"), in: ip(10), cost: fp(25)})
	}
	return rows
}

// TestWriteHTMLInChromium: in a real browser, on a night's archive and on
// one spanning 1,000 days, with the page's font and with a wider fallback
// (a machine without Liberation Sans), no chart label leaves its chart,
// lies under a bar or on another label, and no bar is under 2 px. The
// cost chart is on a time axis (the 300 days without usage are a gap of
// 30 % of it), its tallest bar is not flattened by the undated cost, which
// is a note apart, never a bar. CONVBATCH_KEEP_SCREENSHOT=DIR keeps a
// screenshot of each page there.
func TestWriteHTMLInChromium(t *testing.T) {
	bin := chartcheck.Chromium(t)
	for _, tc := range []struct {
		name    string
		rows    []usageRow
		gap     float64 // the share of the time axis without usage, 0 for none
		undated string  // the note's start
	}{
		{"night", nightRows(), 0, "Not on the chart: 6 messages with no created_at"},
		{"1000-days", spanRows(), 0.3, "Not on the chart: 40 messages with no created_at, costing 1000 ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			writeUsageGroups(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), tc.rows, 1024)
			rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Day}, costreport.WithOverview())
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := rep.WriteHTML(&page); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page.String(), `<p class="apart">`+tc.undated) {
				t.Errorf("the page does not say the undated cost apart (%q)", tc.undated)
			}
			layouts := chartcheck.Measure(t, bin, page.Bytes(), chartcheck.Options{Fonts: []string{"DejaVu Sans"}})
			// The fallback is a real change of font: its labels are wider.
			if own, fallback := textWidth(layouts[0]), textWidth(layouts[1]); fallback < own*1.03 {
				t.Errorf("labels are %.0f px wide in DejaVu Sans, %.0f px in the page's font: the font did not change", fallback, own)
			}
			for _, l := range layouts {
				if len(l.Charts) != 3 {
					t.Fatalf("font %q: %d charts, want 3", l.Font, len(l.Charts))
				}
				for _, p := range chartcheck.Check(l.Charts) {
					t.Errorf("font %q: %s", l.Font, p)
				}
				checkTimeAxis(t, l.Charts[0], tc.gap)
			}
			if dir := os.Getenv("CONVBATCH_KEEP_SCREENSHOT"); dir != "" {
				file := filepath.Join(t.TempDir(), "cost.html")
				if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				chartcheck.Run(t, bin, "file://"+file, "--screenshot="+filepath.Join(dir, tc.name+".png"),
					"--window-size=1100,1900", "--hide-scrollbars")
			}
		})
	}
}

// textWidth is the width of every chart label of a layout, summed.
func textWidth(l chartcheck.Layout) float64 {
	var w float64
	for _, c := range l.Charts {
		for _, tx := range c.Texts {
			w += tx.Box.Width()
		}
	}
	return w
}

// checkTimeAxis checks the cost chart's bars as drawn: no "unknown" label,
// the tallest stack at least half the chart's height, and, when gap > 0,
// the widest space between two bars that share of the bars' span (±5 %).
func checkTimeAxis(t *testing.T, c chartcheck.Chart, gap float64) {
	t.Helper()
	for _, tx := range c.Texts {
		if tx.Text == costreport.UnknownDay {
			t.Errorf("the time axis has a label %q", tx.Text)
		}
	}
	// The bars' stacks by their left edge; the legend's swatches are the
	// shapes right of every bar and are left out.
	legendLeft := math.Inf(1)
	for _, tx := range c.Texts {
		if strings.HasPrefix(tx.Text, "provider-") || tx.Text == "anthropic" {
			legendLeft = math.Min(legendLeft, tx.Box.Left-20)
		}
	}
	stacks := map[float64]float64{}
	for _, s := range c.Shapes {
		if s.Box.Left < legendLeft {
			stacks[math.Round(s.Box.Left*10)/10] += s.Box.Height()
		}
	}
	var lefts []float64
	var tallest float64
	for l, h := range stacks {
		lefts = append(lefts, l)
		tallest = math.Max(tallest, h)
	}
	slices.Sort(lefts)
	if tallest < c.Box.Height()/2 {
		t.Errorf("the tallest bar is %.1f px of a chart %.1f px high: the chart is flat", tallest, c.Box.Height())
	}
	if gap == 0 || len(lefts) < 2 {
		return
	}
	var widest float64
	for i := 1; i < len(lefts); i++ {
		widest = math.Max(widest, lefts[i]-lefts[i-1])
	}
	span := lefts[len(lefts)-1] - lefts[0]
	if share := widest / span; math.Abs(share-gap) > 0.05 {
		t.Errorf("the widest space between bars is %.1f %% of their span, want %.0f %%: not a time axis", 100*share, 100*gap)
	}
}
