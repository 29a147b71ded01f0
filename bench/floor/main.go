// Command floor measures the single-core speed of each stage of the nightly
// job's floor (issue 28) on a whole archive: zstd decoding, parsing, RFC
// 8785 canonicalization, SHA-256 of the canonical forms, the consensus
// receipts' signature checks against the keyring, and the zstd compression
// of the archive written back. Each stage runs on one goroutine with
// GOMAXPROCS=1, so that everything it costs (its garbage collection
// included) is paid on one core; rounds are interleaved between the stages
// and the medians are printed. The floor is the sum of the stages'
// single-core seconds divided by the number of cores: the wall time a run
// doing that work and nothing else, spread evenly on every core, would take.
//
//	go run ./bench/floor -in bench/data/bench-1GiB.jsonl.zst -keys bench/data/bench-1GiB.jsonl.keys.json -rounds 3 -json /tmp/floor.json
//
// Built as bin/convbatch is, with its profile-guided optimization, add
// -pgo=cmd/convbatch/default.pgo after go run (as bench/run.sh runs
// jcsbench).
//
// The whole archive is held in memory, decompressed (a 1 GiB archive needs
// about 3 GiB: its bytes, their canonical forms and the compressed file),
// and what a stage needs from the stages before it (parsed tapes,
// canonical forms) is prepared outside its timed region. A plain .jsonl
// input has no decode stage.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/verify"
)

// main parses the flags, loads the archive and the keyring, measures and
// prints; errors go to stderr with exit status 1 (2 for bad usage).
func main() {
	in := flag.String("in", "", "the archive: a .jsonl.zst (or .zst) or a plain .jsonl file (required)")
	keys := flag.String("keys", "", "the keyring the run is given with --keys (the .keys.json convbatch gen writes beside the archive); none: receipts are checked for self-consistency only")
	rounds := flag.Int("rounds", 3, "rounds of each stage, interleaved")
	cores := flag.Int("cores", 0, "cores the floor spreads the work on (0: runtime.NumCPU())")
	jsonOut := flag.String("json", "", "also write the results as a JSON object to this file")
	flag.Parse()
	switch {
	case *in == "":
		usage("-in is required")
	case flag.NArg() > 0:
		usage(fmt.Sprintf("unexpected arguments %q", flag.Args()))
	case *rounds < 1:
		usage("-rounds must be at least 1")
	case *cores < 0:
		usage("-cores must be at least 1 (0: runtime.NumCPU())")
	}
	if *cores == 0 {
		*cores = runtime.NumCPU()
	}
	// One core for everything: the timed goroutine and whatever runs
	// beside it (the garbage collector's workers) share one P, so a
	// stage's wall time is all the CPU it costs.
	runtime.GOMAXPROCS(1)
	rep, err := run(*in, *keys, *rounds, *cores)
	if err != nil {
		fail(err)
	}
	printReport(os.Stdout, rep)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, rep); err != nil {
			fail(err)
		}
	}
}

// usage reports a command-line mistake and exits with status 2.
func usage(msg string) {
	fmt.Fprintln(os.Stderr, "floor:", msg)
	fmt.Fprintln(os.Stderr, "usage: go run ./bench/floor -in ARCHIVE.jsonl.zst -keys KEYS.json [-rounds 3] [-cores N] [-json FILE]")
	os.Exit(2)
}

// fail reports err and exits with status 1.
func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}

// run loads the archive at path and the keyring at keys ("" for none) and
// measures every stage rounds times.
func run(path, keys string, rounds, cores int) (*report, error) {
	c, err := loadCorpus(path)
	if err != nil {
		return nil, err
	}
	var kr *verify.Keyring
	if keys != "" {
		if kr, err = verify.LoadKeyring(keys); err != nil {
			return nil, err
		}
	}
	rep, err := measure(c, kr, rounds, cores)
	if err != nil {
		return nil, err
	}
	rep.Keys = keys
	return rep, nil
}

