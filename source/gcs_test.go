package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// TestGCSEmulatorHost checks the forms of STORAGE_EMULATOR_HOST that
// Google's client accepts: a bare host:port is http, a URL keeps its
// scheme.
func TestGCSEmulatorHost(t *testing.T) {
	for _, tc := range []struct{ env, base string }{
		{"127.0.0.1:4443", "http://127.0.0.1:4443"},
		{"localhost:9023", "http://localhost:9023"},
		{"https://gcs.internal:8443", "https://gcs.internal:8443"},
		{"http://127.0.0.1:4443/", "http://127.0.0.1:4443"},
	} {
		t.Setenv("STORAGE_EMULATOR_HOST", tc.env)
		_, base, err := newGCSClient(context.Background())
		if err != nil || base != tc.base {
			t.Errorf("STORAGE_EMULATOR_HOST=%s: base %q, err %v; want %q", tc.env, base, err, tc.base)
		}
	}
}

// TestGCSListPages serves a listing in pages of two, as Cloud Storage
// pages at 1,000: Glob follows nextPageToken to the end, with the prefix
// on every page.
func TestGCSListPages(t *testing.T) {
	keys := []string{"p/e.jsonl", "p/a.jsonl", "p/d.jsonl", "p/b.jsonl", "p/c.jsonl"}
	var pages int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/storage/v1/b/arch/o" || r.URL.Query().Get("prefix") != "p/" {
			http.NotFound(w, r)
			return
		}
		pages++
		start := 0
		if tok := r.URL.Query().Get("pageToken"); tok != "" {
			fmt.Sscanf(tok, "from-%d", &start)
		}
		end := min(start+2, len(keys))
		page := map[string]any{}
		var items []map[string]string
		for i, k := range keys[start:end] {
			items = append(items, map[string]string{"name": k, "size": fmt.Sprint(start + i), "etag": "e" + k, "generation": fmt.Sprint(100 + start + i), "updated": "2026-11-01T00:00:00.5Z"})
		}
		page["items"] = items
		if end < len(keys) {
			page["nextPageToken"] = fmt.Sprintf("from-%d", end)
		}
		json.NewEncoder(w).Encode(page)
	}))
	defer ts.Close()
	t.Setenv("STORAGE_EMULATOR_HOST", ts.URL)
	got, err := testClient(t).Glob(context.Background(), "gs://arch/p/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, info := range got {
		names = append(names, info.Location.Key)
		i := strings.Index(strings.Join(keys, " "), info.Location.Key) / len("p/a.jsonl ")
		if info.Size != int64(i) || info.Generation != int64(100+i) || info.ETag != `"e`+info.Location.Key+`"` || info.ModTime.Nanosecond() != 5e8 {
			t.Errorf("%s: %+v, want size %d, generation %d, a quoted ETag, the time to the millisecond", info.Location.Key, info, i, 100+i)
		}
	}
	if want := "[p/a.jsonl p/b.jsonl p/c.jsonl p/d.jsonl p/e.jsonl]"; fmt.Sprint(names) != want || pages != 3 {
		t.Errorf("Glob = %v over %d pages, want %s over 3", names, pages, want)
	}
}

// TestGCSStoredGzip reads an object uploaded with Content-Encoding gzip:
// its bytes are the stored ones, whole and by range, not decompressed on
// the way (fake-gcs-server, like Cloud Storage, would otherwise transcode
// and ignore the range).
func TestGCSStoredGzip(t *testing.T) {
	srv := newGCSServer(t, "arch")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(randomBytes(20_000, 7))
	zw.Close()
	stored := zb.Bytes()
	srv.fake.CreateObject(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "arch", Name: "z.jsonl.gz", ContentEncoding: "gzip", Generation: time.Now().UnixNano()},
		Content:     stored,
	})
	c := testClient(t)
	loc := mustParse(t, "gs://arch/z.jsonl.gz")
	for _, tc := range []struct{ off, n int64 }{{0, -1}, {10, 100}, {int64(len(stored)) - 5, -1}} {
		r, err := c.NewRangeReader(context.Background(), loc, tc.off, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		hi := int64(len(stored))
		if tc.n >= 0 {
			hi = tc.off + tc.n
		}
		if err != nil || !bytes.Equal(got, stored[tc.off:hi]) {
			t.Errorf("range %d+%d: %d bytes, want the %d stored; err %v", tc.off, tc.n, len(got), hi-tc.off, err)
		}
	}
}

