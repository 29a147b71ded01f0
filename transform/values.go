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
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
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
