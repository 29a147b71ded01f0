package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/chartcheck"
	"github.com/convbatch/convbatch/verify"
)

// pageResult is an audit of n nights: receipts by night growing and
// shrinking, nights with none, a key id of 128 bytes, hostile names.
func pageResult(n int) (*Header, *Result) {
	hostile := `<script>alert("x")</script>`
	r := &Result{Runs: n, Held: map[string]int64{"valid": 900, "invalid": 90, "incomplete": 10},
		Verdicts: map[string]int64{"valid": 880, "invalid": 110, "incomplete": 10}, Rejudged: 1000,
		Reasons: map[string]int64{"key-revoked": 20, "transcript-missing": 10}, Margin: map[int]int64{-2: 3, -1: 40, 0: 300, 1: 2000, 2: 150000, 5: 1}}
	start := time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		v := map[string]int64{"valid": int64(500 + (i*37)%900), "invalid": int64(i % 13), "incomplete": int64(i % 5)}
		if i%97 == 0 {
			v = map[string]int64{}
		}
		r.Nights = append(r.Nights, Night{Run: i, Command: "run", CommittedAt: start.AddDate(0, 0, i).Format(time.RFC3339), Verdicts: v})
	}
	for i := range 14 {
		id := fmt.Sprintf("key-%02d", i)
		if i == 3 {
			id = strings.Repeat("k", 128)
		}
		r.Keys = append(r.Keys, KeyCount{Fingerprint: strings.Repeat("ab", 32), KeyID: id, Role: "statement", Agent: "agent-" + hostile, Uses: int64(100000 / (i + 1)), ByStatus: map[string]int64{"pinned": 5}})
	}
	r.Agents = []AgentCount{{Agent: hostile, Statements: 3, ValidSignatures: 2, ByStatus: map[string]int64{"revoked": 1}}}
	r.Changes = []*Change{{Position: Position{Run: 2, File: hostile + ".jsonl", Line: 4}, WasStatus: verify.StatusValid, Status: verify.StatusInvalid,
		Reasons: []string{"key-revoked"}, Causes: []string{"key k3 of agent " + hostile + " revoked, compromised since 2026-11-20T00:00:00Z"}}}
	return &Header{Out: "/data/" + hostile, Keyring: "k.json", KeyringSHA256: "00ff", KeyringFormat: 2, WarnExpiry: "30d"}, r
}

// TestWriteHTML: one self-contained document (no URL at all), three
// inline charts, every name escaped, nights grouped under 200 bars.
func TestWriteHTML(t *testing.T) {
	for _, n := range []int{1, 3, 1000} {
		h, r := pageResult(n)
		var page bytes.Buffer
		if err := WriteHTML(&page, h, r); err != nil {
			t.Fatal(err)
		}
		s := page.String()
		if !strings.HasPrefix(s, "<!DOCTYPE html>") || !strings.HasSuffix(s, "</html>\n") {
			t.Errorf("%d nights: not one HTML document", n)
		}
		if strings.Contains(s, "http") || strings.Contains(s, "<script>") {
			t.Errorf("%d nights: the page names a URL or holds a script", n)
		}
		if got := strings.Count(s, "<svg"); got != 3 {
			t.Errorf("%d nights: %d charts, want 3", n, got)
		}
		if n == 1000 && !strings.Contains(s, "5 runs a bar") {
			t.Errorf("1,000 nights are not grouped by 5 runs a bar")
		}
	}
}

// TestWriteHTMLInChromium: in a real browser, at 1, 3 and 1,000 nights,
// in the page's font and in a wider fallback, no chart label leaves its
// chart, lies under a bar or on another label, no bar is under 2 px, and
// the tallest stack of the nights' chart is at least half its height.
// CONVBATCH_KEEP_SCREENSHOT=DIR keeps a screenshot of each page there.
func TestWriteHTMLInChromium(t *testing.T) {
	bin := chartcheck.Chromium(t)
	for _, n := range []int{1, 3, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h, r := pageResult(n)
			var page bytes.Buffer
			if err := WriteHTML(&page, h, r); err != nil {
				t.Fatal(err)
			}
			layouts := chartcheck.Measure(t, bin, page.Bytes(), chartcheck.Options{Fonts: []string{"DejaVu Sans"}})
			for _, l := range layouts {
				if len(l.Charts) != 3 {
					t.Fatalf("font %q: %d charts, want 3", l.Font, len(l.Charts))
				}
				for _, p := range chartcheck.Check(l.Charts) {
					t.Errorf("font %q: %s", l.Font, p)
				}
				nights := l.Charts[0]
				stacks := map[float64]float64{}
				for _, s := range nights.Shapes {
					stacks[s.Box.Left] += s.Box.Height()
				}
				var tallest float64
				for _, hgt := range stacks {
					tallest = max(tallest, hgt)
				}
				if tallest < nights.Box.Height()/2 {
					t.Errorf("font %q: the tallest night is %.1f px of %.1f", l.Font, tallest, nights.Box.Height())
				}
				if len(stacks) == 0 || len(stacks) > maxNightBars {
					t.Errorf("font %q: %d bars for %d nights", l.Font, len(stacks), n)
				}
			}
			if dir := os.Getenv("CONVBATCH_KEEP_SCREENSHOT"); dir != "" {
				file := filepath.Join(t.TempDir(), "audit.html")
				if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				chartcheck.Run(t, bin, "file://"+file, "--screenshot="+filepath.Join(dir, fmt.Sprintf("audit-%d.png", n)),
					"--window-size=1100,1900", "--hide-scrollbars")
			}
		})
	}
}
