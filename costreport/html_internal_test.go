package costreport

import (
	"reflect"
	"testing"
)

func TestFillDays(t *testing.T) {
	for _, tc := range []struct {
		in    []string
		want  []string
		dense bool
	}{
		{[]string{"2026-02-27", "2026-03-02", UnknownDay}, []string{"2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02", UnknownDay}, true},
		{[]string{"2026-03-01"}, []string{"2026-03-01"}, true},
		{[]string{UnknownDay}, []string{UnknownDay}, true},
		{[]string{"2017-01-01", "2026-03-02"}, []string{"2017-01-01", "2026-03-02"}, false},
	} {
		got, dense := fillDays(tc.in)
		if !reflect.DeepEqual(got, tc.want) || dense != tc.dense {
			t.Errorf("fillDays(%v) = %v %v, want %v %v", tc.in, got, dense, tc.want, tc.dense)
		}
	}
}

func TestReadableTicks(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.1 + 0.2: "0.3", 2500: "2.5k", 1.5e6: "1.5M", 3e9: "3G", 1e-7: "0.0000001", -2000: "-2k"} {
		if got := readable(v); got != want {
			t.Errorf("readable(%v) = %q, want %q", v, got, want)
		}
	}
	for _, tick := range readableTicks(0, 0.7) {
		if len(tick.Label) > 4 {
			t.Errorf("tick label %q", tick.Label)
		}
	}
}
