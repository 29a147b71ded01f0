package source

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestNoCredentials: with no AWS credentials anywhere (the chain falls
// through to an instance metadata service that refuses, as in a container
// without a role), the error says that none were found and where they are
// looked for, not the metadata service's "HTTP 403"; it matches
// ErrNoCredentials; the store got no request; and the SDK writes nothing
// to stderr (no "WARN falling back to IMDSv1").
func TestNoCredentials(t *testing.T) {
	s := newS3Server(t, "arch")
	s.put(t, "arch", "k.jsonl", []byte("{}\n"))
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	t.Cleanup(imds.Close)
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_EC2_METADATA_DISABLED":              "false", "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL,
	} {
		t.Setenv(k, v)
	}
	stderr := captureStderr(t)
	c := testClient(t)
	_, err := c.Glob(t.Context(), "s3://arch/k.jsonl")
	logged := stderr()
	if err == nil {
		t.Fatal("stat with no credentials succeeded")
	}
	msg := err.Error()
	if !errors.Is(err, ErrNoCredentials) || !strings.Contains(msg, "no AWS credentials found") ||
		!strings.Contains(msg, "AWS_ACCESS_KEY_ID") || !strings.Contains(msg, "s3://arch/k.jsonl") || strings.Contains(msg, "403") {
		t.Errorf("error %q: want ErrNoCredentials, naming the URL, saying none were found and where, no HTTP 403", msg)
	}
	if Temporary(err) {
		t.Errorf("no credentials is Temporary: %v", err)
	}
	s.faults.mu.Lock()
	n := s.faults.requests
	s.faults.mu.Unlock()
	if n != 0 {
		t.Errorf("the store got %d requests, want none", n)
	}
	if logged != "" {
		t.Errorf("the SDK wrote to stderr: %q", logged)
	}
}

// captureStderr sends os.Stderr to a pipe until the returned function is
// called, which returns what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	restored := false
	restore := func() string {
		if restored {
			return ""
		}
		restored = true
		os.Stderr = old
		w.Close()
		return <-out
	}
	t.Cleanup(func() { restore() })
	return restore
}

// TestNoGoogleCredentials: with no application default credentials (no
// GOOGLE_APPLICATION_CREDENTIALS, no gcloud file, no metadata server),
// a gs:// stat says that none were found and where they are looked for,
// and matches ErrNoCredentials.
func TestNoGoogleCredentials(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{
		"STORAGE_EMULATOR_HOST": "", "GOOGLE_APPLICATION_CREDENTIALS": "", "HOME": home, "CLOUDSDK_CONFIG": home,
		"GCE_METADATA_HOST": "", "NO_GCE_CHECK": "true",
	} {
		t.Setenv(k, v)
	}
	_, err := testClient(t).Stat(t.Context(), mustParse(t, "gs://arch/k.jsonl"))
	if !errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), "no Google credentials found") ||
		!strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") || !strings.Contains(err.Error(), "gs://arch/k.jsonl") {
		t.Errorf("stat with no Google credentials: %v; want ErrNoCredentials naming the URL, saying none were found and where", err)
	}
}
