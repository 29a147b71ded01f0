package gen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convbatch/convbatch/codes"
)

// DefaultMaxDocBytes is the size cap assumed when Options.MaxDocBytes is 0;
// it matches convbatch's default --max-doc-bytes (64 MiB).
const DefaultMaxDocBytes = 64 << 20

// TooLargeMaxDocBytes is the largest cap for which too-large fault lines are
// generated (they are MaxDocBytes+1 .. MaxDocBytes+64 KiB bytes long).
const TooLargeMaxDocBytes = 4 << 20

// MinMaxDocBytes is the smallest accepted cap: every good document and every
// fault line other than too-large must fit under it.
const MinMaxDocBytes = 16 << 10

// pcgStream is the fixed second PCG word; the first is Options.Seed.
const pcgStream = 0x636f6e7662617463 // "convbatc"

// Options controls what Generate writes.
type Options struct {
	// Conversations is the number of documents to emit (lines that
	// convbatch counts as documents, including the BOM, CRLF, duplicate-id
	// and unknown-extension ones); fault lines come in addition.
	// 0 means: use Bytes.
	Conversations int
	// Bytes, used when Conversations is 0: keep emitting lines until at
	// least this many uncompressed bytes have been written. When both are
	// 0 the output is empty.
	Bytes int64
	// Seed selects the output: the same seed and options give
	// byte-identical output.
	Seed uint64
	// Faults, in 0..1, is the probability that an output line is a fault
	// line (see the package documentation). With Faults > 0 the file also
	// starts with a byte-order mark.
	Faults float64
	// MaxDocBytes is the --max-doc-bytes cap convbatch will be run with
	// (DefaultMaxDocBytes if 0, at least 16 KiB). Good documents always fit
	// under it; too-large fault lines are generated only when it is at most
	// TooLargeMaxDocBytes.
	MaxDocBytes int64
	// NoReceipts turns consensus receipts off. By default about 20% of
	// the conversations carry a signed consensus receipt (see
	// receipts.go) and WriteFile also writes FILE.keys.json.
	NoReceipts bool
	// Tamper, in 0..1, is the probability that a receipt is tampered
	// with; the kind of tamper is drawn evenly among those listed in
	// receipts.go, each with its exact expected reasons.
	Tamper float64
	// Progress, when set, is updated as lines are generated, for a
	// progress display. It does not change the output.
	Progress *Progress
	// Profile selects the kind of archive: ProfileDefault ("" too) or
	// ProfileShort (tiny documents; it needs Conversations and refuses
	// Faults and Tamper).
	Profile Profile
	// Dates selects the times the archive carries: a night's
	// (DatesNight, the default) or the hostile spread (DatesSpread, the
	// default when Faults > 0). The profile short has no createdAt; its
	// receipts' signed_at follow Dates.
	Dates Dates
	// Day is the UTC day of a night's archive (DatesNight); its time of
	// day is ignored. The zero time means DefaultDay.
	Day time.Time

	// cross, set by WriteNights only, makes this archive one file of a
	// set: it writes evidence documents that other files' receipts
	// reference, and its receipts reference those of other files.
	cross *crossFile
}

// Progress counts what a Generate call has generated so far; it is updated
// atomically and may be read while Generate runs.
type Progress struct {
	// Documents and Bytes are Expect.Documents and Expect.BytesIn so far
	// (uncompressed bytes, the measure of Options.Bytes).
	Documents, Bytes atomic.Int64
}

