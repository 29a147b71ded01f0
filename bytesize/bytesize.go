package bytesize

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Errors wrapped by Parse, in the manner of strconv.ErrSyntax and
// strconv.ErrRange.
var (
	// ErrSyntax marks a string that is not a size.
	ErrSyntax = errors.New("invalid syntax")
	// ErrRange marks a size beyond math.MaxInt64 bytes.
	ErrRange = errors.New("value out of range")
)

// units maps a lower-case suffix to its multiplier.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// Parse parses a byte size: a non-negative decimal number (an optional
// fraction allowed, the result truncated to whole bytes) followed by an
// optional unit, case-insensitive, optionally after spaces: B; K, Ki, KiB,
// M, Mi, MiB, G, Gi, GiB, T, Ti, TiB are powers of 1024; KB, MB, GB, TB are
// powers of 1000. Examples: "1GiB", "256MiB", "10MB", "500k", "1024",
// "1.5G". Errors wrap ErrSyntax or ErrRange.
func Parse(s string) (int64, error) {
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
		return 0, fmt.Errorf("bytesize: size %q: no number: %w", s, ErrSyntax)
	}
	mult, ok := units[strings.ToLower(strings.TrimLeft(t[i:], " "))]
	if !ok {
		return 0, fmt.Errorf("bytesize: size %q: unknown unit %q: %w", s, strings.TrimLeft(t[i:], " "), ErrSyntax)
	}
	overflow := func() (int64, error) {
		return 0, fmt.Errorf("bytesize: size %q: %w", s, ErrRange)
	}
	var n int64
	for _, c := range intPart {
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return overflow()
		}
		n = n*10 + d
	}
	if n > math.MaxInt64/mult {
		return overflow()
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
			return overflow()
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

// Format returns n for people: "512 B" below 1 KiB, else one decimal and
// the largest binary unit that keeps the number at least 1, such as
// "1.5 KiB" or "3.0 GiB". Negative sizes are printed as "%d B".
func Format(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
