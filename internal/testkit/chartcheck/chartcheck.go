// Package chartcheck loads an HTML page with inline SVG charts in headless
// Chromium and measures them: every chart's box, every text and every
// filled shape (a bar, a legend swatch) as the browser lays them out. Check
// then says what a reader would see as broken: a label leaving its chart or
// hidden under a bar, two labels on top of each other, a bar thinner than
// MinBar. It serves the tests of costreport's HTML page and of the report
// command.
//
// Chromium is found on PATH (chromium, chromium-browser); without it the
// test is skipped with a message, except under CI=true, where it fails:
// CI must not skip the browser check silently.
package chartcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Chromium returns the path of a headless-capable Chromium, skipping the
// test when none is installed, except in CI (CI=true), where the browser
// check must run: .ci/run installs Debian's chromium package.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI must install it (Debian package chromium)")
	}
	t.Skip("chromium is not installed (Debian: apt-get install chromium)")
	return ""
}

// Run runs headless Chromium on url with extra flags and returns its
// standard output. It fetches nothing: networking features are off, and
// the pages it is given name no URL. A Chromium killed by a signal is run
// once more (logged): it crashed once in hundreds of runs on a loaded
// machine (SIGSEGV), which says nothing of the page it was given.
func Run(t testing.TB, bin, url string, flags ...string) []byte {
	t.Helper()
	out, err := run(t, bin, url, flags)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ProcessState.Sys() != nil {
		if ws, ok := exit.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Logf("chromium %v died of %v; running it once more", flags, ws.Signal())
			out, err = run(t, bin, url, flags)
		}
	}
	if err != nil {
		t.Fatalf("chromium %v: %v", flags, err)
	}
	return out
}

// run is one run of Run: its standard output, or its error with its
// standard error.
func run(t testing.TB, bin, url string, flags []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			// Killed for its time, not crashed: not run again.
			return nil, fmt.Errorf("%w (after %v)\n%s", ctx.Err(), 2*time.Minute, stderr.String())
		}
		return nil, &runError{err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// runError is a failed Chromium run: its exit error and standard error.
type runError struct {
	err    error
	stderr string
}

func (e *runError) Error() string { return e.err.Error() + "\n" + e.stderr }

func (e *runError) Unwrap() error { return e.err }

// Box is a rectangle in CSS pixels of the page, as getBoundingClientRect
// gives it.
type Box struct {
	Left, Top, Right, Bottom float64
}

// Width and Height are the box's size.
func (b Box) Width() float64  { return b.Right - b.Left }
func (b Box) Height() float64 { return b.Bottom - b.Top }

// overlap is the area two boxes share.
func (b Box) overlap(o Box) float64 {
	w := math.Min(b.Right, o.Right) - math.Max(b.Left, o.Left)
	h := math.Min(b.Bottom, o.Bottom) - math.Max(b.Top, o.Top)
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h
}

// Text is one text element of a chart.
type Text struct {
	Text string
	Box  Box
}

// Shape is one filled path of a chart but white ones (the background):
// a bar or a legend swatch.
type Shape struct {
	Fill string
	Box  Box
}

// Chart is one inline svg of the page as the browser lays it out.
type Chart struct {
	// Title is the text of the h2 before the chart's figure.
	Title string
	// Bars is the figure's data-bars attribute: vertical or horizontal.
	Bars   string
	Box    Box
	Texts  []Text
	Shapes []Shape
}

// measure is the script the page is loaded with: once fonts are ready it
// measures every chart in the page's fonts, then again in each family of
// FONTS set on every svg text, and writes the geometry as JSON, a list
// of charts per font, into a pre#chartcheck.
const measure = `<script>
window.addEventListener("load", async () => {
  const box = e => { const r = e.getBoundingClientRect(); return {Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom}; };
  const measure = () => [...document.querySelectorAll("figure svg")].map(svg => {
    const fig = svg.closest("figure");
    let h = fig.previousElementSibling;
    return {
      Title: h ? h.textContent : "",
      Bars: fig.dataset.bars || "",
      Box: box(svg),
      Texts: [...svg.querySelectorAll("text")].filter(t => t.textContent.trim() !== "").map(t => ({Text: t.textContent, Box: box(t)})),
      Shapes: [...svg.querySelectorAll("path")].filter(p => { const f = getComputedStyle(p).fill; return f && f !== "none" && f !== "rgb(255, 255, 255)" && !/^rgba\(.*, 0\)$/.test(f); })
        .map(p => ({Fill: getComputedStyle(p).fill, Box: box(p)})),
    };
  });
  const runs = [];
  for (const font of [""].concat(FONTS)) {
    if (font !== "") {
      const style = document.createElement("style");
      style.textContent = "svg text { font-family: " + JSON.stringify(font) + " !important; }";
      document.head.appendChild(style);
    }
    await document.fonts.ready;
    runs.push({Font: font, Charts: measure()});
  }
  const out = document.createElement("pre");
  out.id = "chartcheck";
  out.textContent = JSON.stringify(runs);
  document.body.appendChild(out);
});
</script>`

// Options of Measure.
type Options struct {
	// Width is the browser window's width in CSS pixels (default 1280).
	Width int
	// Fonts are font families to measure the charts in too, each set on
	// every svg text in its turn, as on a machine that lacks the family
	// the page asks for ("DejaVu Sans", say).
	Fonts []string
}

// Layout is the geometry of a page's charts in one font.
type Layout struct {
	// Font is the family every svg text was drawn in, "" for the page's.
	Font   string
	Charts []Chart
}

var chartcheckPre = regexp.MustCompile(`(?s)<pre id="chartcheck">(.*?)</pre>`)

// Measure loads page (a whole HTML document) in Chromium bin and returns
// the geometry of its charts in the page's fonts, then in each of
// opt.Fonts. The page is loaded, once, from a temporary file with the
// measuring script added before </body>.
func Measure(t testing.TB, bin string, page []byte, opt Options) []Layout {
	t.Helper()
	if opt.Width == 0 {
		opt.Width = 1280
	}
	fonts, err := json.Marshal(append([]string{}, opt.Fonts...))
	if err != nil {
		t.Fatal(err)
	}
	extra := strings.Replace(measure, "FONTS", string(fonts), 1)
	html := string(page)
	if !strings.Contains(html, "</body>") {
		t.Fatal("chartcheck: the page has no </body>")
	}
	html = strings.Replace(html, "</body>", extra+"\n</body>", 1)
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := Run(t, bin, "file://"+file, "--dump-dom", "--virtual-time-budget=10000",
		fmt.Sprintf("--window-size=%d,1000", opt.Width))
	m := chartcheckPre.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("chartcheck: the browser did not run the measuring script; DOM:\n%.2000s", dom)
	}
	var layouts []Layout
	if err := json.Unmarshal(unescapeHTML(m[1]), &layouts); err != nil {
		t.Fatalf("chartcheck: %v", err)
	}
	if len(layouts) != 1+len(opt.Fonts) {
		t.Fatalf("chartcheck: %d layouts measured, want %d", len(layouts), 1+len(opt.Fonts))
	}
	return layouts
}

