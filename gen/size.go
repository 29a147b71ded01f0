package gen

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// sizeUnits maps a lower-case suffix to its multiplier.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// ParseSize parses a byte size: a non-negative decimal number (an optional
// fraction allowed, the result truncated to whole bytes) followed by an
// optional unit, case-insensitive, optionally after spaces: B; K, Ki, KiB,
// M, Mi, MiB, G, Gi, GiB, T, Ti, TiB are powers of 1024; KB, MB, GB, TB are
// powers of 1000. Examples: "1GiB", "256MiB", "10MB", "500k", "1024",
// "1.5G".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	intPart := t[:i]
	var fracPart string
	if i < len(t) && t[i] == '.' {
		j := i + 1
		for j < len(t) && t[j] >= '0' && t[j] <= '9' {
			j++
		}
		fracPart = t[i+1 : j]
		i = j
	}
	if intPart == "" && fracPart == "" {
		return 0, fmt.Errorf("gen: invalid size %q", s)
	}
	mult, ok := sizeUnits[strings.ToLower(strings.TrimLeft(t[i:], " "))]
	if !ok {
		return 0, fmt.Errorf("gen: invalid size unit in %q", s)
	}
	var n int64
	for _, c := range intPart {
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, fmt.Errorf("gen: size %q overflows", s)
		}
		n = n*10 + d
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("gen: size %q overflows", s)
	}
	n *= mult
	// fraction: mult*0.f, exact integer arithmetic, truncated; mult <= 2^40
	// so 18 digits suffice for a whole-byte result.
	if len(fracPart) > 18 {
		fracPart = fracPart[:18]
	}
	var num, den int64 = 0, 1
	for _, c := range fracPart {
		num = num*10 + int64(c-'0')
		den *= 10
	}
	if num > 0 {
		// mult*num/den without overflow: split mult = q*den + r.
		q, r := mult/den, mult%den
		add := q*num + mulDiv(r, num, den)
		if n > math.MaxInt64-add {
			return 0, fmt.Errorf("gen: size %q overflows", s)
		}
		n += add
	}
	return n, nil
}

// mulDiv returns a*b/c for 0 <= a, b < c, without overflow.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}
