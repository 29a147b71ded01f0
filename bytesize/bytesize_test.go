package bytesize

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{
		"1GiB": 1 << 30, "256MiB": 256 << 20, "10MB": 10e6, "500k": 500 << 10, "1024": 1024,
		"1gib": 1 << 30, "1G": 1 << 30, "2kb": 2000, "3 KiB": 3072, "0": 0, "1.5k": 1536,
		"1b": 1, " 7 ": 7, "1Mi": 1 << 20, "8EiB": -1, "9223372036854775807": math.MaxInt64,
		"9223372036854775808": -1, "": -1, "k": -1, "-1": -1, "1x": -1, "1.5": 1, ".5KiB": 512,
		"8388608TiB": -1, "1.0000000000000000001GB": 1e9,
	} {
		got, err := Parse(s)
		if want < 0 {
			if err == nil {
				t.Errorf("Parse(%q) = %d, want error", s, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", ErrSyntax}, {"k", ErrSyntax}, {"-1", ErrSyntax}, {"1x", ErrSyntax}, {"8EiB", ErrSyntax},
		{"9223372036854775808", ErrRange}, {"8388608TiB", ErrRange}, {"9223372036854775807k", ErrRange},
	} {
		if _, err := Parse(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("Parse(%q): error %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{-5, "-5 B"}, {0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{1<<20 - 1, "1024.0 KiB"}, {1 << 20, "1.0 MiB"}, {3 << 30, "3.0 GiB"}, {5 << 40, "5.0 TiB"},
		{1 << 50, "1.0 PiB"}, {math.MaxInt64, "8.0 EiB"},
	} {
		if got := Format(tc.in); got != tc.want {
			t.Errorf("Format(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GiB", "256MiB", "10MB", "500k", "1024", "1.5g", "", "9999999999999TiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrRange) {
				t.Fatalf("Parse(%q): error %v wraps neither ErrSyntax nor ErrRange", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d < 0", s, n)
		}
		m, err := Parse(strconv.FormatInt(n, 10))
		if err != nil || m != n {
			t.Fatalf("round trip of %d: %d, %v", n, m, err)
		}
		if k, err := Parse(strconv.FormatInt(n/1024, 10) + "KiB"); err != nil || k != n/1024*1024 {
			t.Fatalf("KiB of %d: %d, %v", n, k, err)
		}
	})
}