// unescapeHTML undoes the escaping of a pre's text in a serialized DOM.
func unescapeHTML(b []byte) []byte {
	r := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&nbsp;", "\u00a0", "&amp;", "&")
	return []byte(r.Replace(string(b)))
}

// MinBar is the least thickness of a bar, in CSS pixels: the width of a
// vertical bar, the height of a horizontal one.
const MinBar = 2

// Slack is how far, in CSS pixels, a text's box may pass its chart's box
// or another box before Check calls it broken: the boxes of glyph cells
// are a little larger than the ink.
const Slack = 1

// Check returns what is broken in charts, one line each: a text whose
// box leaves its chart, a text over a bar or over another text, a bar
// thinner than MinBar. A text's box is its font's line box, taller than
// its ink, so its top and bottom are trimmed by a fifth of its height
// before the overlap tests.
func Check(charts []Chart) []string {
	var problems []string
	add := func(c Chart, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s: ", c.Title)+fmt.Sprintf(format, args...))
	}
	for _, c := range charts {
		if c.Box.Width() <= 0 || c.Box.Height() <= 0 {
			add(c, "the chart has no size: %+v", c.Box)
			continue
		}
		ink := make([]Box, len(c.Texts))
		for i, tx := range c.Texts {
			b := tx.Box
			if b.Left < c.Box.Left-Slack || b.Right > c.Box.Right+Slack || b.Top < c.Box.Top-Slack || b.Bottom > c.Box.Bottom+Slack {
				add(c, "label %q leaves the chart: %s outside %s", tx.Text, fmtBox(b), fmtBox(c.Box))
			}
			trim := b.Height() / 5
			ink[i] = Box{b.Left + Slack, b.Top + trim, b.Right - Slack, b.Bottom - trim}
		}
		for i, a := range ink {
			for j := i + 1; j < len(ink); j++ {
				if a.overlap(ink[j]) > 0 {
					add(c, "labels %q and %q overlap", c.Texts[i].Text, c.Texts[j].Text)
				}
			}
			for _, s := range c.Shapes {
				if a.overlap(s.Box) > 0 {
					add(c, "label %q lies under a bar at %s", c.Texts[i].Text, fmtBox(s.Box))
				}
			}
		}
		thin, thinnest := 0, Shape{}
		for _, s := range c.Shapes {
			if thick := thickness(c, s); thick < MinBar {
				if thin == 0 || thick < thickness(c, thinnest) {
					thinnest = s
				}
				thin++
			}
		}
		if thin > 0 {
			add(c, "%d of %d bars are under %d px thick, the thinnest %.2f px (%s)", thin, len(c.Shapes), MinBar, thickness(c, thinnest), fmtBox(thinnest.Box))
		}
	}
	return problems
}

// thickness is a bar's width, or its height in a chart of horizontal bars.
func thickness(c Chart, s Shape) float64 {
	if c.Bars == "horizontal" {
		return s.Box.Height()
	}
	return s.Box.Width()
}

func fmtBox(b Box) string {
	return fmt.Sprintf("[%.1f,%.1f %.1fx%.1f]", b.Left, b.Top, b.Width(), b.Height())
}
