package chartcheck

import (
	"strings"
	"testing"
)

// TestCheck: each kind of breakage is reported, and a sound chart gives
// nothing.
func TestCheck(t *testing.T) {
	frame := Box{0, 0, 960, 400}
	label := func(s string, l, top, w float64) Text { return Text{s, Box{l, top, l + w, top + 14}} }
	bar := func(l, top, w, h float64) Shape { return Shape{"rgb(78, 121, 167)", Box{l, top, l + w, top + h}} }
	for _, tc := range []struct {
		name string
		c    Chart
		want []string // substrings, one per problem
	}{
		{"sound", Chart{Bars: "vertical", Box: frame,
			Texts:  []Text{label("2026", 100, 380, 30), label("2027", 140, 380, 30), label("cost", 2, 200, 12)},
			Shapes: []Shape{bar(100, 100, 2, 270), bar(110, 100, 5, 270)}}, nil},
		{"clipped on the left", Chart{Bars: "horizontal", Box: frame,
			Texts: []Text{label("agent-researcher", -8, 20, 90)}}, []string{`label "agent-researcher" leaves the chart`}},
		{"past the bottom", Chart{Bars: "vertical", Box: frame,
			Texts: []Text{label("2026", 100, 392, 30)}}, []string{`label "2026" leaves the chart`}},
		{"under a bar", Chart{Bars: "horizontal", Box: frame,
			Texts: []Text{label("orchestrator", 10, 20, 70)}, Shapes: []Shape{bar(60, 20, 300, 14)}}, []string{`label "orchestrator" lies under a bar`}},
		{"labels collide", Chart{Bars: "vertical", Box: frame,
			Texts: []Text{label("2026-03-01", 100, 380, 55), label("2026-03-02", 130, 380, 55)}}, []string{`labels "2026-03-01" and "2026-03-02" overlap`}},
		{"hairline", Chart{Bars: "vertical", Box: frame,
			Shapes: []Shape{bar(100, 100, 0.5, 270)}}, []string{"1 of 1 bars are under 2 px thick, the thinnest 0.50 px"}},
		{"thin horizontal", Chart{Bars: "horizontal", Box: frame,
			Shapes: []Shape{bar(100, 100, 300, 1.5), bar(100, 200, 0, 12)}}, []string{"1 of 2 bars are under 2 px thick, the thinnest 1.50 px"}},
		{"no size", Chart{Box: Box{10, 10, 10, 10}}, []string{"the chart has no size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check([]Chart{tc.c})
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q, want %q", got[i], w)
				}
			}
		})
	}
}