// Expect holds the counts convbatch must report for a generated archive,
// following docs/FORMAT.md. Lines == Documents + Rejects + Blank.
type Expect struct {
	// Seed is Options.Seed.
	Seed uint64 `json:"seed"`
	// Dates is the archive's Dates: night or spread.
	Dates Dates `json:"dates"`
	// Day is the UTC day (YYYY-MM-DD) of a night's archive, "" for the
	// spread and for the expectations over a set's files (NightsExpect:
	// NightsFile.Day gives each file's).
	Day string `json:"day,omitempty"`
	// MaxDocBytes is the cap the counts assume (Options.MaxDocBytes or the
	// default).
	MaxDocBytes int64 `json:"max_doc_bytes"`
	// Lines is the number of lines (every line ends in LF).
	Lines int64 `json:"lines"`
	// Documents is the number of lines accepted as documents.
	Documents int64 `json:"documents"`
	// Rejects is the number of rejected lines.
	Rejects int64 `json:"rejects"`
	// Blank is the number of blank lines.
	Blank int64 `json:"blank"`
	// BytesIn is the number of uncompressed bytes written, every byte
	// (BOM, CR and LF included).
	BytesIn int64 `json:"bytes_in"`
	// RejectsByReason maps a reject reason code to its count (only
	// reasons with a count > 0).
	RejectsByReason map[string]int64 `json:"rejects_by_reason"`
	// Warnings maps a warning code (bom-dropped, crlf, duplicate-id,
	// unknown-extension, tool-result-orphan, tool-call-duplicate-id,
	// transcript-unhashable) to its count (only codes with a count > 0;
	// undeclared-extension and statement-agent-unknown are never
	// produced).
	Warnings map[string]int64 `json:"warnings"`
	// ExtensionsUnknown maps an unknown declared extension name to the
	// number of documents declaring it.
	ExtensionsUnknown map[string]int64 `json:"extensions_unknown"`
	// Usage holds the usage-metadata totals over the documents.
	Usage UsageTotals `json:"usage"`

	// Messages is the total number of messages in the documents
	// (an addition to the base contract).
	Messages int64 `json:"messages"`
	// Tools holds the tool-linkage counts over the documents (an addition
	// to the base contract).
	Tools ToolTotals `json:"tools"`
	// Images holds the images-inline counts over the documents (an
	// addition to the base contract).
	Images ImageTotals `json:"images"`

	// Receipts counts the consensus receipts by status for a run with
	// --keys FILE.keys.json.
	Receipts ReceiptTotals `json:"receipts"`
	// ReceiptsWithoutKeys is the same for a run without a keyring.
	ReceiptsWithoutKeys ReceiptTotals `json:"receipts_without_keys"`
	// ReceiptList lists every receipt, in file order.
	ReceiptList []ReceiptExpect `json:"receipt_list"`
	// Transcripts counts the documents with and without a transcript
	// hash.
	Transcripts TranscriptTotals `json:"transcripts"`
}

// UsageTotals sums the usage-metadata of the messages of the documents
// (rejected lines excluded) that carry usage fields. In generated archives
// every such message carries all of tokens (with integer input and output
// counters), cost and provider.
type UsageTotals struct {
	// ByProvider is keyed by the message's provider.
	ByProvider map[string]UsageSum `json:"by_provider"`
	// ByAgent is keyed by the message's agentId, else the conversation's
	// agentId, else "".
	ByAgent map[string]UsageSum `json:"by_agent"`
}

// UsageSum is one row of UsageTotals.
type UsageSum struct {
	// Messages is the number of messages carrying usage fields.
	Messages int64 `json:"messages"`
	// TokensInput sums tokens.input.
	TokensInput int64 `json:"tokens_input"`
	// TokensOutput sums tokens.output.
	TokensOutput int64 `json:"tokens_output"`
	// Cost sums cost as float64, in the order the messages are written.
	Cost float64 `json:"cost"`
}

// ToolTotals counts tool-linkage entries over the documents.
type ToolTotals struct {
	// Calls is the number of toolCalls entries.
	Calls int64 `json:"calls"`
	// Results is the number of tool messages whose toolCallId answers an
	// earlier call of the same conversation.
	Results int64 `json:"results"`
	// Orphans is the number of tool messages whose toolCallId answers no
	// earlier call (tool-result-orphan).
	Orphans int64 `json:"orphans"`
	// Unanswered is the number of calls with no result.
	Unanswered int64 `json:"unanswered"`
}

// ImageTotals counts images-inline messages over the documents.
type ImageTotals struct {
	// Messages is the number of image messages (data:image/...;base64,
	// content strings and kind "image" messages).
	Messages int64 `json:"messages"`
	// Bytes sums the payload sizes derived from the base64 lengths.
	Bytes int64 `json:"bytes"`
}

