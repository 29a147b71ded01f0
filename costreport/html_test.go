package costreport_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/costreport"
)

// TestWriteHTML: the page is self-contained (names no URL at all), holds
// the three charts as inline SVG with drawn paths and the tables, escapes
// key values, and is the same bytes twice.
func TestWriteHTML(t *testing.T) {
	out := writeTestOut(t)
	hostile := `<script>alert("x")</script>`
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00002.parquet"), []usageRow{
		{conv: "c9", role: "assistant", agent: sp(hostile), provider: sp("p&q"), in: ip(5), out: ip(1), cost: fp(0.1), at: "2026-03-03T10:00:00Z"},
	})
	rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Role}, costreport.WithOverview())
	if err != nil {
		t.Fatal(err)
	}
	var page, again bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&again); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if html != again.String() {
		t.Error("two writes differ")
	}
	if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.HasSuffix(html, "</html>\n") {
		t.Errorf("not one HTML document: %.200q", html)
	}
	for _, banned := range []string{"http:", "https:", "//", "<script", "<link", "src=", "href=", "url(", "@import", "<?xml"} {
		if strings.Contains(strings.ReplaceAll(html, "&lt;script", ""), banned) {
			t.Errorf("page holds %q", banned)
		}
	}
	if n := strings.Count(html, "<svg "); n != 3 {
		t.Errorf("%d svg charts, want 3", n)
	}
	if n := strings.Count(html, "<path "); n < 30 {
		t.Errorf("%d svg paths", n)
	}
	for _, want := range []string{
		"Cost over time", "Top 10 agents by cost", "Tokens by provider",
		"Cost by provider", "Cost by agent", "Cost by day and provider", "Cost by role",
		"rows, by day, oldest first (unknown last), then by cost.", "rows, by cost, highest first.",
		"&lt;script&gt;", "p&amp;q", "1.3500001", // the exact total, 1.25 + 1e-7 + 0.1
		"font-family:'Liberation Sans',Arial,Helvetica,sans-serif;",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	// By provider: its table is the overview's, not shown twice; without an
	// overview only the totals and the table.
	rep, err = costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Provider}, costreport.WithOverview())
	if err != nil {
		t.Fatal(err)
	}
	page.Reset()
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), "<h2>Cost by provider</h2>"); n != 1 {
		t.Errorf("provider table shown %d times", n)
	}
	rep.Overview = nil
	page.Reset()
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "<svg") || !strings.Contains(page.String(), "<h2>Cost by provider</h2>") {
		t.Errorf("page without overview:\n%s", page.String())
	}
}

// TestWriteHTMLEmpty: a usage table with no rows gives a page with no chart
// and empty tables, not an error.
func TestWriteHTMLEmpty(t *testing.T) {
	out := t.TempDir()
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), nil)
	rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Provider}, costreport.WithOverview())
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "<svg") || !strings.Contains(page.String(), "0 rows") {
		t.Errorf("empty page:\n%s", page.String())
	}
}

// TestWriteHTMLCharts: charts are drawn for rows without costs, and for
// more providers than the charts name; rows without dates are said apart.
func TestWriteHTMLCharts(t *testing.T) {
	out := t.TempDir()
	var rows []usageRow
	for i := range 12 {
		p := fmt.Sprintf("provider-%02d", i)
		rows = append(rows, usageRow{conv: "c1", role: "assistant", agent: sp("a"), provider: &p, in: ip(int64(i)), cost: nil})
	}
	writeUsage(t, filepath.Join(out, "tables", "usage", "part-00000.parquet"), rows)
	rep, err := costreport.Aggregate(context.Background(), out, []costreport.Key{costreport.Provider}, costreport.WithOverview())
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	// No row has a date: no cost-over-time chart, a line saying why and
	// the undated cost; the other two charts.
	if n := strings.Count(html, "<svg "); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	for _, want := range []string{costreport.OtherLabel, "provider-00", "provider-08",
		"No message with usage has a created_at", "Not on the chart: 12 messages with no created_at, costing 0; "} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
