package costreport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// outlierRows is spanRows with one message dated 1970-01-01 (a client
// with its clock at zero): 53 years before the others.
func outlierRows() []usageRow {
	return append(spanRows(), usageRow{conv: "epoch", role: "assistant", provider: sp("provider-03"), in: ip(7), cost: fp(0.5),
		at: time.Unix(0, 0).UTC().Format(time.RFC3339)})
}

// TestWriteHTMLInChromium: in a real browser, on a night's archive and on
// one spanning 1,000 days, with the page's font and with a wider fallback
// (a machine without Liberation Sans), no chart label leaves its chart,
// lies under a bar or on another label, and no bar is under 2 px. The
// cost chart is on a time axis (the 300 days without usage are a gap of
// 30 % of it), its tallest bar is not flattened by the undated cost, which
// is a note apart, never a bar. With one message dated 1970 besides the
// 1,000 days (issue 45 item 10), the axis still spans the real dates only
// (the same 30 % gap, no tick before 2023) and the 1970 day is listed
// under the chart. CONVBATCH_KEEP_SCREENSHOT=DIR keeps a
// screenshot of each page there.
func TestWriteHTMLInChromium(t *testing.T) {
	bin := chartcheck.Chromium(t)
	for _, tc := range []struct {
		name     string
		rows     []usageRow
		gap      float64 // the share of the time axis without usage, 0 for none
		undated  string  // the note's start
		outliers string  // in the outliers' note, "" for no note
	}{
		{"night", nightRows(), 0, "Not on the chart: 6 messages with no created_at", ""},
		{"1000-days", spanRows(), 0.3, "Not on the chart: 40 messages with no created_at, costing 1000 (", ""},
		{"1000-days-and-1970", outlierRows(), 0.3, "Not on the chart: 40 messages with no created_at", ": 1970-01-01 (1 message, cost 0.5);"},
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
			note := regexp.MustCompile(`<p class="apart outliers">([^<]*)</p>`).FindStringSubmatch(page.String())
			switch {
			case tc.outliers == "" && note != nil:
				t.Errorf("outliers listed where there are none: %s", note[1])
			case tc.outliers != "" && (note == nil || !strings.Contains(note[1], tc.outliers)):
				t.Errorf("outliers note %q, want one with %q", note, tc.outliers)
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
				if tc.gap > 0 {
					// The axis' labels are years or months of the real span.
					for _, tx := range l.Charts[0].Texts {
						if y, err := strconv.Atoi(strings.SplitN(tx.Text, "-", 2)[0]); err == nil && y >= 1900 && y < 2023 {
							t.Errorf("font %q: the time axis has a label %q, before the first real date", l.Font, tx.Text)
						}
					}
				}
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

// printCheck is the script TestWriteHTMLPrintInChromium loads the page
// with: it measures every table's scroll box on screen, then applies the
// page's @media print rules as if printing and measures again, and writes
// both as JSON into a pre#printcheck.
const printCheck = `<script>
window.addEventListener("load", () => {
  const boxes = () => [...document.querySelectorAll("table")].map(t => {
    const box = t.parentElement;
    const th = t.querySelector("th");
    return {Client: box.clientHeight, Scroll: box.scrollHeight, Overflow: getComputedStyle(box).overflowY, Sticky: getComputedStyle(th).position};
  });
  const screen = boxes();
  let rules = 0;
  for (const sheet of document.styleSheets) {
    for (const r of sheet.cssRules) {
      if (r instanceof CSSMediaRule && r.media.mediaText === "print") {
        const style = document.createElement("style");
        style.textContent = [...r.cssRules].map(x => x.cssText).join(" ");
        document.head.appendChild(style);
        rules += r.cssRules.length;
      }
    }
  }
  const out = document.createElement("pre");
  out.id = "printcheck";
  out.textContent = JSON.stringify({Rules: rules, Screen: screen, Print: boxes()});
  document.body.appendChild(out);
});
</script>`

// TestWriteHTMLPrintInChromium (issue 45 item 10): the long tables of the
// page scroll in a box on screen, and the page's @media print rules, as
// Chromium applies them, let every table print whole: no box clips it,
// no sticky header floats over its rows.
func TestWriteHTMLPrintInChromium(t *testing.T) {
	bin := chartcheck.Chromium(t)
	out := t.TempDir()
	writeUsageGroups(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), spanRows(), 1024)
	rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Conversation}, costreport.WithOverview())
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "page.html")
	html := strings.Replace(page.String(), "</body>", printCheck+"\n</body>", 1)
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := chartcheck.Run(t, bin, "file://"+file, "--dump-dom", "--virtual-time-budget=10000", "--window-size=1280,1000")
	m := regexp.MustCompile(`(?s)<pre id="printcheck">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the browser did not run the script; DOM:\n%.2000s", dom)
	}
	type box struct {
		Client, Scroll   float64
		Overflow, Sticky string
	}
	var got struct {
		Rules         int
		Screen, Print []box
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(m[1]), "&quot;", `"`)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Rules == 0 || len(got.Screen) != 4 || len(got.Print) != 4 {
		t.Fatalf("%d print rules, %d tables on screen, %d printed; want some rules and 4 tables", got.Rules, len(got.Screen), len(got.Print))
	}
	clipped := 0
	for i, s := range got.Screen {
		if s.Scroll > s.Client+1 {
			clipped++
		}
		p := got.Print[i]
		if p.Scroll > p.Client+1 || p.Overflow != "visible" || p.Sticky == "sticky" {
			t.Errorf("table %d printed: %.0f px of %.0f px shown, overflow %s, header %s", i, p.Client, p.Scroll, p.Overflow, p.Sticky)
		}
	}
	// The test can fail: on screen, the long tables are clipped.
	if clipped < 2 {
		t.Errorf("%d tables clipped on screen, want the long ones (at least 2)", clipped)
	}
}
