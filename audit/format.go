package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/convbatch/convbatch/internal/jsonw"
)

// Header is what a printed audit names besides its result: the OUT
// audited, the keyring, and the run that committed the new verdicts.
type Header struct {
	Out string `json:"out"`
	// Keyring is the keyring's path as given, KeyringSHA256 its digest,
	// KeyringFormat 1 or 2.
	Keyring       string `json:"keyring"`
	KeyringSHA256 string `json:"keyring_sha256"`
	KeyringFormat int    `json:"keyring_format"`
	// Since is --since as given.
	Since string `json:"since,omitempty"`
	// WarnExpiry is --warn-expiry as given.
	WarnExpiry string `json:"warn_expiry,omitempty"`
	// CommittedRun is the run the audit committed, 0 when it committed
	// nothing (no verdict changed).
	CommittedRun int `json:"committed_run"`
}

// statuses are the verdicts in the order they are printed.
var statuses = []string{"valid", "invalid", "incomplete"}

// WriteJSON writes the audit as one JSON object: the header's members
// and the result's. The lists that grow with the receipts (changes,
// at_margin_zero) are written element by element, last: an audit that
// changes 256,000 verdicts never holds their JSON whole (it took 640 MB
// when the object went through one generic map).
func WriteJSON(w io.Writer, h *Header, r *Result, extra map[string]any) error {
	rest := *r
	rest.Changes, rest.AtMarginZero = nil, nil
	out := map[string]any{}
	for _, v := range []any{h, &rest} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return err
		}
	}
	maps.Copy(out, extra)
	delete(out, "changes")
	delete(out, "at_margin_zero")
	head, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(bytes.TrimSuffix(head, []byte("\n}")))
	writeJSONList(bw, "changes", r.Changes, func(b []byte, c **Change) []byte { return appendChangeJSON(b, *c) })
	writeJSONList(bw, "at_margin_zero", r.AtMarginZero, func(b []byte, p *Position) []byte {
		b = append(b, "{\n"...)
		return append(appendPositionJSON(b, p), "\n    }"...)
	})
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// writeJSONList writes `,"name": [...]` into an object WriteJSON writes,
// one element at a time, each as appendElem appends it: as
// json.MarshalIndent would indent it in the object (TestAppendJSON holds
// them to that), a tenth of its cost (0.8 s for 256k changes).
func writeJSONList[T any](bw *bufio.Writer, name string, list []T, appendElem func([]byte, *T) []byte) {
	fmt.Fprintf(bw, ",\n  %q: [", name)
	var b []byte
	for i := range list {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		b = appendElem(b[:0], &list[i])
		bw.Write(b)
	}
	if len(list) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteByte(']')
}

// appendPositionJSON appends p's members, one a line at the indentation
// of an element of a list of WriteJSON's object.
func appendPositionJSON(b []byte, p *Position) []byte {
	b = append(b, `      "run": `...)
	b = strconv.AppendInt(b, int64(p.Run), 10)
	b = append(b, ",\n      \"file\": "...)
	b = jsonw.AppendString(b, p.File)
	b = append(b, ",\n      \"line\": "...)
	return strconv.AppendInt(b, p.Line, 10)
}

// appendChangeJSON appends c as an element of the list "changes".
func appendChangeJSON(b []byte, c *Change) []byte {
	b = append(b, "{\n"...)
	b = appendPositionJSON(b, &c.Position)
	b = append(b, ",\n      \"was_status\": "...)
	b = jsonw.AppendString(b, string(c.WasStatus))
	b = append(b, ",\n      \"was_reasons\": "...)
	b = appendJSONStrings(b, c.WasReasons)
	b = append(b, ",\n      \"status\": "...)
	b = jsonw.AppendString(b, string(c.Status))
	b = append(b, ",\n      \"reasons\": "...)
	b = appendJSONStrings(b, c.Reasons)
	b = append(b, ",\n      \"causes\": "...)
	b = appendJSONStrings(b, c.Causes)
	return append(b, "\n    }"...)
}

// appendJSONStrings appends ss as a list member's value at the
// indentation of appendChangeJSON's members.
func appendJSONStrings(b []byte, ss []string) []byte {
	switch {
	case ss == nil:
		return append(b, "null"...)
	case len(ss) == 0:
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n        "...)
		b = jsonw.AppendString(b, s)
	}
	return append(b, "\n      ]"...)
}

