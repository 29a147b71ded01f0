package chartcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// fakeChromium writes a stand-in for Chromium that kills itself with
// SIGSEGV on its first crashes runs and prints "ok" after, counting its
// runs in the file it returns.
func fakeChromium(t *testing.T, crashes int) (bin, runs string) {
	t.Helper()
	dir := t.TempDir()
	bin, runs = filepath.Join(dir, "chromium"), filepath.Join(dir, "runs")
	script := fmt.Sprintf("#!/bin/sh\nn=$(cat %[1]s 2>/dev/null || echo 0)\necho $((n+1)) > %[1]s\n"+
		"if [ $n -lt %[2]d ]; then kill -SEGV $$; fi\necho ok\n", runs, crashes)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, runs
}

// fatalTB records Fatalf instead of failing the test that runs it.
type fatalTB struct {
	*testing.T
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestRunCrashedOnce: a Chromium killed by a signal is run once more,
// and Run gives the second run's output; one that crashes twice fails
// the test, naming the signal.
func TestRunCrashedOnce(t *testing.T) {
	for _, tc := range []struct {
		crashes, runs int
		fatal         string
	}{
		{0, 1, ""},
		{1, 2, ""},
		{2, 2, "segmentation fault"},
	} {
		t.Run(strconv.Itoa(tc.crashes), func(t *testing.T) {
			bin, runs := fakeChromium(t, tc.crashes)
			tb := &fatalTB{T: t}
			var out []byte
			done := make(chan struct{})
			go func() {
				defer close(done)
				out = Run(tb, bin, "about:blank")
			}()
			<-done
			b, err := os.ReadFile(runs)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n != tc.runs {
				t.Errorf("%d runs, want %d", n, tc.runs)
			}
			if tc.fatal == "" && (tb.fatal != "" || string(out) != "ok\n") {
				t.Errorf("output %q, fatal %q; want ok", out, tb.fatal)
			}
			if tc.fatal != "" && !strings.Contains(tb.fatal, tc.fatal) {
				t.Errorf("fatal %q; want it to name %q", tb.fatal, tc.fatal)
			}
		})
	}
}
