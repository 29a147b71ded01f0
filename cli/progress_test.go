package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/stream"
)

// fakeTerminal is a meter drawing in place on a buffer of the given width.
func fakeTerminal(width int, fields func(time.Duration) []field) (*meter, *bytes.Buffer) {
	var buf bytes.Buffer
	return &meter{w: &buf, inPlace: true, width: func() int { return width }, every: time.Hour, fields: fields}, &buf
}

// redraws splits what a meter wrote in place into its successive lines,
// failing if anything but \r + clear-to-end-of-line starts a redraw.
func redraws(t *testing.T, out string) []string {
	t.Helper()
	if strings.Contains(out, "\n") {
		t.Fatalf("an in-place line wrote a newline: %q", out)
	}
	parts := strings.Split(out, "\r\033[K")
	if parts[0] != "" {
		t.Fatalf("output does not start with a redraw: %q", out)
	}
	return parts[1:]
}

// TestProgressFitsWidth: at every width the line is redrawn in place and
// never reaches the last column; the fields that matter most stay.
func TestProgressFitsWidth(t *testing.T) {
	const gib = 1 << 30
	fields := func(elapsed time.Duration) []field {
		return progressFields(37*gib, 500*gib, 21*gib, 123456789, 4321, 30*time.Minute)
	}
	for _, width := range []int{200, 80, 60, 40, 20, 8, 1} {
		m, buf := fakeTerminal(width, fields)
		m.draw(time.Minute)
		m.draw(2 * time.Minute)
		lines := redraws(t, buf.String())
		if len(lines) != 2 {
			t.Fatalf("width %d: %d redraws, want 2: %q", width, len(lines), buf.String())
		}
		for _, l := range lines {
			if len(l) > width-1 {
				t.Errorf("width %d: line of %d characters: %q", width, len(l), l)
			}
		}
		if width >= 40 && (!strings.HasPrefix(lines[0], "7%") || !strings.Contains(lines[0], "123456789 documents") || !strings.Contains(lines[0], " left")) {
			t.Errorf("width %d: percentage, documents or time left missing: %q", width, lines[0])
		}
		if width == 200 && lines[0] != "7%, 21.0 GiB read, 123456789 documents, 4321 rejects, 11.9 MiB/s, 6h15m24s left" {
			t.Errorf("width 200: %q", lines[0])
		}
	}
}

// TestProgressNeverDoneEarly: with every input byte read but the run not
// ended, the line shows neither 100% nor a time left of 0s.
func TestProgressNeverDoneEarly(t *testing.T) {
	for _, tc := range []struct {
		read, total int64
		want        string
	}{
		{1000, 1000, "99%, 0 B read, 0 documents, 0 rejects, 0 B/s, finishing"},
		{999, 1000, "99%, 0 B read, 0 documents, 0 rejects, 0 B/s, 0s left"},
		{0, 0, "99%, 0 B read, 0 documents, 0 rejects, 0 B/s, finishing"},
		{500, -1, "0 B read, 0 documents, 0 rejects, 0 B/s"},
	} {
		got := fitLine(progressFields(tc.read, tc.total, 0, 0, 0, 10*time.Second), -1)
		if tc.read == 999 {
			// 999/1000 read in 10s leaves 10ms: shown as at least 1s.
			tc.want = strings.Replace(tc.want, "0s left", "1s left", 1)
		}
		if got != tc.want {
			t.Errorf("%d of %d: %q, want %q", tc.read, tc.total, got, tc.want)
		}
		if strings.Contains(got, "100%") || strings.Contains(got, " 0s left") {
			t.Errorf("%d of %d: %q", tc.read, tc.total, got)
		}
	}
}

