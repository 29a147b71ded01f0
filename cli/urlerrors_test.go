package cli

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// TestOutageExitCode: a store that cannot be reached after the retries
// exits 3 (fatal: a scheduler that retries exit 3 retries an outage); a
// store that answers 404 or 403, a malformed URL and no input stay usage
// errors (2), for the user to fix. No message shows a password or a
// signature.
func TestOutageExitCode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there: every connection is refused
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy.jsonl":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/denied.jsonl":
			http.Error(w, "denied", http.StatusForbidden)
		default:
			http.NotFound(w, r)
		}
	}))
	defer web.Close()
	for _, tc := range []struct {
		arg  string
		code int
	}{
		{closed + "/a.jsonl?X-Amz-Signature=SECRET", ExitFatal},
		{web.URL + "/busy.jsonl?X-Amz-Signature=SECRET", ExitFatal},
		{web.URL + "/missing.jsonl?X-Amz-Signature=SECRET", ExitUsage},
		{web.URL + "/denied.jsonl?X-Amz-Signature=SECRET", ExitUsage},
		{"http://user:PASS WORD@host/x.jsonl?X-Amz-Signature=SECRET", ExitUsage},
	} {
		// Two tries, not the default five: the outage's exit code is the
		// same after any number (TestInputTries), in a fifth of the time.
		r := convbatch(t, nil, "run", "-o", filepath.Join(t.TempDir(), "out"), "--progress", "never", "--input-tries", "2", tc.arg)
		if r.code != tc.code {
			t.Errorf("run %s: exit %d (%s), want %d", tc.arg, r.code, r.stderr, tc.code)
		}
		if strings.Contains(r.stderr, "SECRET") || strings.Contains(r.stderr, "PASS") {
			t.Errorf("run %s shows a credential: %s", tc.arg, r.stderr)
		}
	}
}

// TestKeysByURL: --keys takes an s3:// URL in run, extract and verify,
// with the same verdicts as the same keyring on disk; a missing keyring
// object is a usage error naming its URL.
func TestKeysByURL(t *testing.T) {
	s3 := s3test.Start(t)
	const bucket = "cli-keys-url"
	s3.Bucket(t, bucket)
	dir := t.TempDir()
	input := filepath.Join(dir, "a.jsonl.zst")
	if _, err := gen.WriteFile(input, gen.Options{Conversations: 30, Seed: 5, Tamper: 0.2}); err != nil {
		t.Fatal(err)
	}
	keys, err := os.ReadFile(input + ".keys.json")
	if err != nil {
		t.Fatal(err)
	}
	s3.Put(t, bucket, "keys/notary.keys.json", keys)
	url := "s3://" + bucket + "/keys/notary.keys.json"
	for _, cmd := range []string{"run", "extract", "verify"} {
		args := func(k string) []string {
			a := []string{cmd, "--keys", k}
			if cmd != "verify" {
				a = append(a, "-o", filepath.Join(t.TempDir(), "out"), "--progress", "never")
			}
			return append(a, input)
		}
		want := convbatch(t, nil, args(input+".keys.json")...)
		got := convbatch(t, nil, args(url)...)
		if got.code != want.code || countsOf(firstLine(got.stderr+got.stdout)) != countsOf(firstLine(want.stderr+want.stdout)) {
			t.Errorf("%s --keys %s: exit %d %q; with the file: exit %d %q", cmd, url, got.code, firstLine(got.stderr+got.stdout), want.code, firstLine(want.stderr+want.stdout))
		}
		if !strings.Contains(want.stderr+want.stdout, "receipts:") || strings.Contains(got.stderr+got.stdout, "no --keys") {
			t.Errorf("%s --keys %s: %q; want the receipts checked against the keyring", cmd, url, firstLine(got.stderr+got.stdout))
		}
	}
	r := convbatch(t, nil, "verify", "--keys", "s3://"+bucket+"/keys/missing.json", input)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "s3://"+bucket+"/keys/missing.json") || !strings.Contains(r.stderr, "404") {
		t.Errorf("--keys of a missing object: exit %d, %q; want a usage error naming the URL and 404", r.code, r.stderr)
	}
}

