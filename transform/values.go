package transform

import (
	"math"
	"strconv"

	"github.com/convbatch/convbatch/internal/rfc3339"
	"github.com/convbatch/convbatch/jsonscan"
)

// ExactInt reads a JSON number literal as an int64 exactly: 12, 1.2e1 and
// 1200e-2 are 12; a value with a fractional part, a negative value (other
// than -0) or one past 2^63-1 is refused.
func ExactInt(raw []byte) (int64, bool) {
	// The usual literal, at most 18 plain digits, is below 2^63 as it is.
	if len(raw) > 0 && len(raw) <= 18 {
		var v int64
		for _, c := range raw {
			if c < '0' || c > '9' {
				return exactIntSlow(raw)
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	return exactIntSlow(raw)
}

// exactIntSlow is ExactInt for any literal: signs, fractions, exponents.
func exactIntSlow(raw []byte) (int64, bool) {
	i := 0
	neg := false
	if i < len(raw) && raw[i] == '-' {
		neg = true
		i++
	}
	var digits []byte
	intStart := i
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	digits = raw[intStart:i]
	var frac []byte
	if i < len(raw) && raw[i] == '.' {
		i++
		fs := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		frac = raw[fs:i]
	}
	exp := 0
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		eneg := false
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			eneg = raw[i] == '-'
			i++
		}
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			if exp < 1_000_000 { // saturate: a zero significand stays zero
				exp = exp*10 + int(raw[i]-'0')
			}
			i++
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(raw) || len(digits) == 0 {
		return 0, false
	}
	// The significand's digits, and the power of ten that scales them.
	all := make([]byte, 0, len(digits)+len(frac))
	all = append(append(all, digits...), frac...)
	scale := exp - len(frac)
	// Drop trailing zeros into the scale, leading zeros entirely.
	for len(all) > 0 && all[len(all)-1] == '0' && scale < 0 {
		all = all[:len(all)-1]
		scale++
	}
	for len(all) > 0 && all[0] == '0' {
		all = all[1:]
	}
	if len(all) == 0 {
		return 0, true // zero, -0 included
	}
	if scale < 0 || neg {
		return 0, false
	}
	if len(all)+scale > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range all {
		v = v*10 + uint64(c-'0')
	}
	for range scale {
		v *= 10
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// Float reads a JSON number literal as the nearest double; a value outside
// the double range is refused.
func Float(raw []byte) (float64, bool) {
	if f, ok := floatExact(raw); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// pow10 are the powers of ten floatExact divides by, all exact doubles.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// floatExact reads the usual literal, -?d+(.d+)? of at most 15 digits in
// all, without strconv: its digits m are an exact double (below 2^53), so
// is 10^k for its k fraction digits, and one IEEE division of the two is
// correctly rounded: the double strconv.ParseFloat returns (the fast path
// it takes itself, after more checks). Other literals return false.
func floatExact(raw []byte) (float64, bool) {
	i, neg := 0, false
	if len(raw) > 0 && raw[0] == '-' {
		i, neg = 1, true
	}
	var m uint64
	digits, dot := 0, -1
	for ; i < len(raw); i++ {
		switch c := raw[i]; {
		case c >= '0' && c <= '9':
			if digits == 15 {
				return 0, false
			}
			m = m*10 + uint64(c-'0')
			digits++
		case c == '.' && dot < 0 && digits > 0:
			dot = digits
		default:
			return 0, false
		}
	}
	if digits == 0 || dot == digits {
		return 0, false
	}
	f := float64(m)
	if dot >= 0 {
		f /= pow10[digits-dot]
	}
	if neg {
		f = -f
	}
	return f, true
}

// optStr returns token v as a string when it is one.
func optStr(t *jsonscan.Tape, v int32) Opt[string] {
	if t.Kind(v) != jsonscan.String {
		return Opt[string]{}
	}
	return Some(t.Str(v))
}

// optTime returns token v as a time when it is an RFC 3339 string.
func optTime(t *jsonscan.Tape, v int32) Opt[int64] {
	if t.Kind(v) != jsonscan.String {
		return Opt[int64]{}
	}
	us, ok := rfc3339.Micros(t.StrBytes(nil, v))
	return Opt[int64]{V: us, Valid: ok}
}