// TestProgressStopClears: stop clears the line, so the summary that
// follows starts at the left margin on a line of its own.
func TestProgressStopClears(t *testing.T) {
	drawn := make(chan struct{}, 1)
	m, buf := fakeTerminal(80, func(time.Duration) []field {
		select {
		case drawn <- struct{}{}:
		default:
		}
		return []field{{"x", 0}}
	})
	m.every = time.Millisecond
	m.start()
	<-drawn
	m.stop()
	out := buf.String()
	if !strings.HasSuffix(out, "x\r\033[K") || strings.Count(out, "\r\033[K") < 2 {
		t.Fatalf("%q", out)
	}
	var nilMeter *meter
	nilMeter.start()
	nilMeter.stop()
}

// TestProgressNotATerminal: auto draws nothing on a writer that is not a
// terminal (a buffer here, never the test process's own stderr); always
// writes whole lines without escape codes.
func TestProgressNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	if m := newMeter(&buf, "auto", nil); m != nil {
		t.Fatal("auto drew on a buffer")
	}
	m := newMeter(&buf, "always", func(time.Duration) []field { return []field{{"a", 0}, {"b", 1}} })
	if m == nil || m.inPlace {
		t.Fatalf("always on a buffer: %+v", m)
	}
	m.draw(time.Second)
	m.draw(2 * time.Second)
	m.stop0()
	if got := buf.String(); got != "a, b\na, b\n" {
		t.Fatalf("%q", got)
	}
}

// stop0 stops a meter that was never started.
func (m *meter) stop0() {
	m.done = make(chan struct{})
	m.stop()
}

// TestProgressCountsWhatTheSummaryCounts: the byte counter the progress line
// shows ends equal to the report's bytes_in, which the summary prints, and
// the input bytes read end equal to the total the percentage divides by.
func TestProgressCountsWhatTheSummaryCounts(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "p.jsonl.zst")
	exp := genArchive(t, in, "--conversations", "60", "--seed", "8", "--faults", "0.1", "--max-doc-bytes", "256KiB")
	inputs, err := stream.Expand([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline.Progress{}
	res, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: inputs, Progress: p, MaxDocBytes: exp.MaxDocBytes, Archive: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.BytesIn.Load(), res.Report.Totals.BytesIn; got != want || want != exp.BytesIn {
		t.Errorf("progress counted %d uncompressed bytes, the report %d, gen %d", got, want, exp.BytesIn)
	}
	if got, want := p.BytesRead.Load(), inputs[0].Size; got != want {
		t.Errorf("progress read %d input bytes of %d", got, want)
	}
}

// TestGenProgress: gen's line measures what --conversations or --bytes
// asked for, and never says 100% before gen ends.
func TestGenProgress(t *testing.T) {
	p := &gen.Progress{}
	p.Documents.Store(50)
	p.Bytes.Store(3 << 20)
	for _, tc := range []struct {
		opts gen.Options
		want string
	}{
		{gen.Options{Conversations: 200}, "25%, 3.0 MiB written, 50 documents, 1.5 MiB/s, 6s left"},
		{gen.Options{Bytes: 4 << 20}, "75%, 3.0 MiB written, 50 documents, 1.5 MiB/s, 1s left"},
		{gen.Options{Conversations: 50}, "99%, 3.0 MiB written, 50 documents, 1.5 MiB/s, finishing"},
	} {
		if got := fitLine(genFields(p, tc.opts)(2*time.Second), -1); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opts, got, tc.want)
		}
	}
	dir := t.TempDir()
	if r := convbatch(t, nil, "gen", "-o", filepath.Join(dir, "g.jsonl"), "--conversations", "3", "--progress", "sometimes"); r.code != 2 || !strings.Contains(r.stderr, "--progress") {
		t.Errorf("--progress sometimes: %+v", r)
	}
	r := convbatch(t, nil, "gen", "-o", filepath.Join(dir, "g.jsonl"), "--conversations", "3", "--progress", "always")
	if r.code != 0 || strings.Contains(r.stderr, "\r") {
		t.Errorf("--progress always on a buffer: %+v", r)
	}
}
