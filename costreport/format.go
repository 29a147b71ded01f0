package costreport

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// metricNames are the metric columns of every format, in order.
var metricNames = []string{"messages", "tokens_input", "tokens_output", "cost"}

// TotalLabel names the total row in the table format.
const TotalLabel = "total"

// omittedLabel names the row of the groups Top left out.
func omittedLabel(n int) string {
	if n == 1 {
		return "(1 more group)"
	}
	return fmt.Sprintf("(%d more groups)", n)
}

// WriteTable writes the report as an aligned text table: a header, one line
// per group, after Top a line "(N more groups)" summing those left out, a
// rule and the total. Key columns are left-aligned, numbers
// right-aligned. Costs are exact (see Row.Cost), every one with as many
// decimals as the longest needs (at least 2), so the points line up and
// nothing is rounded. Key values holding control characters or invalid
// UTF-8 are shown Go-quoted so a line stays a line.
func (r *Report) WriteTable(w io.Writer) error {
	decimals := max(2, r.Total.Cost.Decimals())
	for i := range r.Rows {
		decimals = max(decimals, r.Rows[i].Cost.Decimals())
	}
	cells := make([][]string, 0, len(r.Rows)+3)
	fields := r.Fields()
	header := append(slices.Clone(fields), metricNames...)
	cells = append(cells, header)
	line := func(values []string, row *Row) []string {
		out := make([]string, 0, len(header))
		for _, v := range values {
			out = append(out, printable(v))
		}
		return append(out, strconv.FormatInt(row.Messages, 10), strconv.FormatInt(row.TokensInput, 10),
			strconv.FormatInt(row.TokensOutput, 10), row.Cost.Text(decimals))
	}
	for i := range r.Rows {
		cells = append(cells, line(r.Rows[i].Values, &r.Rows[i]))
	}
	if r.OmittedGroups > 0 {
		keys := make([]string, len(fields))
		keys[0] = omittedLabel(r.OmittedGroups)
		cells = append(cells, line(keys, &r.Omitted))
	}
	totalKeys := make([]string, len(fields))
	totalKeys[0] = TotalLabel
	cells = append(cells, line(totalKeys, &r.Total))

	widths := make([]int, len(header))
	for _, row := range cells {
		for j, c := range row {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	bw := bufio.NewWriter(w)
	var b strings.Builder
	emit := func(row []string) {
		b.Reset()
		for j, c := range row {
			pad := strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c))
			if j > 0 {
				b.WriteString("  ")
			}
			if j < len(fields) && !numericField(fields[j]) {
				b.WriteString(c)
				if j < len(row)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
		bw.WriteString(b.String())
	}
	for i, row := range cells {
		if i == len(cells)-1 {
			total := 0
			for _, wd := range widths {
				total += wd
			}
			bw.WriteString(strings.Repeat("-", total+2*(len(widths)-1)) + "\n")
		}
		emit(row)
	}
	return bw.Flush()
}

// printable returns s, or its Go-quoted form when it holds a control
// character or invalid UTF-8.
func printable(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// WriteCSV writes the report as CSV (RFC 4180, encoding/csv): a header of
// the key fields (Report.Fields) and metrics, then one record per group. The total is not
// written, so the file stays a plain relation; it is the sum of the
// records (after Top, the kept groups only). Costs are exact decimals in plain notation (Decimal.String).
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := r.Fields()
	if err := cw.Write(append(slices.Clone(header), metricNames...)); err != nil {
		return err
	}
	rec := make([]string, 0, len(header)+len(metricNames))
	for i := range r.Rows {
		row := &r.Rows[i]
		rec = append(rec[:0], row.Values...)
		rec = append(rec, strconv.FormatInt(row.Messages, 10), strconv.FormatInt(row.TokensInput, 10),
			strconv.FormatInt(row.TokensOutput, 10), row.Cost.String())
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// JSON shapes of WriteJSON.
type (
	jsonReport struct {
		By      []Key        `json:"by"`
		Since   string       `json:"since,omitempty"`
		Until   string       `json:"until,omitempty"`
		Rows    []jsonGroup  `json:"rows"`
		Omitted *jsonOmitted `json:"omitted,omitempty"`
		Total   jsonMetrics  `json:"total"`
	}
	// jsonOmitted sums the groups Top left out.
	jsonOmitted struct {
		Groups int `json:"groups"`
		jsonMetrics
	}
	// jsonGroup is an object of the key values then the metrics.
	jsonGroup struct {
		fields []string
		values []string
		jsonMetrics
	}
	jsonMetrics struct {
		Messages     int64   `json:"messages"`
		TokensInput  int64   `json:"tokens_input"`
		TokensOutput int64   `json:"tokens_output"`
		Cost         Decimal `json:"cost"`
	}
)

func metrics(r *Row) jsonMetrics {
	return jsonMetrics{Messages: r.Messages, TokensInput: r.TokensInput, TokensOutput: r.TokensOutput, Cost: r.Cost}
}

// MarshalJSON writes the key values first, named by their fields, then the
// metrics. A source_line is a number (a null one the string None).
func (g jsonGroup) MarshalJSON() ([]byte, error) {
	var b []byte
	b = append(b, '{')
	for i, f := range g.fields {
		name, _ := json.Marshal(f)
		value, err := json.Marshal(g.values[i])
		if err != nil {
			return nil, err
		}
		if _, nerr := strconv.ParseInt(g.values[i], 10, 64); numericField(f) && nerr == nil {
			value = []byte(g.values[i])
		}
		b = append(append(append(append(b, name...), ':'), value...), ',')
	}
	m, err := json.Marshal(g.jsonMetrics)
	if err != nil {
		return nil, err
	}
	return append(b, m[1:]...), nil
}

// WriteJSON writes the report as one JSON object:
//
//	{"by": ["provider"],
//	 "rows": [{"provider": "openai", "messages": 2, "tokens_input": 10, "tokens_output": 3, "cost": 0.25}, ...],
//	 "total": {"messages": 2, "tokens_input": 10, "tokens_output": 3, "cost": 0.25}}
//
// With WithDateRange, "since" and "until" (after "by") give its bounded
// ends as YYYY-MM-DD. After Top, "omitted" (before "total") sums the groups left out:
// {"groups": 3, "messages": ..., "cost": ...}; it is absent when none
// were. Each row object names its key values by their fields (by conversation:
// "conversation", "source_file" and "source_line", a number); costs are JSON
// numbers holding the exact decimal (Decimal.String), so a reader that
// parses them as doubles gets the double nearest to the exact sum.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{By: r.Keys, Since: r.Since, Until: r.Until, Rows: make([]jsonGroup, len(r.Rows)), Total: metrics(&r.Total)}
	if r.OmittedGroups > 0 {
		out.Omitted = &jsonOmitted{Groups: r.OmittedGroups, jsonMetrics: metrics(&r.Omitted)}
	}
	fields := r.Fields()
	for i := range r.Rows {
		out.Rows[i] = jsonGroup{fields: fields, values: r.Rows[i].Values, jsonMetrics: metrics(&r.Rows[i])}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}
