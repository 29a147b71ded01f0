package cli

import (
	"bytes"
	"testing"
)

// TestMainNilStdin: a nil stdin reads as empty, never as the test process's
// own standard input.
func TestMainNilStdin(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"hash", "-"}, nil, &out, &errb); code != ExitOK || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
