package gen

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"strconv"
)

// Profile names the kind of archive Generate writes.
type Profile string

// The profiles.
const (
	// ProfileDefault (also the empty Profile) writes realistic
	// conversations of 2 to 200 messages, about 24 KB each (see the
	// package documentation).
	ProfileDefault Profile = "default"
	// ProfileShort writes tiny documents of one or two short messages
	// (65 to 270 bytes a line, about 175 on average), for benchmarks that
	// scale in the number of documents rather than in bytes; see
	// generateShort.
	ProfileShort Profile = "short"
)

// shortStream and shortPlanStream are the second PCG words of the short
// profile: one document's stream (first word: seed, mixed with its index)
// and the stream that places the receipts.
const (
	shortStream     = 0x73686f7274646f63 // "shortdoc"
	shortPlanStream = 0x73686f7274706c6e // "shortpln"
)

// shortTexts are the message contents of the short profile: plain ASCII,
// nothing to escape.
var shortTexts = [...]string{
	"hi", "ok", "thanks!", "yes", "no", "Sure.", "What time is it?", "Got it, thanks.",
	"Can you summarize this?", "Done.", "Let me check.", "Sounds good to me.",
	"Please retry the last step.", "It works now.", "Why did the build fail?",
	"The tests pass on my machine.", "Ship it.", "One more question:",
}

// shortReceipt is a receipt of the short profile: the index of its
// carrying document and the indexes of the other documents it references
// (anywhere in the file, before and after it).
type shortReceipt struct {
	at   uint64
	self bool
	refs []uint64
	seed uint64
}

// shortGen is one Generate call of the short profile.
type shortGen struct {
	w      *bufio.Writer
	opts   Options
	maxDoc int64
	n      uint64
	idSalt uint64
	pcg    rand.PCG
	r      *rand.Rand
	keys   *keySet
	rcpts  []shortReceipt // by carrying index
	line   []byte
	tmp    []byte
	starts []int

	exp     Expect
	byProv  [len(providers)]UsageSum
	byAgent [poolAgents + 1]UsageSum // pool agents; last slot: ""
}

// generateShort writes opts.Conversations documents of the short profile.
// Document i is a function of the seed and i alone, so that a receipt can
// reference a document anywhere in the file and hash it by generating it
// again. A document is, by a draw of its own stream: one user message and
// no extension (35%), one assistant message with usage-metadata (15%), or
// a user message and an assistant message with usage-metadata (50%).
// Unless NoReceipts, a few documents (3 + one per 100,000, at most a tenth)
// carry a signed consensus receipt built as receipts.go builds them: two
// messages, agent-context naming the 3 or 4 statement agents, and 1 to 4
// references: itself (3 times in 4) and documents alternately before and
// after it. Every receipt is valid; there are no faults, no tool calls and
// no images.
func generateShort(w *bufio.Writer, opts Options, maxDoc int64) (*Expect, error) {
	if opts.Conversations <= 0 {
		return nil, errors.New("gen: the short profile needs Conversations > 0")
	}
	if opts.Faults > 0 || opts.Tamper > 0 {
		return nil, errors.New("gen: the short profile writes no faults and no tampered receipts")
	}
	g := &shortGen{w: w, opts: opts, maxDoc: maxDoc, n: uint64(opts.Conversations), line: make([]byte, 0, 64<<10)}
	g.r = rand.New(&g.pcg)
	plan := rand.New(rand.NewPCG(opts.Seed, shortPlanStream))
	g.idSalt = plan.Uint64()
	if !opts.NoReceipts && g.n >= 10 {
		g.keys = newKeySet(opts.Seed)
		g.planReceipts(plan)
	}
	next := 0
	for i := uint64(0); i < g.n; i++ {
		if next < len(g.rcpts) && g.rcpts[next].at == i {
			if err := g.writeReceipt(&g.rcpts[next]); err != nil {
				return nil, err
			}
			next++
		} else {
			g.line = g.doc(g.line[:0], i, true)
		}
		g.exp.Lines++
		g.exp.Documents++
		g.exp.BytesIn += int64(len(g.line)) + 1
		g.line = append(g.line, '\n')
		if _, err := g.w.Write(g.line); err != nil {
			return nil, err
		}
		if p := g.opts.Progress; p != nil && i&4095 == 4095 {
			p.Documents.Store(g.exp.Documents)
			p.Bytes.Store(g.exp.BytesIn)
		}
	}
	if err := g.w.Flush(); err != nil {
		return nil, err
	}
	if p := g.opts.Progress; p != nil {
		p.Documents.Store(g.exp.Documents)
		p.Bytes.Store(g.exp.BytesIn)
	}
	return g.finish(), nil
}