// WriteTable writes the audit as text tables.
func WriteTable(w io.Writer, h *Header, r *Result) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("audit of %s under keyring %s (sha256 %s, format %d): %s receipts held over %d runs\n",
		h.Out, h.Keyring, short(h.KeyringSHA256), h.KeyringFormat, num(sum(r.Held)), r.Runs)
	p("re-judged %s", num(r.Rejudged))
	if r.OutsideSince > 0 {
		p(", %s before --since %s left as they are", num(r.OutsideSince), h.Since)
	}
	if r.NotRejudged > 0 {
		p(", %s not re-judged (their state lines lack the keys' facts: written by a convbatch before issue 43; runs %s)", num(r.NotRejudged), runList(r.NotRejudgedRuns))
	}
	p("\n\n%-12s %12s %12s\n", "verdict", "held", "now")
	for _, s := range statuses {
		p("%-12s %12s %12s\n", s, num(r.Held[s]), num(r.Verdicts[s]))
	}
	if len(r.Reasons) > 0 {
		p("\n%-28s %12s\n", "reason (re-judged)", "receipts")
		for _, code := range byCount(r.Reasons) {
			p("%-28s %12s\n", code, num(r.Reasons[code]))
		}
	}
	p("\nchanged verdicts: %s\n", num(int64(len(r.Changes))))
	for _, c := range r.Changes {
		p("  run %d %s:%d %s -> %s (%s): %s\n", c.Run, c.File, c.Line, c.WasStatus, c.Status, strings.Join(c.Reasons, ","), strings.Join(c.Causes, "; "))
	}
	p("\n%-16s %-20s %-9s %-16s %10s  %s\n", "key", "id", "role", "agent", "uses", "by status")
	for _, k := range r.Keys {
		p("%-16s %-20s %-9s %-16s %10s  %s\n", short(k.Fingerprint), dash(k.KeyID), k.Role, dash(k.Agent), num(k.Uses), countList(k.ByStatus))
	}
	p("\n%-20s %12s %12s  %s\n", "agent", "statements", "valid sigs", "keys by status")
	for _, a := range r.Agents {
		p("%-20s %12s %12s  %s\n", a.Agent, num(a.Statements), num(a.ValidSignatures), countList(a.ByStatus))
	}
	p("\n%-6s %-8s %-20s %10s %10s %10s %8s %8s\n", "run", "command", "committed_at", "valid", "invalid", "incomplete", "changed", "not re-judged")
	for _, n := range r.Nights {
		p("%-6d %-8s %-20s %10s %10s %10s %8s %8s\n", n.Run, n.Command, dash(n.CommittedAt), num(n.Verdicts["valid"]), num(n.Verdicts["invalid"]), num(n.Verdicts["incomplete"]), num(n.Changed), num(n.NotRejudged))
	}
	p("\nquorum margin (distinct agents with a valid statement, less k)\n")
	for _, m := range slices.Sorted(maps.Keys(r.Margin)) {
		p("  %+4d %12s\n", m, num(r.Margin[m]))
	}
	p("valid receipts at margin 0 (one lost key from failing): %s\n", num(int64(len(r.AtMarginZero))))
	for i, pos := range r.AtMarginZero {
		if i == 20 {
			p("  ... %d more (--format json lists them all)\n", len(r.AtMarginZero)-20)
			break
		}
		p("  run %d %s:%d\n", pos.Run, pos.File, pos.Line)
	}
	if h.WarnExpiry != "" {
		p("\nexpiring within %s: %d\n", h.WarnExpiry, len(r.Expiring))
		for _, e := range r.Expiring {
			name := e.What
			if e.KeyID != "" || e.What != "keyring" {
				name += " " + keyName(e.KeyID, e.Fingerprint)
			}
			p("  %s%s expires %s (in %s)\n", name, agentOf(e.Agent), e.At, e.In)
		}
	}
	if h.CommittedRun > 0 {
		p("\nthe new verdicts are committed as run %d\n", h.CommittedRun)
	}
	return bw.Flush()
}

func agentOf(a string) string {
	if a == "" {
		return ""
	}
	return " of agent " + a
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// byCount returns m's keys by count, highest first, then by name.
func byCount(m map[string]int64) []string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return int(min(max(m[b]-m[a], -1), 1)) })
	return keys
}

// countList is "pinned 12, revoked 3", by count.
func countList(m map[string]int64) string {
	var parts []string
	for _, k := range byCount(m) {
		parts = append(parts, k+" "+num(m[k]))
	}
	return strings.Join(parts, ", ")
}

func runList(m map[int]int64) string {
	var parts []string
	for _, run := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, strconv.Itoa(run))
	}
	return strings.Join(parts, ",")
}

func short(fp string) string {
	if len(fp) > 16 {
		return fp[:16]
	}
	return dash(fp)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// num formats n with thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