// Generate writes an uncompressed JSONL archive to w and returns the
// expected counts.
func Generate(w io.Writer, opts Options) (*Expect, error) {
	exp, _, err := generate(w, opts)
	return exp, err
}

// generate is Generate; it also returns, for a file of a set
// (Options.cross), its receipts with the references to other files.
func generate(w io.Writer, opts Options) (*Expect, []crossReceipt, error) {
	if opts.Conversations < 0 {
		return nil, nil, errors.New("gen: Conversations is negative")
	}
	if opts.Bytes < 0 {
		return nil, nil, errors.New("gen: Bytes is negative")
	}
	if math.IsNaN(opts.Faults) || opts.Faults < 0 || opts.Faults > 1 {
		return nil, nil, fmt.Errorf("gen: Faults %v is not in 0..1", opts.Faults)
	}
	if math.IsNaN(opts.Tamper) || opts.Tamper < 0 || opts.Tamper > 1 {
		return nil, nil, fmt.Errorf("gen: Tamper %v is not in 0..1", opts.Tamper)
	}
	maxDoc := opts.MaxDocBytes
	if maxDoc == 0 {
		maxDoc = DefaultMaxDocBytes
	}
	if maxDoc < MinMaxDocBytes {
		return nil, nil, fmt.Errorf("gen: MaxDocBytes %d is below the minimum %d", maxDoc, MinMaxDocBytes)
	}
	dates, err := resolveDates(opts.Dates, opts.Faults)
	if err != nil {
		return nil, nil, err
	}
	opts.Dates = dates
	bw, ok := w.(*bufio.Writer)
	if !ok || bw.Size() < 64<<10 {
		bw = bufio.NewWriterSize(w, 256<<10)
	}
	switch opts.Profile {
	case "", ProfileDefault:
	case ProfileShort:
		if opts.cross != nil {
			return nil, nil, errors.New("gen: the short profile writes no file sets")
		}
		exp, err := generateShort(bw, opts, maxDoc)
		return exp, nil, err
	case ProfileReceipts:
		return generateReceipts(bw, opts, maxDoc)
	default:
		return nil, nil, fmt.Errorf("gen: unknown profile %q (want default, short or receipts)", opts.Profile)
	}
	g := newGenerator(bw, opts, maxDoc)
	if g.keys != nil {
		g.startWorkers(max(1, runtime.GOMAXPROCS(0)))
	}
	err = g.run()
	g.stopWorkers()
	if err != nil {
		return nil, nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, nil, err
	}
	exp := g.finish()
	return exp, g.cross, nil
}

// generator holds the state of one Generate call.
type generator struct {
	r      *rand.Rand
	w      *bufio.Writer
	err    error
	opts   Options
	maxDoc int64
	exp    Expect

	reasons  map[codes.Reject]int64
	warnings map[codes.Warning]int64
	unknown  [len(unknownExtensions)]int64
	byProv   [len(providers)]UsageSum
	byAgent  []UsageSum // by g.agents; last slot: ""
	agents   []string   // agentNames, then the receipt agents
	noAgent  int        // index of "" in byAgent

	clock      *clock  // a night's times (DatesNight); nil: the spread
	keys       *keySet // nil: no receipts
	q          []*pend // the window of lines not yet written
	jobs       chan *receiptJob
	workers    sync.WaitGroup
	refd       map[uint64][]hashVal // referenced ids: hashes of the documents written with them
	receipts   []*receiptRec
	fakeIdx    uint64
	unhashable int64
	starts     []int // member offsets of g.line

	cross    []crossReceipt // file of a set: its receipts, resolved by the set
	nextHost int            // file of a set: evidence documents written
	nextMust int            // file of a set: forced references made

	idSalt     uint64
	msgI, msgN int    // message being built, messages wanted
	nextIdx    uint64 // ids conv-hex(mix(i)) for i < nextIdx are registered

	line []byte
	ob   [4]objBuilder // by nesting depth: doc, message, call/tokens, arguments
	tmp  []byte
	st   docStats
	b64  []byte // random bytes for inline images
}

