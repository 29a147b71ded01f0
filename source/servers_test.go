package source

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// testSecret is the AWS secret key the tests use; no error may show it.
const testSecret = "s3cr3t-Key-that-must-never-show"

// faults makes a server misbehave: the next drops GET bodies are cut
// (the connection closed) after dropAfter bytes, the next fails requests
// answer failStatus, the next stalls bodies stop after stallAfter bytes
// until the client gives up, paths in deny answer their status (with
// denyBody as a JSON body if it is set, else "denied" as text); onDrop
// runs once a cut has happened. The next ignoreRanges GETs with a Range
// header are answered as if it were absent (200 and the whole object),
// and the next flips GET bodies have their byte at body offset flipAt
// changed in transit (same length, same headers).
type faults struct {
	mu           sync.Mutex
	drops        int
	dropAfter    int64
	fails        int
	failStatus   int
	stalls       int
	stallAfter   int64
	deny         map[string]int
	denyBody     string
	onDrop       func()
	ignoreRanges int
	flips        int
	flipAt       int64
	gets         int      // data reads seen
	ranges       []string // their Range headers
	inflight     int      // data reads being answered
	peak         int      // most data reads answered at once

	// Stalls of the requests that are not data reads: the next
	// listStalls listings and the next statStalls stats (HEAD, or Cloud
	// Storage's metadata GET) get no answer until the client goes away;
	// requests counts every request the server received.
	listStalls int
	statStalls int
	requests   int
}

// set changes the faults under their lock.
func (f *faults) set(fn func(f *faults)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// reset clears every fault and count; the caller holds the lock.
func (f *faults) reset() {
	f.drops, f.dropAfter, f.fails, f.failStatus, f.stalls, f.stallAfter = 0, 0, 0, 0, 0, 0
	f.deny, f.denyBody, f.onDrop, f.gets, f.ranges, f.inflight, f.peak = nil, "", nil, 0, nil, 0, 0
	f.ignoreRanges, f.flips, f.flipAt = 0, 0, 0
	f.listStalls, f.statStalls, f.requests = 0, 0, 0
}

// handler wraps next with the faults.
func (f *faults) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A data read: not a listing, nor Cloud Storage's JSON metadata.
		data := r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/storage/") &&
			r.URL.Query().Get("list-type") == "" && !r.URL.Query().Has("prefix")
		f.mu.Lock()
		f.requests++
		if hang := f.stallRequest(r, data); hang {
			f.mu.Unlock()
			select {
			case <-r.Context().Done():
			case <-time.After(15 * time.Second):
			}
			panic(http.ErrAbortHandler)
		}
		if debugRequests {
			fmt.Println(r.Method, r.URL.String(), r.Header.Get("Range"))
		}
		if data {
			f.gets++
			f.ranges = append(f.ranges, r.Header.Get("Range"))
			f.inflight++
			f.peak = max(f.peak, f.inflight)
			defer func() {
				f.mu.Lock()
				f.inflight--
				f.mu.Unlock()
			}()
		}
		if st, ok := f.deny[r.URL.Path]; ok {
			body := f.denyBody
			f.mu.Unlock()
			if body == "" {
				http.Error(w, "denied", st)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			io.WriteString(w, body)
			return
		}
		if f.fails > 0 && data {
			f.fails--
			st := f.failStatus
			f.mu.Unlock()
			http.Error(w, "try later", st)
			return
		}
		cw := &cutWriter{ResponseWriter: w, limit: -1, flip: -1}
		if data && f.ignoreRanges > 0 && r.Header.Get("Range") != "" {
			f.ignoreRanges--
			r.Header.Del("Range")
		}
		if data && f.flips > 0 {
			f.flips--
			cw.flip = f.flipAt
		}
		if data {
			switch {
			case f.drops > 0:
				f.drops--
				cw.limit, cw.after = f.dropAfter, f.onDrop
			case f.stalls > 0:
				f.stalls--
				cw.limit, cw.stall = f.stallAfter, r
			}
		}
		f.mu.Unlock()
		next.ServeHTTP(cw, r)
	})
}