// corpus is an archive held in memory, with what the stages need of it
// prepared (untimed) beforehand.
type corpus struct {
	// path names the input; zstd reports a .zst one.
	path string
	zstd bool
	// file is the input's bytes as stored; data its decompressed bytes
	// (file itself for a plain input).
	file, data []byte
	// lines are the document candidates, as the run's reader frames them:
	// every line but the blank ones, without its LF, a trailing CR and
	// (on the first line) a byte-order mark. They alias data.
	lines [][]byte
	// blank counts the lines of only spaces, tabs and CRs, which the run
	// skips.
	blank int
	// docs are the lines that parse as a JSON object (the run's
	// documents); of the other lines, which the run rejects, refused are
	// those the parser refuses and notObjects the other JSON values.
	docs                [][]byte
	refused, notObjects int
	// receipts are the indexes in docs of the documents whose root
	// object has a consensusReceipt member, which the run checks.
	receipts []int
	// canon holds each document's canonical form, nil where the document
	// has none (counted in canonFailures); canonBytes is their total.
	canon         [][]byte
	canonFailures int
	canonBytes    int64
}

// zstdMagic starts every zstd frame (RFC 8878, 3.1.1), little-endian.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// newDecoder returns a zstd decoder made as the run's reader makes its own
// (stream.NewReader with the default options: the 128 MiB window cap, one
// goroutine, content checksums left to the reader).
func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderMaxWindow(stream.DefaultZstdMaxWindow),
		zstd.WithDecoderMaxMemory(stream.DefaultZstdMaxWindow),
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(false),
		zstd.IgnoreChecksum(true))
}

