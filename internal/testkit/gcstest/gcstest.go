// Package gcstest runs a Cloud Storage server for tests:
// fake-gcs-server (fakestorage), in memory, on 127.0.0.1, started once
// per test process and reached the way a user reaches an emulator,
// through STORAGE_EMULATOR_HOST (host:port, so http://, and no
// credentials). Package source keeps one client per process, made on
// first use, which reads the variable then: Start must come before the
// process's first gs:// use, and every test of a process shares the one
// server; each uses buckets of its own.
package gcstest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// modTime is every object's creation and update time: a test that
// overwrites an object of the same size sees only its generation (and
// ETag) change.
var modTime = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// Server is the process's Cloud Storage server.
type Server struct {
	// Host is the server's address (127.0.0.1:PORT), the value of
	// STORAGE_EMULATOR_HOST.
	Host string
	fake *fakestorage.Server

	mu sync.Mutex
	// buckets are the buckets made so far.
	buckets map[string]bool
	// generation is the last generation given to a Put.
	generation int64
	// cuts are the GETs of object bodies still to cut, each after the
	// number of body bytes given.
	cuts []int64
	// gets counts the GETs of object bodies served.
	gets int
	// ranges are the Range headers of the GETs of each object's body
	// ("" for none), by "bucket/key".
	ranges map[string][]string
}

var (
	once   sync.Once
	server *Server
)

// Start returns the process's Cloud Storage server, starting it and
// setting STORAGE_EMULATOR_HOST on first use (it stays set for the
// process).
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		// The fake serves the XML API's paths only at its public host, so
		// that is its own address; source reads through the JSON API's
		// /download/storage/v1/ paths, served at any host.
		fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http", PublicHost: ln.Addr().String()})
		if err != nil {
			panic(err)
		}
		s := &Server{Host: ln.Addr().String(), fake: fake, buckets: map[string]bool{}, generation: modTime.UnixMicro()}
		ts := httptest.NewUnstartedServer(s.handler(fake.HTTPHandler()))
		ts.Listener.Close()
		ts.Listener = ln
		ts.Start()
		os.Setenv("STORAGE_EMULATOR_HOST", s.Host)
		server = s
	})
	return server
}

// Bucket creates the bucket name (unique to the test that asks), without
// object versioning: an overwritten generation is gone, as in a bucket
// that keeps none.
func (s *Server) Bucket(t testing.TB, name string) {
	t.Helper()
	s.mu.Lock()
	taken := s.buckets[name]
	s.buckets[name] = true
	s.mu.Unlock()
	if taken {
		t.Fatalf("gcstest: bucket %s exists", name)
	}
	s.fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name})
}

// Put writes the object bucket/key, as an upload through the server
// would, as a new generation (each Put one more than the last, as
// Cloud Storage's are increasing) at the server's one modification time.
// Its ETag is its MD5, as the fake makes it.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	s.mu.Lock()
	s.generation++
	gen := s.generation
	s.mu.Unlock()
	obj := fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key, Generation: gen, Created: modTime, Updated: modTime},
		Content:     data,
	}
	if err := s.fake.CreateObjectStreaming(obj.StreamingObject()); err != nil {
		t.Fatal(err)
	}
}

// CutNextGets makes the next GETs of object bodies end the connection
// after n body bytes each, as a server that drops a connection in the
// middle of an object does.
func (s *Server) CutNextGets(n int64, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range times {
		s.cuts = append(s.cuts, n)
	}
}

// Gets returns the GETs of object bodies served so far.
func (s *Server) Gets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}

// Ranges returns the Range headers of the GETs of the body of
// bucket/key served so far, in order, "" for a GET of the whole object.
func (s *Server) Ranges(bucket, key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges[bucket+"/"+key]...)
}

// bodyObject returns "bucket/key" for a GET of an object's body (the
// JSON API's /download/storage/v1/b/{bucket}/o/{key}, or the XML API's
// /{bucket}/{key}), and false for metadata and listings (/storage/v1/).
func bodyObject(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet || strings.HasPrefix(r.URL.Path, "/storage/") {
		return "", false
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/download/storage/v1/b/"); ok {
		bucket, key, ok := strings.Cut(rest, "/o/")
		return bucket + "/" + key, ok && key != ""
	}
	obj := strings.TrimPrefix(r.URL.Path, "/")
	return obj, strings.Contains(obj, "/")
}

// handler counts the GETs of object bodies and cuts those asked for.
func (s *Server) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		obj, body := bodyObject(r)
		limit := int64(-1)
		if body {
			s.mu.Lock()
			s.gets++
			if s.ranges == nil {
				s.ranges = map[string][]string{}
			}
			s.ranges[obj] = append(s.ranges[obj], r.Header.Get("Range"))
			if len(s.cuts) > 0 {
				limit, s.cuts = s.cuts[0], s.cuts[1:]
			}
			s.mu.Unlock()
		}
		if limit < 0 {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&cutWriter{ResponseWriter: w, left: limit}, r)
	})
}

// cutWriter passes left body bytes, then aborts the response, which
// closes the connection in the middle of the body.
type cutWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}
