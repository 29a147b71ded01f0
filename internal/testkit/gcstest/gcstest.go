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
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
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
	"github.com/convbatch/convbatch/internal/testkit/bucketclaim"
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

	// claims lends the bucket names to one running test at a time.
	claims bucketclaim.Claims

	mu sync.Mutex
	// generation is the last generation given to a Put (under mu).
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
		s := &Server{Host: ln.Addr().String(), fake: fake, generation: modTime.UnixMicro()}
		ts := httptest.NewUnstartedServer(s.Handler(fake.HTTPHandler(), bodyObject))
		ts.Listener.Close()
		ts.Listener = ln
		ts.Start()
		os.Setenv("STORAGE_EMULATOR_HOST", s.Host)
		server = s
	})
	return server
}

// Bucket creates the bucket name, empty, for t, without object
// versioning (an overwritten generation is gone, as in a bucket that
// keeps none), and removes it with its objects when t (and its subtests)
// end, so that a later test, or the next round of go test -count=N, may
// make it again. No other test may hold the name while t runs; a bucket
// of that name left on the server by no test (its removal failed) is
// removed first.
func (s *Server) Bucket(t testing.TB, name string) {
	t.Helper()
	s.claims.Take(t, name, func() { s.remove(t, name) })
	s.fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name})
}

// remove removes the bucket name, if there is one, with its objects, and
// forgets the Range headers of their GETs.
func (s *Server) remove(t testing.TB, name string) {
	t.Helper()
	store := s.fake.Backend()
	if _, err := store.GetBucket(name); err == nil {
		objs, err := store.ListObjects(name, "", false)
		if err != nil {
			t.Errorf("gcstest: list bucket %s: %v", name, err)
		}
		for _, o := range objs {
			if err := store.DeleteObject(name, o.Name); err != nil {
				t.Errorf("gcstest: remove %s/%s: %v", name, o.Name, err)
			}
		}
		if err := store.DeleteBucket(name); err != nil {
			t.Errorf("gcstest: remove bucket %s: %v", name, err)
		}
	}
	s.Forget(name)
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
	// The hashes Cloud Storage keeps of every object (the fake computes
	// them only for uploads through its API).
	crc := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
	sum := md5.Sum(data)
	obj := fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key, Generation: gen, Created: modTime, Updated: modTime,
			Crc32c:  base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc)),
			Md5Hash: base64.StdEncoding.EncodeToString(sum[:])},
		Content: data,
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