// TestInputTries: --input-tries and --input-stall-timeout set the retries
// of the inputs given by URL, in their listing and stat (the expansion of
// the arguments), in their reading, and of a --keys given by URL: a store
// that answers 503 to every request is asked exactly --input-tries times
// a request, one that never answers is given up after the stall timeout
// (not the default minute), and values that cannot work are usage errors.
func TestInputTries(t *testing.T) {
	var heads, gets, keyGets atomic.Int64
	var buf bytes.Buffer
	if _, err := gen.Generate(&buf, gen.Options{Conversations: 3, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	doc := buf.Bytes()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/busy.jsonl" && r.Method == http.MethodHead:
			heads.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/doc.jsonl" && r.Method == http.MethodHead:
			w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
			w.Header().Set("ETag", `"v1"`)
		case r.URL.Path == "/doc.jsonl":
			gets.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/keys.json":
			keyGets.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/stall.jsonl":
			heads.Add(1)
			<-r.Context().Done() // never answers
		default:
			http.NotFound(w, r)
		}
	}))
	defer web.Close()
	local := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(local, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// cmd is the command, run unless set; its -o and --progress
		// are given for run only.
		cmd     string
		args    []string
		count   *atomic.Int64
		want    int64
		code    int
		message string
	}{
		{"listing, 1 try", "", []string{"--input-tries", "1", web.URL + "/busy.jsonl"}, &heads, 1, ExitFatal, "503"},
		{"listing, 3 tries", "", []string{"--input-tries", "3", web.URL + "/busy.jsonl"}, &heads, 3, ExitFatal, "503"},
		// An input that fails while read is a damaged input of the run
		// (exit 1), not held by OUT (pipeline's TestOutageIsNotHeld).
		{"reading, 2 tries", "", []string{"--input-tries", "2", web.URL + "/doc.jsonl"}, &gets, 2, ExitFindings, "503"},
		{"keyring, 2 tries", "", []string{"--input-tries", "2", "--keys", web.URL + "/keys.json", local}, &keyGets, 2, ExitFatal, "503"},
		{"stall", "", []string{"--input-tries", "2", "--input-stall-timeout", "200ms", web.URL + "/stall.jsonl"}, &heads, 2, ExitFatal, "stall"},
		// audit reads no input, but its --keys by URL: refused before
		// OUT is opened (which does not exist here).
		{"audit keyring, 2 tries", "audit", []string{"--input-tries", "2", "--keys", web.URL + "/keys.json", filepath.Join(t.TempDir(), "no-out")}, &keyGets, 2, ExitFatal, "503"},
		{"audit keyring, 1 try", "audit", []string{"--input-tries", "1", "--keys", web.URL + "/keys.json", filepath.Join(t.TempDir(), "no-out")}, &keyGets, 1, ExitFatal, "503"},
		{"audit, no try", "audit", []string{"--input-tries", "0", "--keys", web.URL + "/keys.json", filepath.Join(t.TempDir(), "no-out")}, &keyGets, 0, ExitUsage, "--input-tries 0"},
		{"no try", "", []string{"--input-tries", "0", local}, nil, 0, ExitUsage, "--input-tries 0"},
		{"no stall timeout", "", []string{"--input-stall-timeout", "0s", local}, nil, 0, ExitUsage, "--input-stall-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heads.Store(0)
			gets.Store(0)
			keyGets.Store(0)
			args := append([]string{"run", "-o", filepath.Join(t.TempDir(), "out"), "--progress", "never"}, tc.args...)
			if tc.cmd != "" {
				args = append([]string{tc.cmd}, tc.args...)
			}
			r := convbatch(t, nil, args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.message) {
				t.Errorf("exit %d, want %d with %q: %s", r.code, tc.code, tc.message, r.stderr)
			}
			if tc.count != nil && tc.count.Load() != tc.want {
				t.Errorf("%d requests, want %d (%s)", tc.count.Load(), tc.want, r.stderr)
			}
		})
	}
}
