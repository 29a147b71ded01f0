package main

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestLogGate checks that a closed gate drops INFO records, from the
// logger and from loggers derived with With and WithGroup, and still
// passes warnings; and that records written concurrently with close are
// either whole before it or absent after it.
func TestLogGate(t *testing.T) {
	var buf bytes.Buffer
	g := newLogGate(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	log := slog.New(g)
	derived := log.With("worker", 1).WithGroup("g")
	log.Info("before")
	derived.Info("derived before")
	g.close()
	log.Info("after")
	derived.Info("derived after")
	log.Warn("warned")
	derived.Error("failed")
	got := buf.String()
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{"before", true}, {"derived before", true}, {"after", false}, {"derived after", false}, {"warned", true}, {"failed", true},
	} {
		re := regexp.MustCompile(`(?m)msg=("` + regexp.QuoteMeta(tc.msg) + `"|` + regexp.QuoteMeta(tc.msg) + `)( |$)`)
		if has := re.MatchString(got); has != tc.want {
			t.Errorf("record %q in the output: %v, want %v:\n%s", tc.msg, has, tc.want, got)
		}
	}

	var mu sync.Mutex
	var out bytes.Buffer
	g = newLogGate(slog.NewTextHandler(lockedWriter{&mu, &out}, nil))
	log = slog.New(g)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				log.Info("late")
			}
		})
	}
	g.close()
	mu.Lock()
	out.WriteString("SUMMARY\n")
	mu.Unlock()
	wg.Wait()
	if s := out.String(); !strings.HasSuffix(s, "SUMMARY\n") {
		t.Errorf("an INFO record came after close returned:\n%s", s[strings.Index(s, "SUMMARY"):])
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
