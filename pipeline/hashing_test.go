package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestInputDigest: the digest is of every byte of the input, those read
// before Sum and those Sum reads, and only when they are as many as the
// size given; the error that ended the reading is returned.
func TestInputDigest(t *testing.T) {
	const data = "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"
	sum := sha256.Sum256([]byte(data))
	want := hex.EncodeToString(sum[:])
	fail := errors.New("outage")
	for _, tc := range []struct {
		name    string
		r       io.Reader
		before  int // bytes read before Sum
		size    int64
		want    string
		wantErr error
	}{
		{"read whole before", strings.NewReader(data), len(data), int64(len(data)), want, nil},
		{"read in part: the rest hashed", strings.NewReader(data), 5, int64(len(data)), want, nil},
		{"not read: Sum reads it", strings.NewReader(data), 0, int64(len(data)), want, nil},
		{"one byte at a time", iotest.OneByteReader(strings.NewReader(data)), 3, int64(len(data)), want, nil},
		{"grew since its size was taken", strings.NewReader(data), 0, int64(len(data)) - 1, "", nil},
		{"shorter than its size", strings.NewReader(data), 0, int64(len(data)) + 1, "", nil},
		{"failed part-way", io.MultiReader(strings.NewReader(data[:7]), iotest.ErrReader(fail)), 0, int64(len(data)), "", fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewInputDigest(tc.r)
			if tc.before > 0 {
				if _, err := io.ReadFull(d, make([]byte, tc.before)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := d.Sum(tc.size)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Sum(%d) = %q, %v; want %q, %v", tc.size, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
