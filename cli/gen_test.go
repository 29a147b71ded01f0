package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/gen"
)

// TestGenDates: gen's summary and expect file say how the archive is
// dated: a night's by default and with --dates night (faults or not), the
// spread with --faults or --dates spread; --nights dates night N N-1 days
// after the first.
func TestGenDates(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		dates   gen.Dates
		day     string
		summary string
	}{
		{"default.jsonl", nil, gen.DatesNight, "2026-11-29", "dated around 2026-11-29"},
		{"faults.jsonl", []string{"--faults", "0.1"}, gen.DatesSpread, "", "dates spread over years"},
		{"spread.jsonl", []string{"--dates", "spread"}, gen.DatesSpread, "", "dates spread over years"},
		{"night-faults.jsonl", []string{"--faults", "0.1", "--dates", "night"}, gen.DatesNight, "2026-11-29", "dated around 2026-11-29"},
		{"short.jsonl", []string{"--profile", "short", "--dates", "spread"}, gen.DatesSpread, "", "dates spread over years"},
	} {
		path := filepath.Join(dir, tc.name)
		r := convbatch(t, nil, append([]string{"gen", "-o", path, "--conversations", "12"}, tc.args...)...)
		if r.code != ExitOK || !strings.Contains(r.stderr, tc.summary) {
			t.Errorf("gen %s: exit %d, summary %q does not say %q", tc.name, r.code, r.stderr, tc.summary)
			continue
		}
		var exp gen.Expect
		readJSON(t, path+".expect.json", &exp)
		if exp.Dates != tc.dates || exp.Day != tc.day {
			t.Errorf("gen %s: expect says dates %q, day %q; want %q, %q", tc.name, exp.Dates, exp.Day, tc.dates, tc.day)
		}
	}
	set := filepath.Join(dir, "nights")
	r := convbatch(t, nil, "gen", "-o", set, "--nights", "3", "--files-per-night", "1", "--conversations", "50")
	if r.code != ExitOK || !strings.Contains(r.stderr, "dated around 2026-11-29 to 2026-12-01") {
		t.Fatalf("gen --nights: exit %d: %s", r.code, r.stderr)
	}
	var ne gen.NightsExpect
	readJSON(t, filepath.Join(set, "expect.json"), &ne)
	if ne.Dates != gen.DatesNight || ne.Files[1].Day != "2026-11-30" {
		t.Errorf("gen --nights: dates %q, files %+v", ne.Dates, ne.Files)
	}
}
