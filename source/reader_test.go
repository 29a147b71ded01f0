package source

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStat(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		ctx := context.Background()
		data := randomBytes(5000, 1)
		s.put("d/a.jsonl", data)
		loc := mustParse(t, s.url("d/a.jsonl"))
		info, err := c.Stat(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != int64(len(data)) || info.ModTime.IsZero() || info.Location != loc {
			t.Errorf("Stat = %+v, want size %d, a modification time, location %s", info, len(data), loc)
		}
		switch s.name {
		case "s3":
			if want := fmt.Sprintf(`"%x"`, md5.Sum(data)); info.ETag != want {
				t.Errorf("ETag %s, want %s", info.ETag, want)
			}
		case "gs":
			if info.Generation == 0 {
				t.Error("no generation")
			}
		default:
			if info.ETag == "" {
				t.Error("no ETag")
			}
		}
		s.put("d/a.jsonl", randomBytes(5000, 2))
		again, err := c.Stat(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		if info.sameVersion(again) {
			t.Errorf("an overwritten object has the same version: %+v, then %+v", info, again)
		}
		_, err = c.Stat(ctx, mustParse(t, s.url("d/missing.jsonl")))
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), s.url("d/missing.jsonl")) {
			t.Errorf("Stat of a missing object: %v, want ErrNotFound naming its URL", err)
		}
	})
}

// sizes around the edges a reader cares for.
var readSizes = []int{0, 1, 4095, 32 << 10, 300_001}

func TestOpen(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		for _, n := range readSizes {
			data := randomBytes(n, uint64(n))
			key := fmt.Sprintf("o/%d.jsonl", n)
			s.put(key, data)
			r, err := c.Open(context.Background(), mustParse(t, s.url(key)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%d bytes: read %d bytes, equal %v, err %v", n, len(got), bytes.Equal(got, data), err)
			}
			if r.Info().Size != int64(n) {
				t.Errorf("%d bytes: Info().Size = %d", n, r.Info().Size)
			}
		}
	})
}

func TestRangeReader(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		data := randomBytes(10_000, 3)
		s.put("r.jsonl", data)
		loc := mustParse(t, s.url("r.jsonl"))
		for _, tc := range []struct{ off, n int64 }{
			{0, -1}, {0, 10_000}, {1, 1}, {9_999, 1}, {9_999, -1}, {5_000, 20_000}, {10_000, 5}, {12_000, -1}, {300, 0}, {4096, 4096},
		} {
			r, err := c.NewRangeReader(context.Background(), loc, tc.off, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			lo := min(tc.off, int64(len(data)))
			hi := int64(len(data))
			if tc.n >= 0 {
				hi = min(hi, lo+tc.n)
			}
			if err != nil || !bytes.Equal(got, data[lo:hi]) {
				t.Errorf("range %d+%d: %d bytes, want %d; err %v", tc.off, tc.n, len(got), hi-lo, err)
			}
		}
		if _, err := c.NewRangeReader(context.Background(), loc, -1, 1); err == nil {
			t.Error("a negative offset was accepted")
		}
	})
}

// TestOpenVersion reads ranges of the version a listing gave, as the
// shards of one object read on several workers do, and fails with
// ErrChanged once the object is overwritten, without a request of the new
// bytes reaching the caller.
func TestOpenVersion(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		ctx := context.Background()
		data := randomBytes(20_000, 7)
		s.put("v.jsonl", data)
		info, err := c.Stat(ctx, mustParse(t, s.url("v.jsonl")))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ off, n int64 }{{0, -1}, {0, 5_000}, {5_000, 5_000}, {19_999, -1}, {15_000, 10_000}, {20_000, 1}} {
			r, err := c.OpenVersion(ctx, info, tc.off, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			hi := int64(len(data))
			if tc.n >= 0 {
				hi = min(hi, tc.off+tc.n)
			}
			if err != nil || !bytes.Equal(got, data[tc.off:hi]) {
				t.Errorf("range %d+%d: %d bytes, want %d; err %v", tc.off, tc.n, len(got), hi-tc.off, err)
			}
		}
		if _, err := c.OpenVersion(ctx, info, -1, 1); err == nil {
			t.Error("a negative offset was accepted")
		}
		s.put("v.jsonl", randomBytes(20_000, 8)) // same size, other bytes
		r, err := c.OpenVersion(ctx, info, 100, 1000)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if !errors.Is(err, ErrChanged) || len(got) != 0 {
			t.Errorf("a read of an overwritten version: %d bytes, err %v; want none and ErrChanged", len(got), err)
		}
	})
}

// TestResume cuts responses in the middle of the body, fails requests
// with 503 and stalls a response: each read is resumed from the byte
// reached and delivers the object's bytes exactly.
func TestResume(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		data := randomBytes(300_001, 4)
		s.put("big.jsonl", data)
		loc := mustParse(t, s.url("big.jsonl"))
		for _, tc := range []struct {
			name   string
			set    func(f *faults)
			gets   int
			range2 string // the Range of the second request
		}{
			{"drop twice", func(f *faults) { f.drops, f.dropAfter = 2, 70_000 }, 3, "bytes=70000-"},
			{"503 twice", func(f *faults) { f.fails, f.failStatus = 2, http.StatusServiceUnavailable }, 3, ""},
			{"stall", func(f *faults) { f.stalls, f.stallAfter = 1, 100_000 }, 2, "bytes=100000-"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s.faults.set(func(f *faults) { f.reset(); tc.set(f) })
				r, err := testClient(t).Open(context.Background(), loc)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read %d bytes of %d, equal %v, err %v", len(got), len(data), bytes.Equal(got, data), err)
				}
				s.faults.set(func(f *faults) {
					if f.gets != tc.gets {
						t.Errorf("%d reads, want %d", f.gets, tc.gets)
					}
					if tc.range2 != "" && (len(f.ranges) < 2 || !strings.HasPrefix(f.ranges[1], tc.range2)) {
						t.Errorf("Range headers %q, want the second to start %q", f.ranges, tc.range2)
					}
				})
			})
		}
		t.Run("503 always", func(t *testing.T) {
			s.faults.set(func(f *faults) { f.reset(); f.fails, f.failStatus = 100, http.StatusServiceUnavailable })
			_, err := testClient(t).Open(context.Background(), loc)
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.Tries != 4 || !strings.Contains(err.Error(), loc.String()) {
				t.Errorf("Open against a server that always fails: %v, want an *Error with status 503 after 4 tries", err)
			}
			s.faults.set(func(f *faults) { f.reset() })
		})
	})
}

// TestSlowCaller: a caller that pauses between Reads for longer than the
// stall timeout is no stalled server: the one GET goes on.
func TestSlowCaller(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		data := randomBytes(300_001, 9)
		s.put("slow.jsonl", data)
		s.faults.set(func(f *faults) { f.reset() })
		c, err := NewClient(WithStallTimeout(30*time.Millisecond), WithRetry(4, time.Millisecond, time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, err := c.Open(context.Background(), mustParse(t, s.url("slow.jsonl")))
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 100_000)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		r.Close()
		if !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes of %d", len(got), len(data))
		}
		s.faults.set(func(f *faults) {
			if f.gets != 1 {
				t.Errorf("%d GETs, want 1: pauses of the caller were taken for stalls", f.gets)
			}
		})
	})
}

// TestChanged overwrites the object while a read of it is cut off: the
// resumed read must fail, not splice two versions.
func TestChanged(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		s.put("c.jsonl", randomBytes(200_000, 5))
		loc := mustParse(t, s.url("c.jsonl"))
		s.faults.set(func(f *faults) {
			f.drops, f.dropAfter = 1, 50_000
			f.onDrop = func() { s.put("c.jsonl", randomBytes(200_000, 6)) } // same size, other bytes
		})
		r, err := testClient(t).Open(context.Background(), loc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("read %d bytes, err %v; want ErrChanged", len(got), err)
		}
		if _, err2 := r.Read(make([]byte, 1)); !errors.Is(err2, ErrChanged) && err2 == nil {
			t.Errorf("Read after the error: %v", err2)
		}
		if len(got) > 50_000 {
			t.Errorf("%d bytes delivered, more than the first version's 50,000", len(got))
		}
	})
}

// TestPermanentErrors checks that 404 and 403 are typed, name the URL
// without its query string, and never show a credential.
func TestPermanentErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		c := testClient(t)
		s.put("secret.jsonl", []byte("{}\n"))
		deny := map[string]int{}
		for _, p := range s.paths("secret.jsonl") {
			deny[p] = http.StatusForbidden
		}
		s.faults.set(func(f *faults) { f.deny = deny })
		missing, denied := s.url("gone.jsonl"), s.url("secret.jsonl")
		if s.name == "http" {
			// A signed URL and a password: neither may show.
			missing = strings.Replace(missing, "http://", "http://user:pa55w0rd@", 1) + "?X-Amz-Signature=sig-must-not-show"
			denied += "?token=tok-must-not-show"
		}
		for _, tc := range []struct {
			url    string
			kind   error
			status int
		}{
			{missing, ErrNotFound, http.StatusNotFound},
			{denied, ErrForbidden, http.StatusForbidden},
		} {
			loc := mustParse(t, tc.url)
			_, errStat := c.Stat(context.Background(), loc)
			_, errOpen := c.Open(context.Background(), loc)
			for op, err := range map[string]error{"Stat": errStat, "Open": errOpen} {
				var e *Error
				if !errors.Is(err, tc.kind) || !errors.As(err, &e) {
					t.Errorf("%s(%s): %v, want %v", op, loc, err, tc.kind)
					continue
				}
				if e.Status != tc.status && !(s.name == "gs" && e.Status == 0 && tc.kind == ErrNotFound) {
					t.Errorf("%s(%s): status %d, want %d", op, loc, e.Status, tc.status)
				}
				msg := err.Error()
				if !strings.Contains(msg, loc.String()) {
					t.Errorf("%s: %q does not name %s", op, msg, loc)
				}
				for _, secret := range []string{"must-not-show", "pa55w0rd", testSecret} {
					if strings.Contains(msg, secret) {
						t.Errorf("%s: %q shows a secret", op, msg)
					}
				}
			}
		}
		s.faults.set(func(f *faults) { f.deny = nil })
	})
}
