package objout

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMultipart: an object above multipartThreshold goes up in parts
// (here 3 of 5 MiB at most) and reads back byte for byte; a part that
// fails once is sent again; its put-if-absent is the completion's
// If-None-Match (gofakes3 v1.2.0 ignores that header on a completion,
// so the test server refuses it as S3 does when the key exists); a part
// that always fails fails the put, which aborts its upload, and leaves
// no object.
func TestMultipart(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	defer func(th, ps int64) { multipartThreshold, minPartSize = th, ps }(multipartThreshold, minPartSize)
	multipartThreshold, minPartSize = 1<<20, 5<<20
	data := make([]byte, 12<<20+3)
	rand.Read(data)
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var parts, aborts atomic.Int64
	var failPart atomic.Int64 // the part number to answer 503, -1: every part
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodPut && q.Has("partNumber"):
			parts.Add(1)
			n := failPart.Load()
			if n == -1 || n > 0 && q.Get("partNumber") == strconv.FormatInt(n, 10) && failPart.CompareAndSwap(n, 0) {
				io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
		case r.Method == http.MethodDelete && q.Has("uploadId"):
			aborts.Add(1)
		case r.Method == http.MethodPost && q.Has("uploadId") && r.Header.Get("If-None-Match") == "*":
			key := strings.TrimPrefix(r.URL.Path, "/b/")
			if _, err := f.backend.HeadObject("b", key); err == nil {
				io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusPreconditionFailed)
				return true
			}
		}
		return false
	})
	put := func(key string) error { return putFile(t, tg, p, key) }
	failPart.Store(2)
	if err := put("big-1"); err != nil {
		t.Fatal(err)
	}
	if n := parts.Load(); n != 4 {
		t.Errorf("%d part requests, want 3 parts and 1 sent again", n)
	}
	if got := getObject(t, tg, "big-1"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, other than the %d put", len(got), len(data))
	}
	if err := put("big-1"); !errors.Is(err, ErrPrecondition) {
		t.Errorf("second put-if-absent: %v, want a refusal", err)
	}
	if aborts.Load() == 0 {
		t.Error("the refused upload was not aborted")
	}
	aborts.Store(0)
	failPart.Store(-1)
	if err := put("big-2"); err == nil || errors.Is(err, ErrPrecondition) {
		t.Errorf("every part failing: %v, want the 503", err)
	}
	if aborts.Load() == 0 {
		t.Error("the failed upload was not aborted")
	}
	if _, err := f.backend.HeadObject("b", tg.Prefix+"big-2"); err == nil {
		t.Error("a failed multipart upload left an object")
	}
}

// putFile puts the file at p as the object at key (relative to tg's
// prefix), if absent, as the upload of an archive does: a file, which
// multipart uploads read at offsets.
func putFile(t *testing.T, tg *Target, p, key string) error {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return tg.Store.Put(context.Background(), tg.Prefix+key, fh, st.Size(), true)
}

// getObject reads the object at key (relative to tg's prefix).
func getObject(t *testing.T, tg *Target, key string) []byte {
	t.Helper()
	rc, err := tg.Store.Get(context.Background(), tg.Prefix+key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPartSize: 64 MiB parts, bigger when an object would need more than
// 10,000 of them.
func TestPartSize(t *testing.T) {
	for size, want := range map[int64]int64{
		1:                   64 << 20,
		5 << 30:             64 << 20,
		625 << 30:           64 << 20,
		1 << 40:             (1<<40 + maxParts - 1) / maxParts,
		(625 << 30) + 1<<20: ((625 << 30) + 1<<20 + maxParts - 1) / maxParts,
	} {
		if got := partSize(size); got != want || (size+got-1)/got > maxParts {
			t.Errorf("partSize(%d) = %d, want %d", size, got, want)
		}
	}
}

// TestMultipartSlowCompletion: S3 answers a CompleteMultipartUpload with
// 200 at once, then spaces every few seconds while it assembles the
// object, then the result. Such a completion, lasting several stall
// timeouts, is progress, not a stall: the object goes up once, with one
// upload. A completion that answers 200 and then nothing is a stall all
// the same, given up after the tries. Before, the watchdog counted only
// the bytes sent, abandoned the talking completion and uploaded the
// whole object again.
func TestMultipartSlowCompletion(t *testing.T) {
	const stall = 300 * time.Millisecond
	f, _ := newS3(t)
	tg := openT(t)
	tg.Store = RetryStall(tg.Store.(*retrying).Store, 2, time.Millisecond, stall)
	defer func(th, ps int64) { multipartThreshold, minPartSize = th, ps }(multipartThreshold, minPartSize)
	multipartThreshold, minPartSize = 1<<20, 5<<20
	data := make([]byte, 7<<20)
	rand.Read(data)
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var creates atomic.Int64
	var silent atomic.Bool
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodPost && q.Has("uploads"):
			creates.Add(1)
		case r.Method == http.MethodPost && q.Has("uploadId"):
			rec := httptest.NewRecorder()
			f.inner.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK {
				return false // not a completion to slow down
			}
			w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			if silent.Load() {
				<-r.Context().Done()
				return true
			}
			for range 24 { // 4 stall timeouts, a space every sixth of one
				time.Sleep(stall / 6)
				w.Write([]byte(" "))
				w.(http.Flusher).Flush()
			}
			w.Write(rec.Body.Bytes())
			return true
		}
		return false
	})
	put := func(key string) error { return putFile(t, tg, p, key) }
	if err := put("slow"); err != nil {
		t.Fatalf("put with a completion that talks for 4 stall timeouts: %v", err)
	}
	if n := creates.Load(); n != 1 {
		t.Errorf("%d multipart uploads, want 1", n)
	}
	if got := getObject(t, tg, "slow"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, other than the %d put", len(got), len(data))
	}
	silent.Store(true)
	if err := put("silent"); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "after 2 tries") {
		t.Errorf("put with a completion that answers 200 and then nothing: %v, want the stall after 2 tries", err)
	}
}
