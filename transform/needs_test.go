package transform

import (
	"errors"
	"strings"
	"testing"
)

// TestStandardMinimal pins, for each set of checks and tables, the exact
// handlers a Minimal registry runs, in order.
func TestStandardMinimal(t *testing.T) {
	const (
		core    = "core-json,core-document"
		warners = core + ",usage-metadata,tool-linkage,agent-context"
		conv    = core + ",images-inline,usage-metadata,tool-linkage,agent-context,transcript-hash,conversation-row"
		every   = core + ",images-inline,usage-metadata,tool-linkage,agent-context,transcript-hash,consensus-receipt"
	)
	for _, tc := range []struct {
		name   string
		opts   Options
		want   string
		errHas string
	}{
		// Not Minimal: every handler, as convbatch run and a library caller
		// who sets nothing.
		{"default", Options{}, every, ""},
		{"default extract", Options{Extract: true}, every + ",conversation-row", ""},
		{"default ignores tables", Options{Tables: []string{"usage"}}, every, ""},

		// convbatch extract: the warning handlers, and what the tables need.
		{"extract usage", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"usage"}}, warners, ""},
		{"extract tool_calls", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"tool_calls"}}, warners, ""},
		{"extract conversations", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"conversations"}}, conv, ""},
		{"extract usage,conversations", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"usage", "conversations"}}, conv, ""},
		{"extract transcripts", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"transcripts"}}, warners + ",transcript-hash", ""},
		{"extract receipts", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"receipts"}}, warners + ",transcript-hash,consensus-receipt", ""},
		{"extract all", Options{Minimal: true, Checks: CheckExtensions, Tables: []string{"usage", "conversations", "tool_calls", "receipts", "transcripts"}}, every + ",conversation-row", ""},

		// No optional check: only what the columns need.
		{"usage alone", Options{Minimal: true, Tables: []string{"usage"}}, core + ",usage-metadata", ""},
		{"tool_calls alone", Options{Minimal: true, Tables: []string{"tool_calls"}}, core + ",tool-linkage", ""},
		{"conversations alone", Options{Minimal: true, Tables: []string{"conversations"}}, conv, ""},
		{"transcripts alone", Options{Minimal: true, Tables: []string{"transcripts"}}, core + ",transcript-hash", ""},
		{"receipts alone", Options{Minimal: true, Tables: []string{"receipts"}}, core + ",agent-context,transcript-hash,consensus-receipt", ""},
		{"receipt_statements alone", Options{Minimal: true, Tables: []string{"receipt_statements"}}, core + ",agent-context,transcript-hash,consensus-receipt", ""},

		// convbatch hash and verify: no tables.
		{"hash", Options{Minimal: true, Checks: CheckTranscripts}, core + ",transcript-hash", ""},
		{"verify", Options{Minimal: true, Checks: CheckAll}, warners + ",transcript-hash,consensus-receipt", ""},
		{"receipts check", Options{Minimal: true, Checks: CheckReceipts}, core + ",agent-context,transcript-hash,consensus-receipt", ""},
		{"core only", Options{Minimal: true}, core, ""},

		{"unknown table", Options{Minimal: true, Tables: []string{"usage", "nope"}}, "", `unknown table "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, err := Standard(tc.opts).Resolve()
			if tc.errHas != "" {
				if err == nil || !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Resolve = %q, %v; want an error with %q", names(hs), err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(names(hs), ","); got != tc.want {
				t.Errorf("handlers\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRegistrySelect(t *testing.T) {
	r := NewRegistry()
	for _, f := range []fake{
		{name: "a"},
		{name: "b", requires: []string{"a"}},
		{name: "c", requires: []string{"b"}},
		{name: "d"},
		{name: "e", requires: []string{"d", "missing"}},
	} {
		r.Register(f)
	}
	for _, tc := range []struct {
		names  []string
		want   string
		errHas string
	}{
		{[]string{"c"}, "a,b,c", ""},
		{[]string{"d", "a"}, "a,d", ""},
		{[]string{"b", "b"}, "a,b", ""},
		{nil, "", ""},
		{[]string{"zz"}, "", `handler "zz" is not registered`},
		{[]string{"e"}, "", `handler "e" requires "missing"`},
	} {
		sel, err := r.Select(tc.names...)
		if tc.errHas != "" {
			if err == nil || !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("Select(%q) = %v; want an error with %q", tc.names, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q): %v", tc.names, err)
			continue
		}
		if got := strings.Join(sel.Names(), ","); got != tc.want {
			t.Errorf("Select(%q) = %s, want %s", tc.names, got, tc.want)
		}
	}
	// A registry that failed stays failed.
	bad := NewRegistry()
	bad.Register(fake{name: "a"})
	bad.Register(fake{name: "a"})
	if _, err := bad.Select("a"); err == nil {
		t.Error("Select on a registry with a duplicate succeeded")
	}
}