// TestGCSErrorLeadsWithServiceReason: a Cloud Storage error reads as the
// JSON API's reason and message, then the status, as an S3 error leads
// with S3's code (TestErrorLeadsWithServiceCode): for a 404 of
// fake-gcs-server's own to a stat, and for a 403 whose
// message holds a signed URL, whose query never shows, nor does the
// request's. A body that is not the JSON API's is discarded and the
// status said, as before. On 8e45063 every such error read "HTTP 404 Not
// Found: not found" or "HTTP 403 Forbidden: access denied", the
// service's reason and message dropped.
func TestGCSErrorLeadsWithServiceReason(t *testing.T) {
	const signed = "https://storage.googleapis.com/arch/k.jsonl?X-Goog-Signature=SECRETSIG"
	forbidden := `{"error":{"code":403,"message":"svc@p.iam.gserviceaccount.com does not have storage.objects.get access to ` + signed + `.","errors":[{"message":"denied","domain":"global","reason":"forbidden"}]}}`
	for _, tc := range []struct {
		name     string
		key      string
		deny     string // a JSON body for a 403 to every request for key, "" for none
		plain    bool   // deny with a plain-text body instead
		op       string
		kind     error
		status   int
		want     string // the message's start after "OP gs://arch/KEY: "
		contains string
	}{
		{"stat of a missing object", "missing.jsonl", "", false, "stat", ErrNotFound, 404, "notFound: ", "(HTTP 404 Not Found)"},
		// Media answers its errors in plain text (fake-gcs-server
		// "Not Found"), which is discarded.
		{"read of a missing object", "missing.jsonl", "", false, "read", ErrNotFound, 404, "HTTP 404 Not Found: not found", ""},
		{"stat of a denied object", "k.jsonl", forbidden, false, "stat", ErrForbidden, 403, "forbidden: svc@p.iam.gserviceaccount.com does not have storage.objects.get access", "(HTTP 403 Forbidden)"},
		{"read of a denied object", "k.jsonl", forbidden, false, "read", ErrForbidden, 403, "forbidden: svc@p.iam.gserviceaccount.com", "storage.googleapis.com/arch/k.jsonl (HTTP 403 Forbidden)"},
		{"a body that is not the JSON API's", "k.jsonl", "", true, "stat", ErrForbidden, 403, "HTTP 403 Forbidden: access denied", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, "gs")
			s.put("k.jsonl", []byte("{}\n"))
			if tc.deny != "" || tc.plain {
				deny := map[string]int{}
				for _, p := range s.paths(tc.key) {
					deny[p] = http.StatusForbidden
				}
				s.faults.set(func(f *faults) { f.deny, f.denyBody = deny, tc.deny })
			}
			c := testClient(t)
			loc := mustParse(t, s.url(tc.key))
			var err error
			if tc.op == "stat" {
				_, err = c.Stat(t.Context(), loc)
			} else {
				var r io.ReadCloser
				if r, err = c.Open(t.Context(), loc); err == nil {
					r.Close()
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tc.status || !errors.Is(err, tc.kind) {
				t.Fatalf("%s: %v; want an *Error with status %d and %v", tc.op, err, tc.status, tc.kind)
			}
			msg := err.Error()
			if prefix := tc.op + " " + loc.String() + ": " + tc.want; !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.contains) {
				t.Errorf("error %q: want it to start %q and hold %q", msg, prefix, tc.contains)
			}
			for _, leak := range []string{"SECRETSIG", "fields=", "alt=media", "?"} {
				if strings.Contains(msg, leak) {
					t.Errorf("error %q shows %q", msg, leak)
				}
			}
		})
	}
}
