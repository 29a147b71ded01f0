// Command jcsbench measures convbatch's canonicalizer against the reference
// github.com/gowebpki/jcs on the same documents in one run: rounds
// alternate between the two, and the medians and their ratio are printed.
//
//	go run ./bench/jcsbench -in bench/data/bench-1GiB.jsonl -mb 64 -rounds 5
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/verify"
)

func main() {
	in := flag.String("in", "", "a .jsonl or .jsonl.zst archive (for example from convbatch gen)")
	mb := flag.Int("mb", 64, "megabytes of documents to load")
	rounds := flag.Int("rounds", 5, "rounds of each implementation")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "jcsbench: -in is required")
		os.Exit(2)
	}
	docs, total, err := load(*in, *mb<<20)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jcsbench:", err)
		os.Exit(1)
	}
	// Same output first: every document must canonicalize identically.
	var c verify.Canonicalizer
	buf := make([]byte, 0, 1<<20)
	for i, d := range docs {
		ours, oerr := c.Append(nil, d)
		ref, rerr := jcs.Transform(d)
		if (oerr == nil) != (rerr == nil) || !bytes.Equal(ours, ref) {
			fmt.Fprintf(os.Stderr, "jcsbench: document %d: outputs differ (ours %v, reference %v)\n", i, oerr, rerr)
			os.Exit(1)
		}
	}
	impls := []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{
		{"convbatch verify.Canonicalizer", func(d []byte) ([]byte, error) { return c.Append(buf[:0], d) }},
		{"gowebpki/jcs.Transform", jcs.Transform},
		{"convbatch canonicalize+sha256", func(d []byte) ([]byte, error) {
			out, err := c.Append(buf[:0], d)
			sha256.Sum256(out)
			return out, err
		}},
		// What run pays: the tape is already parsed by the document checks,
		// so hashing costs only the canonical write and SHA-256.
		{"convbatch write from parsed tape", func(d []byte) ([]byte, error) {
			return nil, nil
		}},
	}
	tapes := make([]*jsonscan.Tape, len(docs))
	for i, d := range docs {
		tapes[i] = &jsonscan.Tape{}
		if err := tapes[i].Parse(d, 0); err != nil {
			fmt.Fprintf(os.Stderr, "jcsbench: document %d: %v\n", i, err)
			os.Exit(1)
		}
	}
	times := make([][]float64, len(impls))
	for range *rounds {
		for i, impl := range impls {
			// Each timing starts with a clean heap, so no implementation pays
			// for collecting the garbage of the one before it.
			runtime.GC()
			start := time.Now()
			if i == len(impls)-1 {
				for _, tp := range tapes {
					buf, _ = c.AppendTape(buf[:0], tp, nil)
				}
			} else {
				for _, d := range docs {
					impl.fn(d)
				}
			}
			times[i] = append(times[i], time.Since(start).Seconds())
		}
	}
	fmt.Printf("%d documents, %.1f MB, %d rounds each, interleaved; medians:\n", len(docs), float64(total)/1e6, *rounds)
	var rates []float64
	for i, impl := range impls {
		slices.Sort(times[i])
		med := times[i][len(times[i])/2]
		rate := float64(total) / med / 1e6
		rates = append(rates, rate)
		fmt.Printf("  %-32s %8.1f MB/s\n", impl.name, rate)
	}
	fmt.Printf("ratio ours/reference: %.1fx\n", rates[0]/rates[1])
}

func load(path string, limit int) ([][]byte, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		dec, err := zstd.NewReader(f)
		if err != nil {
			return nil, 0, err
		}
		defer dec.Close()
		r = dec
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var docs [][]byte
	total := 0
	for sc.Scan() && total < limit {
		d := bytes.Clone(sc.Bytes())
		docs = append(docs, d)
		total += len(d)
	}
	return docs, total, sc.Err()
}