// planReceipts places the receipts at distinct random indexes and draws
// their references.
func (g *shortGen) planReceipts(r *rand.Rand) {
	k := min(3+g.n/100000, g.n/10)
	carrying := make(map[uint64]bool, k)
	for uint64(len(carrying)) < k {
		carrying[r.Uint64N(g.n)] = true
	}
	for at := range carrying {
		g.rcpts = append(g.rcpts, shortReceipt{at: at})
	}
	// Map order is random: sort, then draw in index order.
	for i := 1; i < len(g.rcpts); i++ {
		for j := i; j > 0 && g.rcpts[j].at < g.rcpts[j-1].at; j-- {
			g.rcpts[j], g.rcpts[j-1] = g.rcpts[j-1], g.rcpts[j]
		}
	}
	for x := range g.rcpts {
		sr := &g.rcpts[x]
		sr.self = r.IntN(4) != 0
		others := 1 + r.IntN(3)
		if !sr.self {
			others = 1 + r.IntN(4)
		}
		for m := 0; m < others; m++ {
			// Alternately before and after the carrying document, where
			// there is room; never a carrying document, never twice.
			for try := 0; try < 64; try++ {
				var j uint64
				if (m%2 == 0 && sr.at > 0) || sr.at == g.n-1 {
					j = r.Uint64N(sr.at)
				} else {
					j = sr.at + 1 + r.Uint64N(g.n-sr.at-1)
				}
				if !carrying[j] && !containsU64(sr.refs, j) {
					sr.refs = append(sr.refs, j)
					break
				}
			}
		}
		sr.seed = r.Uint64()
	}
}

