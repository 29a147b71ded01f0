package audit

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// maxNightBars is the most bars the chart of receipts by night draws:
// more nights are drawn in groups of consecutive runs, so that no bar is
// thinner than a few pixels at 1,000 nights.
const maxNightBars = 200

// verdict colours, as the legend names them.
var colours = map[string]string{"valid": "#2e7d32", "invalid": "#c62828", "incomplete": "#f9a825"}

// WriteHTML writes the audit as one self-contained page (no network
// fetch; inline SVG charts): receipts by night stacked by verdict, the
// quorum margin's distribution, the keys by use, and the tables of the
// table format.
func WriteHTML(w io.Writer, h *Header, r *Result) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	e := html.EscapeString
	p(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>convbatch audit of %s</title>
<style>
body{font-family:"Liberation Sans",Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;font-size:13px;vertical-align:top;overflow-wrap:anywhere}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:8px 0 4px}svg text{font-family:"Liberation Sans",Arial,sans-serif;font-size:12px;fill:#333}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
code{font-size:12px}
</style></head><body>
`, e(h.Out))
	p("<h1>Audit of %s</h1>\n", e(h.Out))
	p("<p>Keyring %s (format %d, sha256 <code>%s</code>). %s receipts held over %d runs; %s re-judged",
		e(h.Keyring), h.KeyringFormat, e(h.KeyringSHA256), num(sum(r.Held)), r.Runs, num(r.Rejudged))
	if r.OutsideSince > 0 {
		p(", %s before --since %s left as they are", num(r.OutsideSince), e(h.Since))
	}
	if r.NotRejudged > 0 {
		p(", %s not re-judged (written by a convbatch before issue 43; runs %s)", num(r.NotRejudged), runList(r.NotRejudgedRuns))
	}
	p("; %s verdicts changed", num(int64(len(r.Changes))))
	if h.CommittedRun > 0 {
		p(", committed as run %d", h.CommittedRun)
	}
	p(".</p>\n")

	p("<h2>Receipts by night</h2>\n")
	nightChart(bw, r.Nights)
	p(`<p class="legend">`)
	for _, s := range statuses {
		p(`<span style="background:%s"></span>%s`, colours[s], s)
	}
	p("</p>\n")

	p("<h2>Quorum margin</h2>\n")
	var margins []hbar
	for _, m := range slices.Sorted(maps.Keys(r.Margin)) {
		margins = append(margins, hbar{fmt.Sprintf("%+d", m), r.Margin[m]})
	}
	hbarChart(bw, margins, "#1565c0")
	p("<p>Distinct agents with a valid statement, less k. Valid receipts at margin 0 (one lost key from failing): %s.</p>\n", num(int64(len(r.AtMarginZero))))

	p("<h2>Signer keys by use</h2>\n")
	var keys []hbar
	for i, k := range r.Keys {
		if i == 10 {
			break
		}
		label := keyName(k.KeyID, k.Fingerprint)
		if k.Agent != "" {
			label += " (" + k.Agent + ")"
		} else {
			label += " (envelope)"
		}
		keys = append(keys, hbar{label, k.Uses})
	}
	hbarChart(bw, keys, "#6a1b9a")

	p("<h2>Verdicts</h2>\n<table><tr><th>verdict</th><th class=n>held</th><th class=n>now</th></tr>\n")
	for _, s := range statuses {
		p("<tr><td>%s</td><td class=n>%s</td><td class=n>%s</td></tr>\n", s, num(r.Held[s]), num(r.Verdicts[s]))
	}
	p("</table>\n<h2>Reasons of the receipts re-judged</h2>\n<table><tr><th>reason</th><th class=n>receipts</th></tr>\n")
	for _, code := range byCount(r.Reasons) {
		p("<tr><td>%s</td><td class=n>%s</td></tr>\n", e(code), num(r.Reasons[code]))
	}
	p("</table>\n<h2>Changed verdicts (%s)</h2>\n<table><tr><th class=n>run</th><th>file</th><th class=n>line</th><th>was</th><th>now</th><th>reasons</th><th>cause</th></tr>\n", num(int64(len(r.Changes))))
	for _, c := range r.Changes {
		p("<tr><td class=n>%d</td><td>%s</td><td class=n>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			c.Run, e(c.File), c.Line, c.WasStatus, c.Status, e(strings.Join(c.Reasons, ", ")), e(strings.Join(c.Causes, "; ")))
	}
	p("</table>\n<h2>Keys</h2>\n<table><tr><th>fingerprint</th><th>id</th><th>role</th><th>agent</th><th class=n>uses</th><th>by status</th></tr>\n")
	for _, k := range r.Keys {
		p("<tr><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td><td class=n>%s</td><td>%s</td></tr>\n",
			e(short(k.Fingerprint)), e(dash(k.KeyID)), k.Role, e(dash(k.Agent)), num(k.Uses), e(countList(k.ByStatus)))
	}
	p("</table>\n<h2>Agents</h2>\n<table><tr><th>agent</th><th class=n>statements</th><th class=n>valid signatures</th><th>keys by status</th></tr>\n")
	for _, a := range r.Agents {
		p("<tr><td>%s</td><td class=n>%s</td><td class=n>%s</td><td>%s</td></tr>\n", e(a.Agent), num(a.Statements), num(a.ValidSignatures), e(countList(a.ByStatus)))
	}
	p("</table>\n<h2>Nights</h2>\n<table><tr><th class=n>run</th><th>command</th><th>committed at</th><th class=n>valid</th><th class=n>invalid</th><th class=n>incomplete</th><th class=n>changed</th><th class=n>not re-judged</th></tr>\n")
	for _, n := range r.Nights {
		p("<tr><td class=n>%d</td><td>%s</td><td>%s</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td></tr>\n",
			n.Run, e(n.Command), e(dash(n.CommittedAt)), num(n.Verdicts["valid"]), num(n.Verdicts["invalid"]), num(n.Verdicts["incomplete"]), num(n.Changed), num(n.NotRejudged))
	}
	p("</table>\n")
	if h.WarnExpiry != "" {
		p("<h2>Expiring within %s</h2>\n<table><tr><th>what</th><th>id</th><th>agent</th><th>expires</th><th>in</th></tr>\n", e(h.WarnExpiry))
		for _, x := range r.Expiring {
			p("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", x.What, e(dash(x.KeyID)), e(dash(x.Agent)), x.At, x.In)
		}
		p("</table>\n")
	}
	p("</body></html>\n")
	return bw.Flush()
}

// hbar is one bar of a chart of horizontal bars.
type hbar struct {
	label string
	n     int64
}

// hbarChart draws bars as horizontal bars, their labels left of them and
// their counts right of them.
func hbarChart(w io.Writer, bars []hbar, colour string) {
	const width, labelW, countW, rowH = 900.0, 260.0, 110.0, 22.0
	var most int64 = 1
	for _, b := range bars {
		most = max(most, b.n)
	}
	height := rowH*float64(len(bars)) + 8
	fmt.Fprintf(w, `<figure data-bars="horizontal"><svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", width, height, width, height)
	span := width - labelW - countW
	for i, b := range bars {
		y := 4 + rowH*float64(i)
		l := span * float64(b.n) / float64(most)
		if b.n > 0 {
			l = max(l, 2)
		}
		fmt.Fprintf(w, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, labelW-8, y+15, html.EscapeString(clip(b.label, 30)))
		if l > 0 {
			fmt.Fprintf(w, `<path d="M%.1f %.1fh%.1fv%.1fh%.1fz" fill="%s"/>`, labelW, y+3, l, rowH-6, -l, colour)
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s</text>`+"\n", labelW+l+6, y+15, num(b.n))
	}
	fmt.Fprint(w, "</svg></figure>\n")
}

// nightChart draws the receipts of each night (or group of nights)
// stacked by verdict, with the first and last night named under the bars
// and the tallest stack's count above the axis.
func nightChart(w io.Writer, nights []Night) {
	const width, height, left, bottom, top = 1000.0, 260.0, 70.0, 30.0, 10.0
	group := max(1, (len(nights)+maxNightBars-1)/maxNightBars)
	type stack struct {
		from, to int
		v        map[string]int64
	}
	var stacks []stack
	for i := 0; i < len(nights); i += group {
		s := stack{from: nights[i].Run, v: map[string]int64{}}
		for _, n := range nights[i:min(i+group, len(nights))] {
			s.to = n.Run
			for k, c := range n.Verdicts {
				s.v[k] += c
			}
		}
		stacks = append(stacks, s)
	}
	var most int64 = 1
	for _, s := range stacks {
		most = max(most, s.v["valid"]+s.v["invalid"]+s.v["incomplete"])
	}
	fmt.Fprintf(w, `<figure data-bars="vertical"><svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", width, height, width, height)
	plotW, plotH := width-left-10, height-top-bottom
	slot := plotW / float64(max(1, len(stacks)))
	barW := max(2, slot*0.8)
	for i, s := range stacks {
		x := left + slot*float64(i) + (slot-barW)/2
		y := top + plotH
		for _, st := range statuses {
			c := s.v[st]
			if c == 0 {
				continue
			}
			hgt := plotH * float64(c) / float64(most)
			y -= hgt
			fmt.Fprintf(w, `<path d="M%.2f %.2fh%.2fv%.2fh%.2fz" fill="%s"><title>runs %d-%d: %d %s</title></path>`, x, y, barW, hgt, -barW, colours[st], s.from, s.to, c, st)
		}
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`, left-8, top+12, num(most))
	fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="end">0</text>`, left-8, top+plotH)
	if len(stacks) > 0 {
		first, last := stacks[0], stacks[len(stacks)-1]
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f">%s</text>`, left, height-8, "run "+strconv.Itoa(first.from))
		if len(stacks) > 1 {
			fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`, width-10, height-8, "run "+strconv.Itoa(last.to))
		}
		if group > 1 {
			fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`, left+plotW/2, height-8, fmt.Sprintf("%d runs a bar", group))
		}
	}
	fmt.Fprint(w, "</svg></figure>\n")
}

// clip shortens s to at most n runes, with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
