// Package s3test runs an S3 server for tests: gofakes3, in memory, on
// 127.0.0.1, started once per test process and reached the way a user
// reaches an S3-compatible store, through the AWS SDK's standard
// variables (AWS_ENDPOINT_URL_S3, path-style, static test credentials).
// Package source keeps one S3 client per process, made on first use, so
// every test of a process shares the one server; each uses buckets of its
// own.
package s3test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/convbatch/convbatch/internal/testkit/bodycut"
	"github.com/convbatch/convbatch/internal/testkit/bucketclaim"
)

// Secret is the AWS secret access key the server's clients use: no
// output or error may ever show it.
const Secret = "s3test-secret-that-must-never-show"

// Server is the process's S3 server.
type Server struct {
	// URL is the server's endpoint (http://127.0.0.1:PORT).
	URL     string
	backend *s3mem.Backend

	// claims lends the bucket names to one running test at a time.
	claims bucketclaim.Claims

	// Watch counts, records and cuts the GETs of object bodies.
	bodycut.Watch
}

var (
	once   sync.Once
	server *Server
)

// userVariables are the AWS SDK's variables that a developer's shell may
// set and that would take the tests' client elsewhere or make it fail: a
// profile that the empty config file lacks ("failed to get shared config
// profile"), a session token or role beside the static test credentials,
// another CA bundle or endpoint, endpoints switched off or to FIPS or
// dual-stack. Start unsets them for the process.
var userVariables = []string{
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CA_BUNDLE", "AWS_ENDPOINT_URL",
	"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT",
}

// Start returns the process's S3 server, starting it and setting the AWS
// variables on first use (they stay set for the process, and the user's
// userVariables unset).
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() {
		// One fixed time for every object: a test that overwrites an
		// object of the same size sees only its ETag change.
		s := &Server{backend: s3mem.New(s3mem.WithTimeSource(gofakes3.FixedTimeSource(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))))}
		ts := httptest.NewServer(s.Handler(gofakes3.New(s.backend).Server(), isBody))
		s.URL = ts.URL
		// The shared config and credentials files are the empty
		// os.DevNull, never the user's ~/.aws ones (the SDK reads no
		// other file when these are set).
		for k, v := range map[string]string{
			"AWS_ENDPOINT_URL_S3":         ts.URL,
			"AWS_ACCESS_KEY_ID":           "AKIAS3TESTS3TEST",
			"AWS_SECRET_ACCESS_KEY":       Secret,
			"AWS_REGION":                  "us-east-1",
			"AWS_CONFIG_FILE":             os.DevNull,
			"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
			"AWS_EC2_METADATA_DISABLED":   "true",
		} {
			os.Setenv(k, v)
		}
		for _, k := range userVariables {
			os.Unsetenv(k)
		}
		server = s
	})
	return server
}

// Bucket creates the bucket name, empty, for t, and removes it with its
// objects when t (and its subtests) end, so that a later test, or the
// next round of go test -count=N, may make it again. No other test may
// hold the name while t runs; a bucket of that name left on the server
// by no test (its removal failed) is removed first.
func (s *Server) Bucket(t testing.TB, name string) {
	t.Helper()
	s.claims.Take(t, name, func() { s.remove(t, name) })
	if err := s.backend.CreateBucket(name); err != nil {
		t.Fatal(err)
	}
}

// remove removes the bucket name, if there is one, with its objects, and
// forgets the Range headers of their GETs.
func (s *Server) remove(t testing.TB, name string) {
	t.Helper()
	if err := s.backend.ForceDeleteBucket(name); err != nil && !gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket) {
		t.Errorf("s3test: remove bucket %s: %v", name, err)
	}
	s.Forget(name)
}

// Put writes the object bucket/key, as a PUT through the server would,
// at the server's one modification time.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	if _, err := s.backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

// Keys returns the keys of bucket that begin with prefix, in key order.
func (s *Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	list, err := s.backend.ListBucket(bucket, &gofakes3.Prefix{HasPrefix: true, Prefix: prefix}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(list.Contents))
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	return keys
}

// Get returns the bytes of the object bucket/key.
func (s *Server) Get(t testing.TB, bucket, key string) []byte {
	t.Helper()
	obj, err := s.backend.GetObject(bucket, key, nil)
	if err != nil {
		t.Fatalf("s3test: get %s/%s: %v", bucket, key, err)
	}
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Download writes every object of bucket under prefix to dir, at its key
// without the prefix, as a directory of files, and returns dir.
func (s *Server) Download(t testing.TB, bucket, prefix, dir string) string {
	t.Helper()
	for _, key := range s.Keys(t, bucket, prefix) {
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(key, prefix)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, s.Get(t, bucket, key), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// isBody reports a GET of an object's body, as "bucket/key" (not a
// listing, which has a query or no key).
func isBody(r *http.Request) (string, bool) {
	q := r.URL.Query()
	obj := strings.TrimPrefix(r.URL.Path, "/")
	return obj, r.Method == http.MethodGet && q.Get("list-type") == "" && !q.Has("prefix") && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1
}
