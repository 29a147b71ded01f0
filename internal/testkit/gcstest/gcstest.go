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

	"github.com/convbatch/convbatch/internal/testkit/bodycut"
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
	// Watch counts, records and cuts the GETs of object bodies.
	bodycut.Watch
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
		ts := httptest.NewUnstartedServer(s.Handler(fake.HTTPHandler(), bodyObject))
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
