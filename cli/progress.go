package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/pipeline"
)

// startProgress draws a progress line on w every half second while a run
// goes on, when mode is always, or auto and w is a terminal. The returned
// function stops it and clears the line.
func startProgress(w io.Writer, mode string, p *pipeline.Progress, total int64) func() {
	if mode == "never" || (mode == "auto" && !isTerminal(w)) {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
				fmt.Fprint(w, "\r\033[K"+progressLine(p, total, time.Since(start)))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

func progressLine(p *pipeline.Progress, total int64, elapsed time.Duration) string {
	read := p.BytesRead.Load()
	docs := p.Documents.Load()
	secs := elapsed.Seconds()
	line := bytesize.Format(read)
	if total > 0 {
		frac := float64(read) / float64(total)
		line = fmt.Sprintf("%s of %s (%.0f%%)", bytesize.Format(read), bytesize.Format(total), 100*frac)
		if frac > 0.01 {
			left := time.Duration(secs/frac*(1-frac)) * time.Second
			line += fmt.Sprintf(", %s left", left.Round(time.Second))
		}
	}
	return fmt.Sprintf("%s, %d documents (%.0f/s), %d rejects", line, docs, float64(docs)/max(secs, 1e-9), p.Rejects.Load())
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