func newGenerator(w *bufio.Writer, opts Options, maxDoc int64) *generator {
	g := &generator{
		r:      rand.New(rand.NewPCG(opts.Seed, pcgStream)),
		w:      w,
		opts:   opts,
		maxDoc: maxDoc,
		line:   make([]byte, 0, 1<<20),

		reasons:  map[codes.Reject]int64{},
		warnings: map[codes.Warning]int64{},
	}
	g.idSalt = g.r.Uint64()
	if opts.Dates == DatesNight {
		g.clock = newClock(opts.Seed, dayMillis(opts.Day))
	}
	g.agents = agentNames[:]
	if !opts.NoReceipts {
		if opts.cross != nil {
			g.keys = opts.cross.keys
		} else {
			g.keys = newKeySet(opts.Seed)
		}
		g.agents = append(append([]string(nil), agentNames[:]...), g.keys.agentIDs[:]...)
		g.refd = map[uint64][]hashVal{}
	}
	g.noAgent = len(g.agents)
	g.byAgent = make([]UsageSum, len(g.agents)+1)
	g.b64 = make([]byte, 64<<10)
	for i := 0; i < len(g.b64); i += 8 {
		v := g.r.Uint64()
		for j := 0; j < 8; j++ {
			g.b64[i+j] = byte(v >> (8 * j))
		}
	}
	return g
}

func (g *generator) done() bool {
	if g.opts.Conversations > 0 {
		return g.exp.Documents >= int64(g.opts.Conversations)
	}
	return g.exp.BytesIn >= g.opts.Bytes
}

func (g *generator) run() error {
	first := true
	for !g.done() && g.err == nil {
		if first {
			first = false
			g.goodLine(docPlain, g.opts.Faults > 0)
			continue
		}
		if g.opts.cross != nil && g.hostEvidence() {
			continue
		}
		if g.opts.Faults > 0 && g.r.Float64() < g.opts.Faults {
			g.faultLine()
		} else {
			g.goodLine(docPlain, false)
		}
		g.progress()
	}
	if c := g.opts.cross; c != nil && g.err == nil && g.nextHost < len(c.host) {
		return fmt.Errorf("gen: %s: internal: %d of %d evidence documents placed", c.name, g.nextHost, len(c.host))
	}
	for i := range g.q {
		if g.q[i].plan != nil {
			g.finalize(i)
		}
	}
	for len(g.q) > 0 && g.err == nil {
		g.pop()
	}
	if c := g.opts.cross; c != nil && g.err == nil && g.nextMust < len(c.must) {
		return fmt.Errorf("gen: %s: %d receipts for %d cross-file references; raise Conversations or change the seed", c.name, len(g.receipts), len(c.must))
	}
	g.progress()
	return g.err
}

// progress publishes the counts so far to Options.Progress.
func (g *generator) progress() {
	if p := g.opts.Progress; p != nil {
		p.Documents.Store(g.exp.Documents)
		p.Bytes.Store(g.exp.BytesIn)
	}
}

// The window: lines are generated into g.q and written when more than
// window lines wait, so that a receipt can reference documents generated
// after it; a receipt is built when lookAhead lines follow its document.
const (
	window    = 96
	lookAhead = 32
)

// pend is a generated line not yet written.
type pend struct {
	bom, cr   bool
	data      []byte // the line without BOM, CR and LF
	tooLarge  int64  // > 0: a too-large line of this many bytes; data is its head
	line      int64
	doc       bool   // an accepted document with id number idx
	idx       uint64 //
	id        string // candidates only
	candidate bool   // a good document a receipt may reference
	edited    bool   // changed after its transcript hash was taken
	h         *docHash
	plan      *receiptPlan // a receipt to build
	job       *receiptJob  // the receipt being built
}

