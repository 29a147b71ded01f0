package s3test_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/convbatch/convbatch/internal/testkit/s3test"
	"github.com/convbatch/convbatch/source"
)

// TestUserVariablesIgnored runs the test binary again with AWS variables
// a developer's shell may hold (a profile the tests' empty config file
// lacks, endpoints switched off, a stale session token): the tests' S3
// client must still reach the server and read an object.
func TestUserVariablesIgnored(t *testing.T) {
	if os.Getenv("S3TEST_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUserVariablesIgnored$", "-test.count=1")
		cmd.Env = append(os.Environ(), "S3TEST_CHILD=1", "AWS_PROFILE=no-such-profile",
			"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true", "AWS_SESSION_TOKEN=stale-token")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("with the user's AWS variables set: %v\n%s", err, out)
		}
		return
	}
	s := s3test.Start(t)
	s.Bucket(t, "s3test-user-vars")
	s.Put(t, "s3test-user-vars", "a.jsonl", []byte("{}\n"))
	loc, err := source.Parse("s3://s3test-user-vars/a.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r, err := source.Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "{}\n" {
		t.Fatalf("read %q, %v", b, err)
	}
}
