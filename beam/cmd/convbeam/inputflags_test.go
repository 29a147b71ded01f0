package main

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/exitcode"
	"github.com/convbatch/convbatch/source"
)

// TestInputFlags: --input_tries and --input_stall_timeout, and their
// dashed aliases as convbatch spells them (--input-tries,
// --input-stall-timeout), set the same values, at convbatch's defaults
// when not given; a value no client can work with is a usage error, one
// line naming the flag, exit 2.
func TestInputFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		tries int
		stall time.Duration
	}{
		{"defaults", nil, source.DefaultTries, source.DefaultStallTimeout},
		{"underscores", []string{"--input_tries", "7", "--input_stall_timeout", "2m"}, 7, 2 * time.Minute},
		{"dashes", []string{"--input-tries", "7", "--input-stall-timeout", "2m"}, 7, 2 * time.Minute},
		{"one of each", []string{"--input-tries", "3", "--input_stall_timeout", "90s"}, 3, 90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o options
			fs := flag.NewFlagSet("convbeam", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.define(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if o.inputTries != tc.tries || o.inputStall != tc.stall {
				t.Errorf("tries %d, stall timeout %v; want %d and %v", o.inputTries, o.inputStall, tc.tries, tc.stall)
			}
		})
	}

	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"a","messages":[{"role":"user","content":"hi"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		line string
	}{
		{"no try", []string{"--input_tries", "0"}, "convbeam: --input_tries 0: want at least 1" + hint},
		{"no try, dashed", []string{"--input-tries", "0"}, "convbeam: --input_tries 0: want at least 1" + hint},
		{"negative tries", []string{"--input_tries", "-2"}, "convbeam: --input_tries -2: want at least 1" + hint},
		{"no stall timeout", []string{"--input_stall_timeout", "0s"}, "convbeam: --input_stall_timeout 0s: want a positive duration (e.g. 60s, 5m)" + hint},
		{"no stall timeout, dashed", []string{"--input-stall-timeout", "0s"}, "convbeam: --input_stall_timeout 0s: want a positive duration (e.g. 60s, 5m)" + hint},
		{"negative stall timeout", []string{"--input_stall_timeout", "-1s"}, "convbeam: --input_stall_timeout -1s: want a positive duration (e.g. 60s, 5m)" + hint},
		{"not a duration", []string{"--input_stall_timeout", "60"}, `convbeam: invalid value "60" for flag -input_stall_timeout: parse error` + hint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"--input", in, "--output", out}, tc.args...), &stdout, &stderr)
			if code != exitcode.Usage || stderr.String() != tc.line+"\n" || stdout.Len() > 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d and\n%q", code, stderr.String(), stdout.String(), exitcode.Usage, tc.line)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote into the output directory: %v", err)
	}
}

// TestInputFlagsReachPreflight: the flags set the retries of what
// convbeam asks a store for before it submits the job, through either
// spelling: an input whose stat a web server answers 503 is asked
// --input_tries times, a keyring by URL too, and a stat that never
// answers is given up after two tries of --input-stall-timeout; each
// ends the command with exit 3 and nothing submitted, as a store that
// fails after its retries does.
func TestInputFlagsReachPreflight(t *testing.T) {
	var heads, keyGets atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy.jsonl":
			heads.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/stall.jsonl":
			heads.Add(1)
			<-r.Context().Done() // never answers
		case "/keys.json":
			keyGets.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer web.Close()
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../../testdata/sample.jsonl.zst")
	for i, tc := range []struct {
		name  string
		args  []string
		count *atomic.Int64
		want  int64
		msg   string
	}{
		{"listing, --input_tries 2", []string{"--input", web.URL + "/busy.jsonl", "--input_tries", "2"}, &heads, 2, "503"},
		{"listing, --input-tries 3", []string{"--input", web.URL + "/busy.jsonl", "--input-tries", "3"}, &heads, 3, "503"},
		{"keyring, --input_tries 2", []string{"--input", sample, "--keys", web.URL + "/keys.json", "--input_tries", "2"}, &keyGets, 2, "503"},
		{"stall, --input-stall-timeout 200ms", []string{"--input", web.URL + "/stall.jsonl", "--input-tries", "2", "--input-stall-timeout", "200ms"}, &heads, 2, "stall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heads.Store(0)
			keyGets.Store(0)
			out := filepath.Join(dir, "out-"+string(rune('a'+i)))
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(append(tc.args, "--output", out), &stdout, &stderr)
			if code != exitcode.Fatal || !strings.Contains(stderr.String(), tc.msg) || !strings.Contains(stderr.String(), "nothing was submitted") {
				t.Errorf("exit %d, stderr %q; want %d, %q and nothing submitted", code, stderr.String(), exitcode.Fatal, tc.msg)
			}
			if n := tc.count.Load(); n != tc.want {
				t.Errorf("%d requests, want %d (after %v)", n, tc.want, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}