// push appends a line to the window; its counts are already taken.
func (g *generator) push(p *pend) {
	g.exp.Lines++
	p.line = g.exp.Lines
	n := int64(len(p.data)) + 1
	if p.bom {
		n += 3
	}
	if p.cr {
		n++
	}
	if p.tooLarge > 0 {
		n = p.tooLarge + 1
	}
	g.exp.BytesIn += n
	g.q = append(g.q, p)
	if k := len(g.q) - 1 - lookAhead; k >= 0 && g.q[k].plan != nil {
		g.finalize(k)
	}
	for len(g.q) > window && g.err == nil {
		g.pop()
	}
}

// pop writes the oldest line of the window.
func (g *generator) pop() {
	p := g.q[0]
	g.q[0] = nil
	g.q = g.q[1:]
	if j := p.job; j != nil {
		<-j.done
		if j.err != nil {
			g.err = j.err
			return
		}
		g.exp.BytesIn += int64(len(j.line) - len(p.data))
		p.data = j.line
		g.receipts = append(g.receipts, &receiptRec{
			convID: j.plan.convID, line: p.line, alg: algNames[j.plan.envAlg], tamper: j.tamper,
			static: j.static, keyOnly: j.keyOnly, stmtInvalid: j.stmtInvalid, selfSum: j.selfSum, refs: j.refs,
		})
	}
	if p.doc && g.refd != nil {
		if vals, ok := g.refd[p.idx]; ok {
			var v hashVal
			if p.h != nil && !p.edited {
				v.sum, v.ok = p.h.get()
			} else {
				v.sum, v.ok = transcriptHash(p.data)
			}
			g.refd[p.idx] = append(vals, v)
		}
	}
	if g.err != nil {
		return
	}
	if p.tooLarge > 0 {
		g.writeTooLarge(p)
		return
	}
	if p.bom {
		g.w.Write([]byte{0xEF, 0xBB, 0xBF})
	}
	g.w.Write(p.data)
	if p.cr {
		g.w.WriteByte('\r')
	}
	g.err = g.w.WriteByte('\n')
}

// write queues one line that is not a document.
func (g *generator) write(line []byte) {
	g.push(&pend{data: append([]byte(nil), line...)})
}

func (g *generator) reject(reason codes.Reject, line []byte) {
	if int64(len(line)) > g.maxDoc {
		reason = codes.RejectTooLarge
	}
	g.exp.Rejects++
	g.reasons[reason]++
	g.write(line)
}

func (g *generator) blank(line []byte) {
	g.exp.Blank++
	g.write(line)
}

func (g *generator) finish() *Expect {
	e := g.exp
	e.Seed = g.opts.Seed
	e.Dates = g.opts.Dates
	if g.clock != nil {
		e.Day = dayString(g.clock.day)
	}
	e.MaxDocBytes = g.maxDoc
	e.RejectsByReason = map[string]int64{}
	for r, n := range g.reasons {
		if n > 0 {
			e.RejectsByReason[r.String()] = n
		}
	}
	e.Warnings = map[string]int64{}
	for w, n := range g.warnings {
		if n > 0 {
			e.Warnings[w.String()] = n
		}
	}
	e.ExtensionsUnknown = map[string]int64{}
	for i, n := range g.unknown {
		if n > 0 {
			e.ExtensionsUnknown[unknownExtensions[i]] = n
		}
	}
	e.Usage = usageExpect(g.byProv[:], g.byAgent, g.agents)
	e.Transcripts = TranscriptTotals{Hashed: e.Documents - g.unhashable, Unhashable: g.unhashable}
	g.resolve(&e)
	return &e
}

// usageExpect gives the expected usage totals from the per-provider sums
// (indexed as providers) and per-agent sums (indexed as agents, the slot
// past the last for messages with no agent); groups with no message are
// left out.
func usageExpect(byProv, byAgent []UsageSum, agents []string) UsageTotals {
	u := UsageTotals{ByProvider: map[string]UsageSum{}, ByAgent: map[string]UsageSum{}}
	for i, s := range byProv {
		if s.Messages > 0 {
			u.ByProvider[providers[i].name] = s
		}
	}
	for i, s := range byAgent {
		if s.Messages > 0 {
			name := ""
			if i < len(agents) {
				name = agents[i]
			}
			u.ByAgent[name] = s
		}
	}
	return u
}
