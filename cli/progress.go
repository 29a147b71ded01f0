package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/pipeline"
)

// What the progress line counts, and how it agrees with the summary:
//
//   - The byte count and the rate are uncompressed bytes (Progress.BytesIn,
//     the counter the report's totals.bytes_in and the summary come from),
//     in binary units (KiB, MiB, GiB) as everywhere else.
//   - The percentage and the time left measure the input files: bytes read
//     from them (compressed for .zst and .gz) against their total size on
//     disk, the only total known before the end. It is left out for
//     standard input.
//   - Reading runs ahead of the workers by the batches in flight, so when
//     every input byte is read the line says "finishing" instead of a time
//     left, and the percentage stays below 100 until the run ends.

// Redraw intervals: in place on a terminal; one line at a time elsewhere
// (--progress always into a log), so a log does not fill with redraws.
const (
	terminalEvery = 500 * time.Millisecond
	logEvery      = 10 * time.Second
)

// defaultWidth is the line width assumed when the terminal's is unknown.
const defaultWidth = 80

// field is one part of a progress line. The line keeps the fields in their
// order, dropping those of least priority (highest number) that do not fit.
type field struct {
	text     string
	priority int
}

// meter draws a progress line on w until stopped.
type meter struct {
	w io.Writer
	// inPlace redraws the line with \r and clear-to-end-of-line; else each
	// update is a line of its own.
	inPlace bool
	// width returns the terminal's columns (0 or less: unknown).
	width  func() int
	every  time.Duration
	fields func(elapsed time.Duration) []field

	done chan struct{}
	wg   sync.WaitGroup
}

// newMeter returns a meter for w under mode (auto, always, never), or nil
// when no progress is to be shown: mode never, or auto and w not a
// terminal. Only w is looked at, never the process's own streams.
func newMeter(w io.Writer, mode string, fields func(time.Duration) []field) *meter {
	fd, tty := terminalFd(w)
	if mode == "never" || (mode == "auto" && !tty) {
		return nil
	}
	m := &meter{w: w, inPlace: tty, every: logEvery, fields: fields, width: func() int { return 0 }}
	if tty {
		m.every = terminalEvery
		m.width = func() int {
			cols, _, err := term.GetSize(fd)
			if err != nil {
				return 0
			}
			return cols
		}
	}
	return m
}

// start draws the line every m.every until stop is called. A nil meter
// does nothing.
func (m *meter) start() {
	if m == nil {
		return
	}
	begin := time.Now()
	m.done = make(chan struct{})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(m.every)
		defer tick.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-tick.C:
				m.draw(time.Since(begin))
			}
		}
	}()
}

// stop ends the redraws and, on a terminal, clears the line so that what
// follows (the summary) starts on a clean line. A nil meter does nothing.
func (m *meter) stop() {
	if m == nil {
		return
	}
	close(m.done)
	m.wg.Wait()
	if m.inPlace {
		fmt.Fprint(m.w, "\r\033[K")
	}
}

// draw writes the line for elapsed.
func (m *meter) draw(elapsed time.Duration) {
	if !m.inPlace {
		fmt.Fprintln(m.w, fitLine(m.fields(elapsed), -1))
		return
	}
	width := m.width()
	if width <= 0 {
		width = defaultWidth
	}
	// One column short of the width: a character in the last column makes
	// some terminals wrap, and then \r redraws only the second row.
	fmt.Fprint(m.w, "\r\033[K"+fitLine(m.fields(elapsed), width-1))
}

// fitLine joins fields with ", ", leaving out the fields of least priority
// until the line is at most cols characters (no limit when cols < 0); a
// line that still does not fit is cut.
func fitLine(fields []field, cols int) string {
	join := func(limit int) string {
		var b strings.Builder
		for _, f := range fields {
			if f.priority > limit || f.text == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.text)
		}
		return b.String()
	}
	top := 0
	for _, f := range fields {
		top = max(top, f.priority)
	}
	line := join(top)
	for limit := top - 1; cols >= 0 && len(line) > cols && limit >= 0; limit-- {
		line = join(limit)
	}
	if cols >= 0 && len(line) > cols {
		line = line[:cols]
	}
	return line
}

// runFields returns the progress fields of a pipeline run: p's counters and
// total, the input files' size in bytes (-1 when unknown: standard input).
func runFields(p *pipeline.Progress, total int64) func(time.Duration) []field {
	return func(elapsed time.Duration) []field {
		return progressFields(p.BytesRead.Load(), total, p.BytesIn.Load(), p.Documents.Load(), p.Rejects.Load(), elapsed)
	}
}

// progressFields is the line of a run that has read read of total input
// bytes (total < 0: unknown), framed in uncompressed bytes, and written
// docs documents and rejects rejects in elapsed.
func progressFields(read, total, in, docs, rejects int64, elapsed time.Duration) []field {
	var fs []field
	frac := 1.0
	if total > 0 {
		frac = float64(read) / float64(total)
	}
	if total >= 0 {
		fs = append(fs, field{percent(frac), 0})
	}
	fs = append(fs,
		field{bytesize.Format(in) + " read", 2},
		field{plural(docs, "document", "documents"), 1},
		field{plural(rejects, "reject", "rejects"), 3},
		field{rate(in, elapsed), 4},
	)
	if total >= 0 {
		fs = append(fs, field{timeLeft(frac, elapsed), 0})
	}
	return fs
}

// percent is frac of the input read, rounded down and below 100 while the
// run goes on: the last documents are still being processed when the last
// byte has been read.
func percent(frac float64) string {
	pct := int(100 * frac)
	return fmt.Sprintf("%d%%", min(max(pct, 0), 99))
}

// timeLeft estimates the time left from the share of the input read so far,
// or says the run is finishing once everything is read. Below 1% read, or
// in the first second, there is no estimate worth showing.
func timeLeft(frac float64, elapsed time.Duration) string {
	switch {
	case frac >= 1:
		return "finishing"
	case frac < 0.01 || elapsed < time.Second:
		return ""
	}
	left := time.Duration(float64(elapsed) / frac * (1 - frac))
	return max(left, time.Second).Round(time.Second).String() + " left"
}

// rate is bytes per second over elapsed in binary units, or "" when
// elapsed is too short for a rate to mean anything.
func rate(bytes int64, elapsed time.Duration) string {
	if elapsed < 50*time.Millisecond {
		return ""
	}
	return bytesize.Format(int64(float64(bytes)/elapsed.Seconds())) + "/s"
}

// formatDuration prints d for people: milliseconds below a second, a
// tenth of a second below a minute, whole seconds above (1m5s, 2h0m3s).
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// plural is "1 document", "2 documents", "0 documents".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// terminalFd reports whether w is a terminal, and its descriptor.
func terminalFd(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}