func containsU64(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// appendID appends the quoted id of document i (unique: mix is a
// bijection).
func (g *shortGen) appendID(dst []byte, i uint64) []byte {
	dst = append(dst, `"c`...)
	dst = appendHex64(dst, mix(i^g.idSalt))
	return append(dst, '"')
}

// doc appends document i (not a carrying one) to dst; count adds its
// statistics to the expectation.
func (g *shortGen) doc(dst []byte, i uint64, count bool) []byte {
	g.pcg.Seed(g.opts.Seed^mix(i), shortStream)
	r := g.r
	shape := r.IntN(100)
	dst = append(dst, `{"id":`...)
	dst = g.appendID(dst, i)
	if shape >= 35 {
		dst = append(dst, `,"extensions":["usage-metadata"]`...)
	}
	dst = append(dst, `,"messages":[`...)
	if shape < 35 || shape >= 50 {
		dst = append(dst, `{"role":"user","content":"`...)
		dst = append(dst, shortTexts[r.IntN(len(shortTexts))]...)
		dst = append(dst, `"}`...)
		if count {
			g.exp.Messages++
		}
	}
	if shape >= 35 {
		if shape >= 50 {
			dst = append(dst, ',')
		}
		dst = g.assistant(dst, r, -1, count)
	}
	return append(dst, `]}`...)
}

// assistant appends an assistant message with usage-metadata; agent >= 0
// names a pool agent on it.
func (g *shortGen) assistant(dst []byte, r *rand.Rand, agent int, count bool) []byte {
	dst = append(dst, `{"role":"assistant","content":"`...)
	dst = append(dst, shortTexts[r.IntN(len(shortTexts))]...)
	dst = append(dst, '"')
	if agent >= 0 {
		dst = append(dst, `,"agentId":"`...)
		dst = append(dst, g.keys.agentIDs[agent]...)
		dst = append(dst, '"')
	}
	pi := r.IntN(len(providers))
	p := providers[pi]
	in, out := int64(r.IntN(2000)), int64(r.IntN(800))
	c := (in*p.rateIn + out*p.rateOut) / 1000
	cost := float64(c) / 1e6
	dst = append(dst, `,"tokens":{"input":`...)
	dst = strconv.AppendInt(dst, in, 10)
	dst = append(dst, `,"output":`...)
	dst = strconv.AppendInt(dst, out, 10)
	dst = append(dst, `},"cost":`...)
	// The shortest decimal that parses back to cost.
	dst = strconv.AppendFloat(dst, cost, 'f', -1, 64)
	dst = append(dst, `,"provider":"`...)
	dst = append(dst, p.name...)
	dst = append(dst, `"}`...)
	if count {
		g.exp.Messages++
		a := len(g.byAgent) - 1
		if agent >= 0 {
			a = agent
		}
		for _, s := range []*UsageSum{&g.byProv[pi], &g.byAgent[a]} {
			s.Messages++
			s.TokensInput += in
			s.TokensOutput += out
			s.Cost += cost
		}
	}
	return dst
}

// writeReceipt writes the carrying document of sr to g.line: a user and
// an assistant message, agent-context naming the statement agents, and the
// receipt built by a receiptJob over the references' transcript hashes.
func (g *shortGen) writeReceipt(sr *shortReceipt) error {
	g.pcg.Seed(g.opts.Seed^mix(sr.at), shortStream)
	r := g.r
	nS := 3 + r.IntN(2)
	perm := r.Perm(poolAgents)
	envAlg := r.IntN(2)
	stmts := perm[:nS]
	if receiptReserve(g.keys, stmts, envAlg) > int(g.maxDoc)/2 {
		// Ed25519 keys only: pool agents 0, 2, 4, ...
		for k := range stmts {
			stmts[k] = 2 * k
		}
		envAlg = algEd25519
	}
	stmts = append([]int(nil), stmts...)

	b := g.line[:0]
	g.starts = g.starts[:0]
	g.starts = append(g.starts, len(b)+1)
	b = append(b, `{"id":`...)
	b = g.appendID(b, sr.at)
	g.starts = append(g.starts, len(b)+1)
	b = append(b, `,"extensions":["usage-metadata","agent-context","consensus-receipt"]`...)
	g.starts = append(g.starts, len(b)+1)
	b = append(b, `,"agentId":"`...)
	b = append(b, g.keys.agentIDs[stmts[1]]...)
	g.starts = append(g.starts, len(b)+2)
	b = append(b, `","leaderId":"`...)
	b = append(b, g.keys.agentIDs[stmts[0]]...)
	g.starts = append(g.starts, len(b)+2)
	b = append(b, `","messages":[{"role":"user","content":"`...)
	b = append(b, shortTexts[r.IntN(len(shortTexts))]...)
	b = append(b, '"')
	if nS == 4 {
		b = append(b, `,"agentId":"`...)
		b = append(b, g.keys.agentIDs[stmts[3]]...)
		b = append(b, '"')
	}
	b = append(b, "},"...)
	g.exp.Messages++
	b = g.assistant(b, r, stmts[2], true)
	b = append(b, `]}`...)
	g.line = b

	id := g.appendID(nil, sr.at)
	plan := &receiptPlan{
		convID:  string(id[1 : len(id)-1]),
		stmts:   stmts,
		envAlg:  envAlg,
		reserve: receiptReserve(g.keys, stmts, envAlg),
		starts:  g.starts,
	}
	var refs []jobRef
	if sr.self {
		refs = append(refs, jobRef{id: plan.convID, self: true})
	}
	for _, j := range sr.refs {
		g.tmp = g.doc(g.tmp[:0], j, false)
		id := g.appendID(nil, j)
		refs = append(refs, jobRef{id: string(id[1 : len(id)-1]), idx: j, h: &docHash{data: append([]byte(nil), g.tmp...)}})
	}
	pr := rand.New(rand.NewPCG(sr.seed, shortPlanStream))
	for k := len(refs) - 1; k > 0; k-- {
		x := pr.IntN(k + 1)
		refs[k], refs[x] = refs[x], refs[k]
	}
	j := &receiptJob{
		base: append([]byte(nil), g.line...), plan: plan, refs: refs, tamper: tamperNone, seed: pr.Uint64(),
		keys: g.keys, maxLine: int(g.maxDoc) - 1, done: make(chan struct{}),
		night: g.opts.Dates == DatesNight, day: dayMillis(g.opts.Day),
	}
	j.run()
	if j.err != nil {
		return j.err
	}
	g.line = append(g.line[:0], j.line...)
	re := ReceiptExpect{ConversationID: plan.convID, Line: int64(sr.at) + 1, Algorithm: algNames[envAlg]}
	re.Status, re.Reasons = tallyReceipt(&g.exp.Receipts, 0, j.stmtInvalid)
	re.StatusWithoutKeys, re.ReasonsWithoutKeys = tallyReceipt(&g.exp.ReceiptsWithoutKeys, 0, j.stmtInvalid)
	g.exp.ReceiptList = append(g.exp.ReceiptList, re)
	return nil
}

// finish returns the expectation.
func (g *shortGen) finish() *Expect {
	e := g.exp
	e.Seed = g.opts.Seed
	e.Dates = g.opts.Dates
	if e.Dates == DatesNight {
		e.Day = dayString(dayMillis(g.opts.Day))
	}
	e.MaxDocBytes = g.maxDoc
	e.RejectsByReason = map[string]int64{}
	e.Warnings = map[string]int64{}
	e.ExtensionsUnknown = map[string]int64{}
	var agents []string // the pool's agents; none without receipts
	if g.keys != nil {
		agents = g.keys.agentIDs[:]
	}
	e.Usage = usageExpect(g.byProv[:], g.byAgent[:], agents)
	e.Transcripts = TranscriptTotals{Hashed: e.Documents}
	if e.ReceiptList == nil {
		e.ReceiptList = []ReceiptExpect{}
	}
	if e.Receipts.Reasons == nil {
		e.Receipts.Reasons = map[string]int64{}
	}
	if e.ReceiptsWithoutKeys.Reasons == nil {
		e.ReceiptsWithoutKeys.Reasons = map[string]int64{}
	}
	return &e
}
