package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
		r := convbatch(t, nil, "run", "-o", filepath.Join(t.TempDir(), "out"), "--progress", "never", tc.arg)
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
