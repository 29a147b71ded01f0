package costreport_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/costreport"
)

// rat returns the exact value of a decimal's String, as a big.Rat.
func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("big.Rat cannot read %q", s)
	}
	return r
}

// TestDecimalFromFloatRecoversLiteral: a literal of at most 15 significant
// digits, read as the nearest double, comes back as the same decimal.
func TestDecimalFromFloatRecoversLiteral(t *testing.T) {
	for _, lit := range []string{"0.1", "0.2", "0.3", "76.724898", "1e-7", "-0.5", "123456789012345", "1.23456789012345e-300", "9.99999999999999e307", "0.000001", "5e-324"} {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			t.Fatal(err)
		}
		d, err := costreport.DecimalFromFloat(f)
		if err != nil {
			t.Fatal(err)
		}
		if rat(t, d.String()).Cmp(rat(t, lit)) != 0 {
			t.Errorf("%s: got %s", lit, d)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		m := r.Int64N(1e15)
		if r.IntN(2) == 0 {
			m = -m
		}
		exp := r.IntN(40) - 30
		lit := strconv.FormatInt(m, 10) + "e" + strconv.Itoa(exp)
		f, _ := strconv.ParseFloat(lit, 64)
		d, err := costreport.DecimalFromFloat(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := costreport.ParseDecimal(lit)
		if err != nil {
			t.Fatal(err)
		}
		if d.Cmp(want) != 0 || d.String() != want.String() {
			t.Fatalf("%s: got %s, want %s", lit, d, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := costreport.DecimalFromFloat(f); !errors.Is(err, costreport.ErrNotDecimal) {
			t.Errorf("%v: %v", f, err)
		}
	}
}

// TestDecimalAdd: sums of random decimals, past the int64 range too, equal
// big.Rat's, whatever the order of the terms.
func TestDecimalAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var sum, rev costreport.Decimal
		want := new(big.Rat)
		terms := make([]costreport.Decimal, 1+r.IntN(30))
		for i := range terms {
			lit := strconv.FormatInt(r.Int64N(math.MaxInt64)-r.Int64N(math.MaxInt64), 10) + "e" + strconv.Itoa(r.IntN(50)-30)
			d, err := costreport.ParseDecimal(lit)
			if err != nil {
				t.Fatal(err)
			}
			terms[i] = d
			want.Add(want, rat(t, lit))
			sum = sum.Add(d)
		}
		for i := len(terms) - 1; i >= 0; i-- {
			rev = rev.Add(terms[i])
		}
		if rat(t, sum.String()).Cmp(want) != 0 {
			t.Fatalf("sum %s, want %s", sum, want.FloatString(40))
		}
		if sum.Cmp(rev) != 0 || sum.String() != rev.String() {
			t.Fatalf("sum depends on order: %s and %s", sum, rev)
		}
		if sum.Sign() != want.Sign() {
			t.Fatalf("sign of %s: %d", sum, sum.Sign())
		}
	}
}

func TestDecimalText(t *testing.T) {
	for _, tc := range []struct {
		in       string
		decimals int
		want     string
	}{
		{"0", 0, "0"},
		{"0", 2, "0.00"},
		{"-0", 0, "0"},
		{"3", 2, "3.00"},
		{"0.125", 2, "0.125"},
		{"-0.5", 0, "-0.5"},
		{"1e-7", 0, "0.0000001"},
		{"1.50e1", 0, "15"},
		{"12.3400", 6, "12.340000"},
		{"1e30", 0, "1000000000000000000000000000000"},
		{"-123456789012345678901234567890.25", 3, "-123456789012345678901234567890.250"},
		{"-9223372036854775808", 0, "-9223372036854775808"},
	} {
		d, err := costreport.ParseDecimal(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := d.Text(tc.decimals); got != tc.want {
			t.Errorf("%s Text(%d) = %q, want %q", tc.in, tc.decimals, got, tc.want)
		}
		if tc.decimals == 0 && d.String() != tc.want {
			t.Errorf("%s String() = %q", tc.in, d)
		}
		if d.Neg().Neg().Cmp(d) != 0 || d.Add(d.Neg()).Sign() != 0 || d.Neg().Sign() != -d.Sign() {
			t.Errorf("%s: Neg", tc.in)
		}
	}
	for _, bad := range []string{"", "-", "1.", ".5", "01", "1e", "1e+", "1e+-2", "1e-+2", "abc", "NaN", "Inf", "1_000", " 1", "1e9999999", "0x10"} {
		if _, err := costreport.ParseDecimal(bad); !errors.Is(err, costreport.ErrNotDecimal) {
			t.Errorf("ParseDecimal(%q): %v", bad, err)
		}
	}
	a, _ := costreport.ParseDecimal("0.30")
	b, _ := costreport.ParseDecimal("3e-1")
	c, _ := costreport.ParseDecimal("0.3000000000000000000001")
	if a != b || a.Cmp(b) != 0 || a.Cmp(c) != -1 || c.Cmp(a) != 1 {
		t.Errorf("Cmp: %s %s %s", a, b, c)
	}
	if f := c.Float64(); f != 0.3 {
		t.Errorf("Float64 %v", f)
	}
	if j, _ := c.MarshalJSON(); string(j) != "0.3000000000000000000001" {
		t.Errorf("MarshalJSON %s", j)
	}
	if strings.Contains(a.String(), "e") {
		t.Errorf("exponent in %s", a)
	}
}

// BenchmarkCostSum is the per-row cost of exact summing: the shortest
// decimal of a double, added to a running sum.
func BenchmarkCostSum(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	costs := make([]float64, 1024)
	for i := range costs {
		costs[i] = float64(r.Int64N(1e8)) / 1e6
	}
	var sum costreport.Decimal
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d, err := costreport.DecimalFromFloat(costs[i%len(costs)])
		if err != nil {
			b.Fatal(err)
		}
		sum = sum.Add(d)
	}
	_ = sum
}

// FuzzParseDecimal holds ParseDecimal to math/big: it accepts exactly the
// JSON number literals (with exponents of at most six digits), its value is
// the literal's, String reads back as the same value, and adding another
// parsed decimal is exact.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "12.50", "1e-7", "3E+2", "-1.5e300", "0.1", "9223372036854775807", "1e1000000", "01", "1.", ".5", "1e", "--1", "1e+0000005"} {
		f.Add(s, "0.001")
	}
	f.Fuzz(func(t *testing.T, s, other string) {
		d, err := costreport.ParseDecimal(s)
		isNumber := jsonNumber.MatchString(s)
		if err != nil {
			if isNumber && len(strings.TrimLeft(exponentOf(s), "0")) <= 6 {
				t.Fatalf("%q refused: %v", s, err)
			}
			return
		}
		if !isNumber {
			t.Fatalf("%q accepted as %s", s, d)
		}
		if len(strings.TrimLeft(exponentOf(s), "0")) > 3 || len(strings.TrimLeft(exponentOf(other), "0")) > 3 || len(other) > 64 {
			return // values of a thousand digits and more: slow to compare, no new path
		}
		want, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("%q accepted, but big.Rat refuses it", s)
		}
		got, ok := new(big.Rat).SetString(d.String())
		if !ok || got.Cmp(want) != 0 {
			t.Fatalf("%q parsed as %s", s, d)
		}
		e, err := costreport.ParseDecimal(other)
		if err != nil {
			return
		}
		sum, _ := new(big.Rat).SetString(d.Add(e).String())
		wantSum, _ := new(big.Rat).SetString(other)
		if sum == nil || wantSum == nil || sum.Cmp(wantSum.Add(wantSum, want)) != 0 {
			t.Fatalf("%q + %q = %s", s, other, d.Add(e))
		}
	})
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// exponentOf returns the digits of s's exponent, "" when it has none.
func exponentOf(s string) string {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return ""
	}
	return strings.TrimLeft(s[i+1:], "+-")
}
