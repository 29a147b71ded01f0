package costreport

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ErrNotDecimal is wrapped by the error for a cost that is not a finite
// number (NaN or an infinity, which no archive literal reads as) and by
// ParseDecimal's error for text that is not a decimal number.
var ErrNotDecimal = errors.New("not a decimal number")

// Decimal is an exact decimal number: an integer times 10^-scale. Costs are
// summed as Decimals, so a sum is exactly the sum of the decimals added,
// with no binary rounding. The zero value is 0. A Decimal is a value: Add
// returns a new one and never changes its operands. Compare Decimals with
// Cmp (or reflect.DeepEqual): == holds for equal values only while they
// fit in 64 bits.
type Decimal struct {
	small int64    // the integer when big is nil
	big   *big.Int // the integer when it does not fit in an int64; never modified
	scale int32    // digits after the decimal point, at least 0
}

// pow10 holds 10^0 to 10^18, the powers of ten that fit in an int64.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// DecimalFromFloat returns the shortest decimal that reads back as f (what
// strconv.FormatFloat(f, 'g', -1, 64) prints). For a double read from a
// decimal literal of at most 15 significant digits in the normal range,
// that is the literal itself: the usage table's float64 cost keeps the
// archive's digits, and this recovers them. f must be finite.
func DecimalFromFloat(f float64) (Decimal, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Decimal{}, fmt.Errorf("%w: %v", ErrNotDecimal, f)
	}
	if f == 0 {
		return Decimal{}, nil
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // -d.ddde±dd, at most 17 digits
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var m int64
	digits, i := 0, 0
	for ; b[i] != 'e'; i++ {
		if b[i] != '.' {
			m = m*10 + int64(b[i]-'0')
			digits++
		}
	}
	exp := 0
	for _, c := range b[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if b[i+1] == '-' {
		exp = -exp
	}
	if neg {
		m = -m
	}
	// The value is m × 10^(exp-digits+1).
	return scaled(m, exp-digits+1), nil
}

// scaled returns m × 10^e.
func scaled(m int64, e int) Decimal {
	if e <= 0 {
		return Decimal{small: m, scale: int32(-e)}.normal()
	}
	if e < len(pow10) {
		if v, ok := mul64(m, pow10[e]); ok {
			return Decimal{small: v}
		}
	}
	v := new(big.Int).Mul(big.NewInt(m), bigPow10(e))
	return Decimal{big: v}.normal()
}

// ParseDecimal parses a decimal number in the syntax of a JSON number
// ("-12.50", "1e-7", "3E+2"), exactly.
func ParseDecimal(s string) (Decimal, error) {
	bad := func() (Decimal, error) { return Decimal{}, fmt.Errorf("%w: %q", ErrNotDecimal, s) }
	t := s
	neg := strings.HasPrefix(t, "-")
	if neg {
		t = t[1:]
	}
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
		es := t[i+1:]
		eneg := strings.HasPrefix(es, "-")
		if eneg || strings.HasPrefix(es, "+") {
			es = es[1:]
		}
		if es == "" || !allDigits(es) || len(strings.TrimLeft(es, "0")) > 6 {
			return bad() // an exponent past a million digits is not a cost
		}
		exp, _ = strconv.Atoi(es)
		if eneg {
			exp = -exp
		}
	}
	intPart, frac, dot := strings.Cut(mant, ".")
	if intPart == "" || dot && frac == "" || !allDigits(intPart) || !allDigits(frac) || len(intPart) > 1 && intPart[0] == '0' {
		return bad()
	}
	v, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return bad()
	}
	if neg {
		v.Neg(v)
	}
	e := exp - len(frac)
	if e > 0 {
		v.Mul(v, bigPow10(e))
		e = 0
	}
	if -e > math.MaxInt32 {
		return bad()
	}
	return Decimal{big: v, scale: int32(-e)}.normal(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func bigPow10(e int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
}

// mul64 returns a×b and whether it fits in an int64 (b > 0).
func mul64(a, b int64) (int64, bool) {
	if a > math.MaxInt64/b || a < math.MinInt64/b {
		return 0, false
	}
	return a * b, true
}

// add64 returns a+b and whether it fits in an int64.
func add64(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}

// normal moves an integer that fits in an int64 out of big and drops
// trailing zeros of the fraction, so that equal values are equal structs.
func (d Decimal) normal() Decimal {
	if d.big != nil {
		if !d.big.IsInt64() {
			if d.scale == 0 {
				return d
			}
			q, r := new(big.Int), new(big.Int)
			ten := big.NewInt(10)
			v := d.big
			for d.scale > 0 {
				q.QuoRem(v, ten, r)
				if r.Sign() != 0 {
					break
				}
				v = new(big.Int).Set(q)
				d.scale--
			}
			d.big = v
			if !v.IsInt64() {
				return d
			}
		}
		d.small, d.big = d.big.Int64(), nil
	}
	if d.small == 0 {
		return Decimal{}
	}
	for d.scale > 0 && d.small%10 == 0 {
		d.small /= 10
		d.scale--
	}
	return d
}

// bigInt returns d's integer as a new big.Int.
func (d Decimal) bigInt() *big.Int {
	if d.big != nil {
		return new(big.Int).Set(d.big)
	}
	return big.NewInt(d.small)
}

// Add returns d + e, exactly.
func (d Decimal) Add(e Decimal) Decimal {
	if d.big == nil && e.big == nil {
		if d.scale == e.scale {
			if s, ok := add64(d.small, e.small); ok {
				return Decimal{small: s, scale: d.scale}.normal()
			}
		} else {
			lo, hi := d, e
			if lo.scale > hi.scale {
				lo, hi = hi, lo
			}
			if diff := hi.scale - lo.scale; int(diff) < len(pow10) {
				if m, ok := mul64(lo.small, pow10[diff]); ok {
					if s, ok := add64(m, hi.small); ok {
						return Decimal{small: s, scale: hi.scale}.normal()
					}
				}
			}
		}
	}
	a, b := d.bigInt(), e.bigInt()
	scale := max(d.scale, e.scale)
	if d.scale < scale {
		a.Mul(a, bigPow10(int(scale-d.scale)))
	}
	if e.scale < scale {
		b.Mul(b, bigPow10(int(scale-e.scale)))
	}
	return Decimal{big: a.Add(a, b), scale: scale}.normal()
}

// Neg returns -d.
func (d Decimal) Neg() Decimal {
	if d.big != nil {
		return Decimal{big: new(big.Int).Neg(d.big), scale: d.scale}.normal()
	}
	if d.small == math.MinInt64 {
		return Decimal{big: new(big.Int).Neg(big.NewInt(d.small)), scale: d.scale}
	}
	return Decimal{small: -d.small, scale: d.scale}
}

// Sign returns -1, 0 or +1 as d is negative, zero or positive.
func (d Decimal) Sign() int {
	if d.big != nil {
		return d.big.Sign()
	}
	switch {
	case d.small < 0:
		return -1
	case d.small > 0:
		return 1
	}
	return 0
}

// Cmp compares d and e, returning -1, 0 or +1 as d < e, d == e or d > e.
func (d Decimal) Cmp(e Decimal) int {
	if d.big == nil && e.big == nil && d.scale == e.scale {
		switch {
		case d.small < e.small:
			return -1
		case d.small > e.small:
			return 1
		}
		return 0
	}
	return d.Add(e.Neg()).Sign()
}

// Decimals returns the number of digits after the decimal point that
// String writes (0 for an integer).
func (d Decimal) Decimals() int { return int(d.scale) }

// String writes d in plain decimal notation, exactly, with no exponent and
// no trailing zeros after the point: "76.724898", "-0.5", "3", "0.0000001".
func (d Decimal) String() string { return d.Text(0) }

// Text writes d like String but with at least decimals digits after the
// point, padding with zeros (never rounding): Text(2) of 3 is "3.00", of
// 0.125 is "0.125".
func (d Decimal) Text(decimals int) string {
	var digits string
	if d.big != nil {
		digits = d.big.Text(10)
	} else {
		digits = strconv.FormatInt(d.small, 10)
	}
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	scale := int(d.scale)
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(digits[:len(digits)-scale])
	if scale > 0 || decimals > 0 {
		b.WriteByte('.')
		b.WriteString(digits[len(digits)-scale:])
		for i := scale; i < decimals; i++ {
			b.WriteByte('0')
		}
	}
	return b.String()
}

// Float64 returns the double nearest to d.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64) // a range error gives ±Inf or 0, the nearest
	return f
}

// MarshalJSON writes d as a JSON number, exactly (String's digits).
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }
