package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRangeIgnored: a store that ignores Range and answers a ranged GET
// with 200 and the whole object. Every read must still deliver the
// object's bytes exactly: a resumed read, a range, and a parallel read
// whose every GET is ranged.
func TestRangeIgnored(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		data := randomBytes(300_001, 11)
		s.put("ri.jsonl", data)
		loc := mustParse(t, s.url("ri.jsonl"))
		for _, tc := range []struct {
			name   string
			set    func(f *faults)
			read   func(c *Client) (io.ReadCloser, error)
			want   []byte
			ranges int // the Range headers the server saw, at least
		}{
			{"resumed", func(f *faults) { f.drops, f.dropAfter, f.ignoreRanges = 1, 70_000, 1 },
				func(c *Client) (io.ReadCloser, error) { return c.Open(context.Background(), loc) }, data, 1},
			{"range", func(f *faults) { f.ignoreRanges = 1 },
				func(c *Client) (io.ReadCloser, error) { return c.NewRangeReader(context.Background(), loc, 1000, 5000) }, data[1000:6000], 1},
			{"parallel", func(f *faults) { f.ignoreRanges = 3 },
				func(c *Client) (io.ReadCloser, error) {
					return c.NewParallelReader(context.Background(), loc, WithChunkSize(64<<10), WithConcurrency(2))
				}, data, 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s.faults.set(func(f *faults) { f.reset(); tc.set(f) })
				r, err := tc.read(testClient(t))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(got, tc.want) {
					t.Errorf("read %d bytes of %d, equal %v, err %v", len(got), len(tc.want), bytes.Equal(got, tc.want), err)
				}
				s.faults.set(func(f *faults) {
					if f.ignoreRanges != 0 {
						t.Errorf("%d Range headers left to ignore: the fault did not happen", f.ignoreRanges)
					}
				})
			})
		}
		s.faults.set(func(f *faults) { f.reset() })
	})
}

// TestBytesChangedInTransit flips one byte of a response body, leaving
// its length and headers: a read of the whole object must fail with
// ErrCorrupt, naming the URL and the checksum, wherever the store keeps
// one (S3: the ETag's MD5 of a single-part object; Cloud Storage: CRC32C);
// a web server tells none, so it is not checked. A parallel read of one
// chunk checks it before handing a byte on, and reads it again.
func TestBytesChangedInTransit(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		if s.name == "http" {
			t.Skip("a web server tells no checksum of the object: nothing to check against (docs/SOURCES.md)")
		}
		ctx := context.Background()
		data := randomBytes(300_001, 12)
		s.put("bc.jsonl", data)
		small := randomBytes(10_000, 13)
		s.put("small.jsonl", small)
		loc := mustParse(t, s.url("bc.jsonl"))
		listed := func(c *Client) Info {
			infos, err := c.Glob(ctx, s.url("bc.json*"))
			if err != nil || len(infos) != 1 {
				t.Fatalf("Glob: %v, %v", infos, err)
			}
			return infos[0]
		}
		for _, tc := range []struct {
			name string
			set  func(f *faults)
			read func(c *Client) (io.ReadCloser, error)
		}{
			{"open", func(f *faults) { f.flips, f.flipAt = 1, 123_456 },
				func(c *Client) (io.ReadCloser, error) { return c.Open(ctx, loc) }},
			{"open resumed", func(f *faults) { f.flips, f.flipAt, f.drops, f.dropAfter = 1, 10, 1, 50_000 },
				func(c *Client) (io.ReadCloser, error) { return c.Open(ctx, loc) }},
			{"listed version", func(f *faults) { f.flips, f.flipAt = 1, 299_999 },
				func(c *Client) (io.ReadCloser, error) { return c.OpenVersion(ctx, listed(c), 0, -1) }},
			{"stat then range reader", func(f *faults) { f.flips, f.flipAt = 1, 0 },
				func(c *Client) (io.ReadCloser, error) { return c.NewRangeReader(ctx, loc, 0, -1) }},
			{"parallel", func(f *faults) { f.flips, f.flipAt = 1, 5 },
				func(c *Client) (io.ReadCloser, error) {
					return c.NewParallelReader(ctx, loc, WithChunkSize(64<<10), WithConcurrency(1))
				}},
			{"parallel listed", func(f *faults) { f.flips, f.flipAt = 1, 7 },
				func(c *Client) (io.ReadCloser, error) {
					return c.NewParallelReader(ctx, loc, WithVersion(listed(c)), WithChunkSize(64<<10), WithConcurrency(1))
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := testClient(t)
				s.faults.set(func(f *faults) { f.reset(); tc.set(f) })
				r, err := tc.read(c)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("read %d bytes of %d, equal %v, err %v; want ErrCorrupt", len(got), len(data), bytes.Equal(got, data), err)
				}
				if msg := err.Error(); !strings.Contains(msg, loc.String()) || !strings.Contains(msg, "checksum") {
					t.Errorf("%q does not name the URL and the checksum", msg)
				}
				if _, err2 := r.Read(make([]byte, 10)); !errors.Is(err2, ErrCorrupt) {
					t.Errorf("Read after the mismatch: %v, want ErrCorrupt again", err2)
				}
				r.Close()
				s.faults.set(func(f *faults) {
					if f.flips != 0 {
						t.Errorf("the flip did not happen")
					}
				})
			})
		}
		t.Run("parallel one chunk retried", func(t *testing.T) {
			s.faults.set(func(f *faults) { f.reset(); f.flips, f.flipAt = 1, 100 })
			r, err := testClient(t).NewParallelReader(ctx, mustParse(t, s.url("small.jsonl")))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, small) {
				t.Fatalf("read %d bytes of %d, equal %v, err %v", len(got), len(small), bytes.Equal(got, small), err)
			}
			s.faults.set(func(f *faults) {
				if f.gets != 2 {
					t.Errorf("%d GETs, want 2: the altered chunk read again", f.gets)
				}
			})
		})
		t.Run("no fault", func(t *testing.T) {
			s.faults.set(func(f *faults) { f.reset() })
			r, err := testClient(t).Open(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes of %d, err %v", len(got), len(data), err)
			}
		})
	})
}

// TestExactKeys lists keys that a path or an escaping scheme would
// change ("__0x2f__", "../", a newline, a tab, '%', '+', a space) and
// reads each by the key listed: stat and GET reach the same object.
func TestExactKeys(t *testing.T) {
	keys := []string{
		"esc/a__0x2f__b.jsonl",
		"esc/new\nline.jsonl",
		"esc/tab\there.jsonl",
		"esc/sp ace+plus%2F.jsonl",
		"esc/../up.jsonl",
		"esc/./dot.jsonl",
	}
	forEachStore(t, func(t *testing.T, s store) {
		if s.name == "http" {
			t.Skip("a web server has no listing")
		}
		ctx := context.Background()
		c := testClient(t)
		want := map[string][]byte{}
		for i, k := range keys {
			want[k] = randomBytes(1000+i, uint64(20+i))
			s.put(k, want[k])
		}
		var got []string
		for _, pattern := range []string{"esc/*", "esc/*/*"} {
			infos, err := c.Glob(ctx, s.url(pattern))
			if err != nil {
				t.Fatalf("Glob %s: %v", pattern, err)
			}
			for _, info := range infos {
				got = append(got, info.Location.Key)
				if info.Size != int64(len(want[info.Location.Key])) {
					t.Errorf("%q listed with size %d, want %d", info.Location.Key, info.Size, len(want[info.Location.Key]))
				}
			}
		}
		for _, k := range keys {
			if !contains(got, k) {
				t.Errorf("key %q not listed; listed %q", k, got)
			}
		}
		for _, k := range got {
			if !contains(keys, k) {
				t.Errorf("listed %q, which is no key put", k)
			}
		}
		for _, k := range got {
			loc := Location{Scheme: s.name, Bucket: "arch", Key: k}
			info, err := c.Stat(ctx, loc)
			if err != nil || info.Size != int64(len(want[k])) {
				t.Errorf("Stat %q: %+v, %v", k, info, err)
				continue
			}
			for name, open := range map[string]func() (io.ReadCloser, error){
				"Open":        func() (io.ReadCloser, error) { return c.Open(ctx, loc) },
				"OpenVersion": func() (io.ReadCloser, error) { return c.OpenVersion(ctx, info, 0, -1) },
			} {
				r, err := open()
				if err != nil {
					t.Errorf("%s %q: %v", name, k, err)
					continue
				}
				b, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(b, want[k]) {
					t.Errorf("%s %q: %d bytes, equal %v, err %v", name, k, len(b), bytes.Equal(b, want[k]), err)
				}
			}
		}
		// A listed key that cannot be read is named by its URL and the
		// store's status, not taken for another.
		denied := "esc/../up.jsonl"
		deny := map[string]int{}
		for _, p := range s.paths(denied) {
			deny[p] = http.StatusForbidden
		}
		s.faults.set(func(f *faults) { f.reset(); f.deny = deny })
		loc := Location{Scheme: s.name, Bucket: "arch", Key: denied}
		_, err := c.Open(ctx, loc)
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusForbidden || !errors.Is(err, ErrForbidden) || e.URL != loc.String() {
			t.Errorf("Open of a denied key: %v, want an *Error naming %s with status 403", err, loc)
		}
		s.faults.set(func(f *faults) { f.reset() })
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