// stallRequest reports whether r, a listing or a stat, is to get no
// answer; the caller holds the lock.
func (f *faults) stallRequest(r *http.Request, data bool) bool {
	if data {
		return false
	}
	q := r.URL.Query()
	list := r.Method == http.MethodGet && (q.Get("list-type") != "" || q.Has("prefix"))
	stat := r.Method == http.MethodHead || (r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/storage/") && !list)
	switch {
	case list && f.listStalls > 0:
		f.listStalls--
		return true
	case stat && f.statStalls > 0:
		f.statStalls--
		return true
	}
	return false
}

// cutWriter passes limit body bytes, then aborts the response (closing
// the connection mid-body) or, with stall set, hangs until the client
// goes away. With flip ≥ 0, the body byte at that offset is changed.
type cutWriter struct {
	http.ResponseWriter
	limit   int64
	written int64
	after   func()
	stall   *http.Request
	flip    int64
	seen    int64 // body bytes passed to Write, for flip
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.flip >= c.seen && c.flip < c.seen+int64(len(p)) {
		q := append([]byte(nil), p...)
		q[c.flip-c.seen] ^= 0x20
		p = q
	}
	c.seen += int64(len(p))
	if c.limit < 0 {
		return c.ResponseWriter.Write(p)
	}
	if c.written+int64(len(p)) <= c.limit {
		n, err := c.ResponseWriter.Write(p)
		c.written += int64(n)
		return n, err
	}
	n, _ := c.ResponseWriter.Write(p[:c.limit-c.written])
	c.written += int64(n)
	c.ResponseWriter.(http.Flusher).Flush()
	if c.stall != nil {
		select {
		case <-c.stall.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	if c.after != nil {
		c.after()
	}
	panic(http.ErrAbortHandler)
}

// s3Server is gofakes3 with its in-memory backend behind faults, on
// 127.0.0.1, reached through AWS_ENDPOINT_URL_S3.
type s3Server struct {
	backend *s3mem.Backend
	faults  *faults
	url     string
}

func newS3Server(t testing.TB, bucket string) *s3Server {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	f := &faults{}
	ts := httptest.NewServer(f.handler(gofakes3.New(be).Server()))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_S3":         ts.URL,
		"AWS_ACCESS_KEY_ID":           "AKIATESTTESTTEST",
		"AWS_SECRET_ACCESS_KEY":       testSecret,
		"AWS_REGION":                  "us-east-1",
		"AWS_CONFIG_FILE":             dir + "/config",
		"AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	return &s3Server{backend: be, faults: f, url: ts.URL}
}

func (s *s3Server) put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	// As gofakes3 does for a PUT through HTTP.
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
	if _, err := s.backend.PutObject(bucket, key, meta, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

// gcsServer is fake-gcs-server behind faults, on 127.0.0.1, reached
// through STORAGE_EMULATOR_HOST.
type gcsServer struct {
	fake   *fakestorage.Server
	faults *faults
}

func newGCSServer(t testing.TB, bucket string) *gcsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Reads go to the XML API at the emulator's host, which the fake
	// serves only as its public host.
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http", PublicHost: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	f := &faults{}
	ts := httptest.NewUnstartedServer(f.handler(fake.HTTPHandler()))
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	t.Setenv("STORAGE_EMULATOR_HOST", ln.Addr().String())
	return &gcsServer{fake: fake, faults: f}
}

func (s *gcsServer) put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	// The hashes Cloud Storage keeps of every object (the fake computes
	// them only for uploads through its API).
	crc := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
	sum := md5.Sum(data)
	s.fake.CreateObject(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key, Generation: time.Now().UnixNano(),
			Crc32c:  base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc)),
			Md5Hash: base64.StdEncoding.EncodeToString(sum[:])},
		Content: data,
	})
}

// webServer serves files with http.ServeContent (Range, HEAD, ETag,
// Last-Modified) behind faults.
type webServer struct {
	mu     sync.Mutex
	files  map[string][]byte
	faults *faults
	url    string
}

func newWebServer(t testing.TB) *webServer {
	t.Helper()
	w := &webServer{files: map[string][]byte{}, faults: &faults{}}
	ts := httptest.NewServer(w.faults.handler(http.HandlerFunc(w.serve)))
	t.Cleanup(ts.Close)
	w.url = ts.URL
	return w
}

func (w *webServer) put(p string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[p] = data
}

func (w *webServer) serve(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	data, ok := w.files[r.URL.Path]
	w.mu.Unlock()
	if !ok {
		http.NotFound(rw, r)
		return
	}
	sum := sha256.Sum256(data)
	rw.Header().Set("ETag", fmt.Sprintf(`"%x"`, sum[:8]))
	http.ServeContent(rw, r, "", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), bytes.NewReader(data))
}

// randomBytes returns n reproducible pseudo-random bytes, with newlines
// so that they look like lines.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
		if b[i] < 4 {
			b[i] = '\n'
		}
	}
	return b
}

// testClient is a Client with quick retries and a short stall timeout.
func testClient(t testing.TB) *Client {
	t.Helper()
	return stallClient(t, 300*time.Millisecond)
}

// stallClient is testClient with another stall timeout.
func stallClient(t testing.TB, stall time.Duration) *Client {
	t.Helper()
	c, err := NewClient(WithRetry(4, time.Millisecond, 10*time.Millisecond), WithStallTimeout(stall))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mustParse parses a URL or fails the test.
func mustParse(t testing.TB, s string) Location {
	t.Helper()
	loc, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// store is one of the three kinds of server, set up for a test.
type store struct {
	name   string
	faults *faults
	url    func(key string) string
	put    func(key string, data []byte)
	// paths are the request paths a read of key may use (to deny them).
	paths func(key string) []string
}

// forEachStore runs f against gofakes3 (s3), fake-gcs-server (gs) and a
// web server (http), each new.
func forEachStore(t *testing.T, f func(t *testing.T, s store)) {
	for _, name := range []string{"s3", "gs", "http"} {
		t.Run(name, func(t *testing.T) { f(t, newStore(t, name)) })
	}
}

func newStore(t *testing.T, name string) store {
	const bucket = "arch"
	switch name {
	case "s3":
		srv := newS3Server(t, bucket)
		return store{name: name, faults: srv.faults,
			url:   func(k string) string { return "s3://" + bucket + "/" + k },
			put:   func(k string, d []byte) { srv.put(t, bucket, k, d) },
			paths: func(k string) []string { return []string{"/" + bucket + "/" + k} },
		}
	case "gs":
		srv := newGCSServer(t, bucket)
		return store{name: name, faults: srv.faults,
			url: func(k string) string { return "gs://" + bucket + "/" + k },
			put: func(k string, d []byte) { srv.put(t, bucket, k, d) },
			paths: func(k string) []string {
				return []string{"/" + bucket + "/" + k, "/storage/v1/b/" + bucket + "/o/" + k, "/download/storage/v1/b/" + bucket + "/o/" + k}
			},
		}
	default:
		srv := newWebServer(t)
		return store{name: name, faults: srv.faults,
			url:   func(k string) string { return srv.url + "/" + k },
			put:   func(k string, d []byte) { srv.put("/"+k, d) },
			paths: func(k string) []string { return []string{"/" + k} },
		}
	}
}

var debugRequests = false
