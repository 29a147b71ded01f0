// Package rfc3339 checks RFC 3339 date-time strings without allocating,
// and converts them to microseconds.
package rfc3339

import "time"

// Valid reports whether s is an RFC 3339 date-time:
// YYYY-MM-DDTHH:MM:SS, an optional fraction, and Z or ±HH:MM, with T and Z
// in either case and every field in range (second 60 allowed for a leap
// second; the day checked against the month and leap years).
func Valid(s []byte) bool {
	if len(s) < 20 {
		return false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range s[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, second := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60 {
		return false
	}
	i := 19
	if s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 {
			return false
		}
		i = j
	}
	rest := s[i:]
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		return true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num(i+1, 2), num(i+4, 2)
		return oh >= 0 && oh <= 23 && om >= 0 && om <= 59
	}
	return false
}

// Micros converts an RFC 3339 date-time to microseconds since the Unix
// epoch (UTC); digits past the microsecond are dropped, a leap second is
// counted as the next second. It reports false when s is not Valid.
func Micros(s []byte) (int64, bool) {
	if !Valid(s) {
		return 0, false
	}
	n := func(i, w int) int {
		v := 0
		for _, c := range s[i : i+w] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	nanos := 0
	i := 19
	if s[i] == '.' {
		i++
		scale := 100_000_000
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			nanos += int(s[i]-'0') * scale
			scale /= 10
		}
	}
	offset := 0
	if s[i] == '+' || s[i] == '-' {
		offset = n(i+1, 2)*3600 + n(i+4, 2)*60
		if s[i] == '-' {
			offset = -offset
		}
	}
	t := time.Date(n(0, 4), time.Month(n(5, 2)), n(8, 2), n(11, 2), n(14, 2), n(17, 2), nanos, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second).UnixMicro(), true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