// loadCorpus reads the archive at path into memory, decompresses it if it
// is a .zst, frames its lines and prepares each stage's input: it parses
// every line (counting the failures) and canonicalizes every document.
func loadCorpus(path string) (*corpus, error) {
	c := &corpus{path: path}
	switch {
	case strings.HasSuffix(path, ".zst"):
		c.zstd = true
	case strings.HasSuffix(path, ".jsonl"):
	default:
		return nil, fmt.Errorf("%s: want a .jsonl.zst (or .zst) or a .jsonl file", path)
	}
	var err error
	if c.file, err = os.ReadFile(path); err != nil {
		return nil, err
	}
	magic := len(c.file) >= 4 && bytes.Equal(c.file[:4], zstdMagic)
	switch {
	case c.zstd && !magic:
		return nil, fmt.Errorf("%s: not zstd (no zstd magic number at its start)", path)
	case !c.zstd && magic:
		return nil, fmt.Errorf("%s: holds zstd, not JSONL: name it .jsonl.zst", path)
	}
	c.data = c.file
	if c.zstd {
		if c.data, err = decompress(c.file); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	c.frame()
	c.prepare()
	return c, nil
}

// decompress returns the decompressed bytes of a zstd stream, its content
// checksums checked.
func decompress(comp []byte) ([]byte, error) {
	dec, err := zstd.NewReader(bytes.NewReader(comp),
		zstd.WithDecoderMaxWindow(stream.DefaultZstdMaxWindow),
		zstd.WithDecoderMaxMemory(stream.DefaultZstdMaxWindow),
		zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(dec); err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return buf.Bytes(), nil
}

// frame splits c.data into lines as the run's reader does: blank lines
// counted and skipped, a trailing CR and the first line's byte-order mark
// dropped.
func (c *corpus) frame() {
	data := c.data
	for first := true; len(data) > 0; first = false {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.Trim(line, " \t\r")) == 0 {
			c.blank++
			continue
		}
		c.lines = append(c.lines, bytes.TrimSuffix(line, []byte("\r")))
	}
}

// prepare parses every line, keeps the documents (JSON objects) and those
// of them with a receipt, and writes every document's canonical form into
// one buffer, as the sha256 stage's input.
func (c *corpus) prepare() {
	var t jsonscan.Tape
	var canon verify.Canonicalizer
	// Room for canonical forms as long as the lines, and a little more.
	total := 0
	for _, line := range c.lines {
		total += len(line)
	}
	arena := make([]byte, 0, total+total/16+64)
	spans := make([][2]int, 0, len(c.lines))
	for _, line := range c.lines {
		if t.Parse(line, 0) != nil {
			c.refused++
			continue
		}
		if t.Kind(0) != jsonscan.Object {
			c.notObjects++
			continue
		}
		if t.Lookup(0, "consensusReceipt") >= 0 {
			c.receipts = append(c.receipts, len(c.docs))
		}
		c.docs = append(c.docs, line)
		start := len(arena)
		out, err := canon.AppendTape(arena, &t, nil)
		if err != nil {
			c.canonFailures++
			spans = append(spans, [2]int{-1, -1})
			continue
		}
		if len(out) > 0 && &out[0] == &line[0] {
			// Into an empty arena, a canonical document is returned
			// itself, with data's capacity: appending to it would write
			// over the lines after it. It is copied instead.
			out = append(arena, line...)
		}
		arena = out
		spans = append(spans, [2]int{start, len(arena)})
	}
	c.canon = make([][]byte, len(spans))
	for i, s := range spans {
		if s[0] >= 0 {
			c.canon[i] = arena[s[0]:s[1]:s[1]]
			c.canonBytes += int64(s[1] - s[0])
		}
	}
}

// docBytes is the total length of the documents.
func (c *corpus) docBytes() int64 {
	var n int64
	for _, d := range c.docs {
		n += int64(len(d))
	}
	return n
}

// clock adds up the wall and CPU time of the timed regions of one run of a
// stage.
type clock struct {
	wall, cpu time.Duration
	t0        time.Time
	c0        time.Duration
}

// start opens a timed region.
func (k *clock) start() {
	k.c0 = cpuTime()
	k.t0 = time.Now()
}

// stop closes the timed region start opened.
func (k *clock) stop() {
	k.wall += time.Since(k.t0)
	k.cpu += cpuTime() - k.c0
}

// sample is one run of a stage: its timed wall and CPU time, the bytes it
// processed and, for the zstd stages, the compressed bytes read or written.
type sample struct {
	clock
	bytes, compressed int64
}

// decodeRun decompresses the whole input once to a discarding sink, read
// 256 KiB at a time as the run's reader reads its decoder.
func decodeRun(c *corpus) (sample, error) {
	var s sample
	dec, err := newDecoder()
	if err != nil {
		return s, err
	}
	defer dec.Close()
	buf := make([]byte, 256<<10)
	src := bytes.NewReader(c.file)
	s.start()
	err = dec.Reset(src)
	for err == nil {
		var n int
		n, err = dec.Read(buf)
		s.bytes += int64(n)
	}
	s.stop()
	if err != io.EOF {
		return s, fmt.Errorf("decode: %w", err)
	}
	s.compressed = int64(len(c.file))
	return s, nil
}

// readRun reads the whole input once with the run's reader,
// stream.NewReader with its default options, batch by batch: decoding,
// the frames' content checksums and the framing of lines.
func readRun(c *corpus) (sample, error) {
	var s sample
	var b stream.Batch
	s.start()
	r, err := stream.NewReader(bytes.NewReader(c.file), c.path, stream.ShapeUnknown)
	if err == nil {
		for err == nil {
			err = r.ReadBatch(&b)
		}
		s.bytes = r.Offset()
		r.Close()
	}
	s.stop()
	if err != io.EOF {
		return s, fmt.Errorf("read: %w", err)
	}
	if ierr := r.InputErr(); ierr != nil {
		return s, fmt.Errorf("read: %w", ierr)
	}
	if c.zstd {
		s.compressed = int64(len(c.file))
	}
	return s, nil
}

// parseRun parses every line once with one reused tape, as a worker of the
// run does (transform.CoreJSON: Tape.Parse at the default depth limit).
func parseRun(c *corpus) (sample, error) {
	var s sample
	var t jsonscan.Tape
	failed := 0
	s.start()
	for _, line := range c.lines {
		if t.Parse(line, 0) != nil {
			failed++
		}
	}
	s.stop()
	for _, line := range c.lines {
		s.bytes += int64(len(line))
	}
	if failed != c.refused {
		return s, fmt.Errorf("parse: %d lines refused, %d when loading", failed, c.refused)
	}
	return s, nil
}

// Batches of documents the canonicalize stage parses, untimed, before it
// canonicalizes them: small enough that their tapes are still in the
// core's cache (2 MiB of L2 on the machine measured), as the tape of the
// document a worker of the run just parsed is.
const (
	canonBatchBytes = 256 << 10
	canonBatchDocs  = 1024
)

// canonicalizeRun writes every document's canonical form once
// (Canonicalizer.AppendTape into one reused buffer, as
// transform.TranscriptHash does). The documents are parsed outside the
// timed regions, a batch at a time (canonBatchBytes).
func canonicalizeRun(c *corpus) (sample, error) {
	var s sample
	var canon verify.Canonicalizer
	tapes := make([]jsonscan.Tape, canonBatchDocs)
	var buf []byte
	failed := 0
	var out int64
	for i := 0; i < len(c.docs); {
		n, size := 0, 0
		for i+n < len(c.docs) && n < canonBatchDocs && (n == 0 || size+len(c.docs[i+n]) <= canonBatchBytes) {
			if err := tapes[n].Parse(c.docs[i+n], 0); err != nil {
				return s, fmt.Errorf("canonicalize: document %d: %w", i+n, err)
			}
			size += len(c.docs[i+n])
			n++
		}
		s.start()
		for j := range n {
			t := &tapes[j]
			b, err := canon.AppendTape(buf[:0], t, nil)
			if err != nil {
				failed++
				continue
			}
			out += int64(len(b))
			if len(b) > 0 && &b[0] != &t.Data[0] {
				buf = b[:0] // keep the grown buffer, not the document
			}
		}
		s.stop()
		s.bytes += int64(size)
		i += n
	}
	if failed != c.canonFailures || out != c.canonBytes {
		return s, fmt.Errorf("canonicalize: %d failures and %d bytes, %d and %d when loading", failed, out, c.canonFailures, c.canonBytes)
	}
	return s, nil
}

// sha256Run hashes every canonical form once (prepared by loadCorpus).
func sha256Run(c *corpus) (sample, error) {
	var s sample
	var x byte
	s.start()
	for _, b := range c.canon {
		if b != nil {
			sum := sha256.Sum256(b)
			x ^= sum[0]
		}
	}
	s.stop()
	runtime.KeepAlive(x) // the sums are used: none is left uncomputed
	s.bytes = c.canonBytes
	return s, nil
}

// sigStats is what the signatures stage found: receipts checked, those
// with a reason (any failed check but the references, resolved after the
// run), and the signature cache's lookups (a miss is a verification).
type sigStats struct {
	checked, withReasons int
	cache                verify.SignatureCacheStats
}

// signaturesRun checks every receipt once, as the run's consensus-receipt
// handler does: verify.ReceiptChecker.CheckReceipt with the keyring and,
// if cached, a signature cache of the run's size, both new for each run of
// the stage (as each run of convbatch starts with empty ones); uncached,
// every signature is verified. Each receipt's document is parsed, and its
// agents collected, outside the timed region.
func signaturesRun(c *corpus, kr *verify.Keyring, cached bool) (sample, sigStats, error) {
	var s sample
	var st sigStats
	var cache *verify.SignatureCache
	if cached {
		cache = verify.NewSignatureCache(verify.DefaultSignatureCacheEntries)
	}
	checker := verify.NewReceiptChecker(kr, verify.WithSignatureCache(cache))
	var t jsonscan.Tape
	var agents []string
	for _, i := range c.receipts {
		if err := t.Parse(c.docs[i], 0); err != nil {
			return s, st, fmt.Errorf("signatures: document %d: %w", i, err)
		}
		env := t.Lookup(0, "consensusReceipt")
		agents = agentsOf(&t, agents[:0])
		s.start()
		rc := checker.CheckReceipt(&t, env, agents)
		s.stop()
		s.bytes += int64(len(c.docs[i]))
		st.checked++
		if rc.Reasons != 0 {
			st.withReasons++
		}
	}
	st.cache = cache.Stats()
	return s, st, nil
}

// agentsOf appends to dst the agent ids the document's agent-context
// fields name (agentId, leaderId and the messages' agentId), as
// transform.AgentContext collects them for the receipt checks.
func agentsOf(t *jsonscan.Tape, dst []string) []string {
	add := func(v int32) {
		if v >= 0 && t.Kind(v) == jsonscan.String {
			dst = append(dst, t.Str(v))
		}
	}
	add(t.Lookup(0, "agentId"))
	add(t.Lookup(0, "leaderId"))
	msgs := t.Lookup(0, "messages")
	if msgs >= 0 && t.Kind(msgs) == jsonscan.Array {
		for m := msgs + 1; m < t.Tokens[msgs].Next; m = t.Tokens[m].Next {
			if t.Kind(m) == jsonscan.Object {
				add(t.Lookup(m, "agentId"))
			}
		}
	}
	return dst
}

// archiveLevel is the run's write-back level: pipeline.Config.ZstdLevel's
// default (the CLI has no flag for it).
const archiveLevel = zstd.SpeedDefault

// countingDiscard counts and drops what is written to it.
type countingDiscard struct{ n int64 }

// Write counts p.
func (w *countingDiscard) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// archiveRun writes every document back once, as sink.ArchiveWriter does
// for --archive zst: each document and its LF through a 1 MiB buffer into
// a zstd encoder at the run's level, here with one goroutine
// (WithEncoderConcurrency(1); the run gives it its worker count), to a
// discarding sink.
func archiveRun(c *corpus) (sample, error) {
	var s sample
	var sink countingDiscard
	enc, err := zstd.NewWriter(&sink, zstd.WithEncoderLevel(archiveLevel), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return s, err
	}
	bw := bufio.NewWriterSize(enc, 1<<20)
	s.start()
	for _, d := range c.docs {
		if _, err = bw.Write(d); err != nil {
			break
		}
		if err = bw.WriteByte('\n'); err != nil {
			break
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	s.stop()
	if err != nil {
		return s, fmt.Errorf("archive: %w", err)
	}
	s.bytes = c.docBytes() + int64(len(c.docs))
	s.compressed = sink.n
	return s, nil
}

// stageResult is a stage's medians and runs, in the JSON output.
type stageResult struct {
	Name string `json:"name"`
	// Seconds is the median wall time of the stage's goroutine; Runs are
	// every round's.
	Seconds float64   `json:"seconds"`
	Runs    []float64 `json:"runs"`
	// CPUSeconds is the median CPU time of the process over the same
	// regions (user and system, every thread); well under Seconds, the
	// machine's other load took the core away.
	CPUSeconds float64   `json:"cpu_seconds"`
	CPURuns    []float64 `json:"cpu_runs"`
	// Bytes are the bytes the stage processed (uncompressed, also for
	// the zstd stages); MBPerS is Bytes / Seconds / 1e6.
	Bytes  int64   `json:"bytes"`
	MBPerS float64 `json:"mb_per_s"`
	// CompressedBytes are, for decode and read, the compressed bytes
	// read and, for archive, the compressed bytes written.
	CompressedBytes int64 `json:"compressed_bytes,omitempty"`
	// What says what the stage measures.
	What string `json:"what"`
}

// report is the whole measurement, the JSON output.
type report struct {
	Input               string `json:"input"`
	Keys                string `json:"keys"`
	BytesCompressed     int64  `json:"bytes_compressed,omitempty"`
	BytesUncompressed   int64  `json:"bytes_uncompressed"`
	Lines               int    `json:"lines"`
	BlankLines          int    `json:"blank_lines"`
	Documents           int    `json:"documents"`
	DocumentBytes       int64  `json:"document_bytes"`
	ParseFailures       int    `json:"parse_failures"`
	NotObjects          int    `json:"not_objects"`
	CanonFailures       int    `json:"canonicalize_failures"`
	CanonicalBytes      int64  `json:"canonical_bytes"`
	Receipts            int    `json:"receipts"`
	ReceiptsWithReasons int    `json:"receipts_with_reasons"`
	// SignatureVerifications and SignatureCacheHits are the signature
	// cache's misses (each one a verification) and hits in one run of the
	// signatures stage.
	SignatureVerifications int64  `json:"signature_verifications"`
	SignatureCacheHits     int64  `json:"signature_cache_hits"`
	Cores                  int    `json:"cores"`
	NumCPU                 int    `json:"num_cpu"`
	Rounds                 int    `json:"rounds"`
	GoVersion              string `json:"go_version"`
	// Stages are the floor's stages, summed; ExtraStages are measured
	// for comparison and not summed.
	Stages      []stageResult `json:"stages"`
	ExtraStages []stageResult `json:"extra_stages"`
	SumOf       []string      `json:"sum_of"`
	SumSeconds  float64       `json:"sum_seconds"`
	// FloorWallSeconds is SumSeconds / Cores.
	FloorWallSeconds float64  `json:"floor_wall_seconds"`
	Notes            []string `json:"notes"`
}

// stage is one measured stage: its name, what it measures, whether it is
// summed into the floor, and one run of it.
type stage struct {
	name, what string
	summed     bool
	run        func() (sample, error)
}

// measure runs every stage rounds times on c, interleaved (round 1 of
// every stage, then round 2...), with a collected heap before each run,
// and sums the floor's stages spread on cores.
func measure(c *corpus, kr *verify.Keyring, rounds, cores int) (*report, error) {
	if rounds < 1 || cores < 1 {
		return nil, fmt.Errorf("rounds %d, cores %d: both must be at least 1", rounds, cores)
	}
	rep := &report{
		Input: c.path, BytesUncompressed: int64(len(c.data)),
		Lines: len(c.lines) + c.blank, BlankLines: c.blank,
		Documents: len(c.docs), DocumentBytes: c.docBytes(), ParseFailures: c.refused, NotObjects: c.notObjects,
		CanonFailures: c.canonFailures, CanonicalBytes: c.canonBytes, Receipts: len(c.receipts),
		Cores: cores, NumCPU: runtime.NumCPU(), Rounds: rounds, GoVersion: runtime.Version(),
	}
	if c.zstd {
		rep.BytesCompressed = int64(len(c.file))
	}
	var sig sigStats
	stages := []stage{
		{name: "decode", summed: true, what: "zstd decoding of the input to a discarding sink, decoder made as stream.NewReader makes it (one goroutine, 128 MiB window cap, content checksums ignored by the decoder: the reader checks them itself, see read)"},
		{name: "parse", summed: true, run: func() (sample, error) { return parseRun(c) },
			what: "jsonscan.Tape.Parse of every line (one reused tape, default depth limit), lines in memory"},
		{name: "canonicalize", summed: true, run: func() (sample, error) { return canonicalizeRun(c) },
			what: "verify.Canonicalizer.AppendTape of every document into one reused buffer; each batch of 256 KiB of documents parsed untimed just before, its tapes still in cache"},
		{name: "sha256", summed: true, run: func() (sample, error) { return sha256Run(c) },
			what: "crypto/sha256 of every canonical form, prepared untimed"},
		{name: "signatures", summed: true, run: func() (sample, error) {
			s, st, err := signaturesRun(c, kr, true)
			sig = st
			return s, err
		}, what: "verify.ReceiptChecker.CheckReceipt of every receipt (payload and statement canonical forms, payload hash, the carrying document's hash without its receipt, the signatures, key pinning) with the keyring and the run's signature cache, both new each run, as in one run of convbatch: a signature repeated within the archive is verified once; documents parsed untimed"},
		{name: "archive", summed: true, run: func() (sample, error) { return archiveRun(c) },
			what: "zstd compression of every document and its LF as sink.ArchiveWriter writes --archive zst (1 MiB buffer, level SpeedDefault), one goroutine, to a discarding sink"},
		{name: "signatures-uncached", run: func() (sample, error) {
			s, _, err := signaturesRun(c, kr, false)
			return s, err
		}, what: "for comparison, not summed: signatures without a signature cache, every signature verified, as for an archive that repeats none"},
		{name: "read", run: func() (sample, error) { return readRun(c) }, what: "for comparison, not summed: the run's reader, stream.NewReader and ReadBatch over the input: decoding, its own check of the frames' content checksums, framing of lines into batches"},
	}
	if c.zstd {
		stages[0].run = func() (sample, error) { return decodeRun(c) }
	} else {
		stages = stages[1:]
		rep.Notes = append(rep.Notes, "plain .jsonl input: no decode stage")
	}
	samples := make([][]sample, len(stages))
	for range rounds {
		for i, st := range stages {
			runtime.GC()
			s, err := st.run()
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], s)
		}
	}
	for i, st := range stages {
		res := summarize(st, samples[i])
		if st.summed {
			rep.Stages = append(rep.Stages, res)
			rep.SumOf = append(rep.SumOf, st.name)
			rep.SumSeconds += res.Seconds
		} else {
			rep.ExtraStages = append(rep.ExtraStages, res)
		}
	}
	rep.FloorWallSeconds = rep.SumSeconds / float64(cores)
	rep.ReceiptsWithReasons = sig.withReasons
	rep.SignatureVerifications, rep.SignatureCacheHits = sig.cache.Misses, sig.cache.Hits
	if kr == nil {
		rep.Notes = append(rep.Notes, "no keyring: receipts checked for self-consistency only, keys not pinned")
	}
	if cpuTime() < 0 {
		rep.Notes = append(rep.Notes, "no CPU time on this system: cpu_seconds are -1")
	}
	return rep, nil
}

// summarize makes a stage's result from its runs: medians of wall and CPU
// seconds, the bytes of its last run.
func summarize(st stage, runs []sample) stageResult {
	res := stageResult{Name: st.name, What: st.what}
	for _, s := range runs {
		res.Runs = append(res.Runs, s.wall.Seconds())
		res.CPURuns = append(res.CPURuns, s.cpu.Seconds())
	}
	last := runs[len(runs)-1]
	res.Bytes, res.CompressedBytes = last.bytes, last.compressed
	res.Seconds, res.CPUSeconds = median(res.Runs), median(res.CPURuns)
	if cpuTime() < 0 {
		res.CPUSeconds, res.CPURuns = -1, nil
	}
	if res.Seconds > 0 {
		res.MBPerS = float64(res.Bytes) / res.Seconds / 1e6
	}
	return res
}

// median returns the median of xs (the mean of the middle two for an even
// count), without reordering xs.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// printReport writes rep as a table with the floor's arithmetic.
func printReport(w io.Writer, rep *report) {
	fmt.Fprintf(w, "input %s: %d bytes uncompressed", rep.Input, rep.BytesUncompressed)
	if rep.BytesCompressed > 0 {
		fmt.Fprintf(w, " (%d compressed)", rep.BytesCompressed)
	}
	fmt.Fprintf(w, ", %d lines (%d blank), %d documents (%d bytes), %d lines refused by the parser, %d not an object\n",
		rep.Lines, rep.BlankLines, rep.Documents, rep.DocumentBytes, rep.ParseFailures, rep.NotObjects)
	fmt.Fprintf(w, "canonical forms: %d bytes, %d documents without one; receipts: %d, %d with a failed check; signatures verified: %d, cache hits: %d\n",
		rep.CanonicalBytes, rep.CanonFailures, rep.Receipts, rep.ReceiptsWithReasons, rep.SignatureVerifications, rep.SignatureCacheHits)
	keys := rep.Keys
	if keys == "" {
		keys = "none"
	}
	fmt.Fprintf(w, "keyring: %s; %s, one goroutine, GOMAXPROCS=1; %d rounds interleaved, medians\n\n", keys, rep.GoVersion, rep.Rounds)
	header := fmt.Sprintf("%-19s %9s %9s %14s %9s  %s", "stage", "wall s", "cpu s", "bytes", "MB/s", "runs (wall s)")
	fmt.Fprintln(w, header)
	row := func(r stageResult) {
		runs := make([]string, len(r.Runs))
		for i, x := range r.Runs {
			runs[i] = fmt.Sprintf("%.3f", x)
		}
		fmt.Fprintf(w, "%-19s %9.3f %9.3f %14d %9.1f  %s\n", r.Name, r.Seconds, r.CPUSeconds, r.Bytes, r.MBPerS, strings.Join(runs, " "))
	}
	for _, r := range rep.Stages {
		row(r)
	}
	fmt.Fprintln(w, strings.Repeat("-", len(header)))
	fmt.Fprintf(w, "%-19s %9.3f  single-core seconds: %s\n", "sum", rep.SumSeconds, strings.Join(rep.SumOf, " + "))
	fmt.Fprintf(w, "%-19s %9d  (runtime.NumCPU() = %d)\n", "cores", rep.Cores, rep.NumCPU)
	fmt.Fprintf(w, "%-19s %9.3f  wall seconds of the full run at its floor: sum / cores = %.3f / %d\n", "floor", rep.FloorWallSeconds, rep.SumSeconds, rep.Cores)
	if len(rep.ExtraStages) > 0 {
		fmt.Fprintln(w, "\nnot in the sum:")
		for _, r := range rep.ExtraStages {
			row(r)
		}
	}
	fmt.Fprintln(w, "\nwhat each stage measures:")
	for _, r := range append(slices.Clone(rep.Stages), rep.ExtraStages...) {
		fmt.Fprintf(w, "  %-19s %s\n", r.Name, r.What)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// writeJSON writes rep to path as an indented JSON object.
func writeJSON(path string, rep *report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
