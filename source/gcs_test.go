package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
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
