package gen

import (
	"encoding/base64"
	"strconv"

	"github.com/convbatch/convbatch/codes"
)

// Kinds of document lines.
const (
	docPlain      = iota // a good document
	docCRLF              // a good document ending in CRLF (warning crlf)
	docDuplicate         // a good document repeating an earlier id (warning duplicate-id)
	docUnknownExt        // a good document declaring unknown extension names
	docToolDup           // a good document repeating a tool call id (warning tool-call-duplicate-id)
	docUnhashable        // a good document JCS refuses (warning transcript-unhashable)
)

type usageRec struct {
	prov, agent int // index in g.agents; g.noAgent means ""
	in, out     int64
	cost        float64
}

// docStats accumulates the counts of one document; they are committed only
// when the document is accepted.
type docStats struct {
	messages     int64
	usage        []usageRec
	calls        int64
	results      int64
	orphans      int64
	images       int64
	imageBytes   int64
	unknown      [len(unknownExtensions)]bool
	pendingCalls []uint64 // call ids waiting for a result
	callSeq      uint64
	convAgent    int // -1: none
	msgIDs       bool
	msgTimes     bool

	// consensus receipt plan (carry)
	carry    bool
	stmt     []int // statement agents (pool numbers)
	envAlg   int
	reserve  int
	forced   []int // agents (g.agents indices) still to name on messages
	msgAgent int   // agent named by the message being built, -1: none

	surrogate, surPlaced    bool // docUnhashable: lone surrogate in a content
	wantDupCall, dupPlaced  bool
	dupCalls, dupUnanswered int64
}

func (s *docStats) reset() {
	s.messages = 0
	s.usage = s.usage[:0]
	s.calls, s.results, s.orphans, s.images, s.imageBytes = 0, 0, 0, 0, 0
	s.unknown = [len(unknownExtensions)]bool{}
	s.pendingCalls = s.pendingCalls[:0]
	s.callSeq = 0
	s.convAgent = -1
	s.carry = false
	s.stmt = s.stmt[:0]
	s.forced = s.forced[:0]
	s.msgAgent = -1
	s.surrogate, s.surPlaced = false, false
	s.wantDupCall, s.dupPlaced = false, false
	s.dupCalls, s.dupUnanswered = 0, 0
}

// messageCount draws a long-tailed number of messages (2..200).
func (g *generator) messageCount() int {
	switch x := g.r.IntN(100); {
	case x < 80:
		return 2 + g.r.IntN(19)
	case x < 95:
		return 21 + g.r.IntN(30)
	default:
		return 51 + g.r.IntN(150)
	}
}

// goodLine generates one document line of the given kind; bom prefixes it
// with a byte-order mark.
func (g *generator) goodLine(kind int, bom bool) {
	idx := g.nextIdx
	if kind == docDuplicate {
		if g.nextIdx == 0 {
			kind = docPlain
		} else {
			idx = uint64(g.r.Int64N(int64(g.nextIdx)))
		}
	}
	n := g.messageCount()
	for {
		g.buildDoc(idx, n, kind)
		limit := int(g.maxDoc) - 1 // room for a CR, whatever the reader counts
		if g.st.carry {
			limit -= g.st.reserve
		}
		if len(g.line) <= limit {
			break
		}
		if n == 0 {
			// Cannot happen with MaxDocBytes >= MinMaxDocBytes.
			g.reject(codes.RejectTooLarge, g.line)
			return
		}
		n /= 2
	}
	s := &g.st
	p := &pend{bom: bom, cr: kind == docCRLF, data: append([]byte(nil), g.line...), doc: true, idx: idx}
	switch {
	case s.carry:
		p.plan = &receiptPlan{
			convID:  string(g.appendConvID(nil, idx)),
			stmts:   append([]int(nil), s.stmt...),
			envAlg:  s.envAlg,
			reserve: s.reserve,
			starts:  append([]int(nil), g.starts...),
		}
		if g.clock != nil {
			p.plan.end = g.clock.t
		}
	case g.keys != nil && kind != docDuplicate && kind != docUnhashable:
		p.candidate = true
		p.id = string(g.appendConvID(nil, idx))
	}
	if bom {
		g.warnings[codes.WarnBOMDropped]++
	}
	g.commit()
	switch kind {
	case docCRLF:
		g.warnings[codes.WarnCRLF]++
	case docDuplicate:
		g.warnings[codes.WarnDuplicateID]++
	case docUnhashable:
		g.warnings[codes.WarnTranscriptUnhashable]++
		g.unhashable++
	}
	if kind != docDuplicate {
		g.nextIdx++
	}
	g.push(p)
}

// planReceipt decides the statement agents and the envelope algorithm of
// a carrying document with n messages, within a size reserve of at most
// half the cap; it sets s.carry.
func (g *generator) planReceipt(n int) {
	r := g.r
	s := &g.st
	nS := min(3+r.IntN(5), 2+n)
	perm := r.Perm(poolAgents)
	envAlg := r.IntN(2)
	budget := int(g.maxDoc) / 2
	for receiptReserve(g.keys, perm[:nS], envAlg) > budget {
		i, k := -1, -1
		for x, a := range perm[:nS] {
			if g.keys.agentKeys[a].alg == algMLDSA65 {
				i = x
				break
			}
		}
		for x, a := range perm[nS:] {
			if g.keys.agentKeys[a].alg == algEd25519 {
				k = nS + x
				break
			}
		}
		switch {
		case i >= 0 && k >= 0:
			perm[i], perm[k] = perm[k], perm[i]
		case envAlg != algEd25519:
			envAlg = algEd25519
		case nS > 3:
			nS--
		default:
			return
		}
	}
	if nS < 3 {
		return
	}
	s.carry = true
	s.stmt = append(s.stmt[:0], perm[:nS]...)
	s.envAlg = envAlg
	s.reserve = receiptReserve(g.keys, s.stmt, envAlg)
	for _, a := range s.stmt[2:] {
		s.forced = append(s.forced, len(agentNames)+a)
	}
}

// commit adds the statistics of the document just written.
func (g *generator) commit() {
	s := &g.st
	g.exp.Documents++
	g.exp.Messages += s.messages
	for _, u := range s.usage {
		p := &g.byProv[u.prov]
		p.Messages++
		p.TokensInput += u.in
		p.TokensOutput += u.out
		p.Cost += u.cost
		a := &g.byAgent[u.agent]
		a.Messages++
		a.TokensInput += u.in
		a.TokensOutput += u.out
		a.Cost += u.cost
	}
	g.exp.Tools.Calls += s.calls
	g.exp.Tools.Results += s.results
	g.exp.Tools.Orphans += s.orphans
	g.exp.Tools.Unanswered += int64(len(s.pendingCalls)) + s.dupUnanswered
	g.warnings[codes.WarnToolResultOrphan] += s.orphans
	g.warnings[codes.WarnToolCallDuplicateID] += s.dupCalls
	g.exp.Images.Messages += s.images
	g.exp.Images.Bytes += s.imageBytes
	for i, u := range s.unknown {
		if u {
			g.unknown[i]++
			g.warnings[codes.WarnUnknownExtension]++
		}
	}
}

// buildDoc writes a good document of the given kind with id number idx
// and n messages to g.line (its member offsets to g.starts), and its
// statistics to g.st.
func (g *generator) buildDoc(idx uint64, n int, kind int) {
	r := g.r
	s := &g.st
	s.reset()
	if g.clock != nil {
		g.clock.start()
	}
	if g.keys != nil && kind == docPlain && r.IntN(100) < 20 {
		g.planReceipt(n)
	}
	switch kind {
	case docToolDup:
		s.wantDupCall = true
	case docUnhashable:
		s.surrogate = r.IntN(2) == 0
	}
	d := &g.ob[0]
	d.reset()

	d.key("id")
	d.buf = append(d.buf, '"')
	d.buf = g.appendConvID(d.buf, idx)
	d.buf = append(d.buf, '"')
	d.end()
	ext := g.addExtensions(d, kind)
	g.addTitleAndDate(d)
	if ext&extAgent != 0 {
		g.addAgentContext(d)
	}

	// CONSENSUS-RECEIPT: a carrying document (s.carry) gets its
	// "consensusReceipt" and "consensusTranscripts" members later, inserted
	// at random member positions by a receiptJob (receipts.go) once the
	// documents it references, before and after it, are generated. Other
	// documents may declare the extension without using it.

	if kind == docUnhashable && !s.surrogate {
		d.raw("x-score", "1e400")
	}
	g.addExtraMember(d)

	s.msgIDs = r.IntN(2) == 0
	s.msgTimes = r.IntN(100) < 40
	d.key("messages")
	d.buf = append(d.buf, '[')
	g.buildMessages(n, ext)
	d.buf = append(d.buf, ']')
	d.end()
	if s.surrogate && !s.surPlaced {
		d.raw("x-score", "1e400")
	}
	if s.carry && len(s.forced) > 0 {
		// Cannot happen: n >= len(s.forced). Keep the named agents only.
		s.stmt = s.stmt[:len(s.stmt)-len(s.forced)]
		s.carry = len(s.stmt) >= 3
	}

	g.starts = g.starts[:0]
	g.line = d.appendToStarts(g.line[:0], r, &g.starts)
}

// addExtensions draws the extensions the document uses and adds its
// "extensions" member (or null, [] or none when it declares nothing); it
// returns the known extensions' bits. A document uses only the fields of
// the extensions it declares, so no undeclared-extension warning is ever
// expected.
func (g *generator) addExtensions(d *objBuilder, kind int) int {
	r := g.r
	s := &g.st
	unknownExt := kind == docUnknownExt
	declare := unknownExt || s.carry || kind == docToolDup || r.IntN(100) < 85
	if !declare {
		if x := r.IntN(100); x < 3 {
			d.raw("extensions", "null") // null counts as absent
		} else if x < 6 {
			d.raw("extensions", "[]")
		}
		return 0
	}
	var ext int
	if r.IntN(100) < 30 {
		ext |= extImages
	}
	if r.IntN(100) < 70 {
		ext |= extUsage
	}
	if r.IntN(100) < 40 {
		ext |= extTools
	}
	if r.IntN(100) < 35 {
		ext |= extAgent
	}
	if r.IntN(100) < 5 {
		ext |= extConsensus
	}
	if s.carry {
		ext |= extAgent | extConsensus
	}
	if kind == docToolDup {
		ext |= extTools
	}
	var names [len(knownExtensions) + 2]string
	k := 0
	for i, name := range knownExtensions {
		if ext&(1<<i) != 0 {
			names[k] = name
			k++
		}
	}
	if unknownExt {
		a := r.IntN(len(unknownExtensions))
		names[k] = unknownExtensions[a]
		s.unknown[a] = true
		k++
		if r.IntN(3) == 0 {
			b := (a + 1 + r.IntN(len(unknownExtensions)-1)) % len(unknownExtensions)
			names[k] = unknownExtensions[b]
			s.unknown[b] = true
			k++
		}
	}
	for i := k - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		names[i], names[j] = names[j], names[i]
	}
	d.key("extensions")
	d.buf = append(d.buf, '[')
	for i := 0; i < k; i++ {
		if i > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = append(d.buf, '"')
		d.buf = append(d.buf, names[i]...)
		d.buf = append(d.buf, '"')
	}
	d.buf = append(d.buf, ']')
	d.end()
	return ext
}

// addTitleAndDate adds, each now and then, a title and a createdAt
// (sometimes null): 7 documents in 10 have one in the spread, 98 in 100 in
// a night's archive, by the same draw.
func (g *generator) addTitleAndDate(d *objBuilder) {
	r := g.r
	if x := r.IntN(100); x < 60 {
		d.str("title", titles[r.IntN(len(titles))])
	} else if x < 62 {
		d.raw("title", "null")
	}
	dated, null := 70, 72
	if g.clock != nil {
		dated, null = 98, 99
	}
	if x := r.IntN(100); x < dated {
		d.key("createdAt")
		d.buf = append(d.buf, '"')
		d.buf = g.appendTime(d.buf)
		d.buf = append(d.buf, '"')
		d.end()
	} else if x < null {
		d.raw("createdAt", "null")
	}
}

// appendTime appends the time of the conversation being built: its clock's
// in a night's archive, else one of the spread.
func (g *generator) appendTime(dst []byte) []byte {
	if g.clock != nil {
		return appendISO(dst, g.clock.t)
	}
	return appendTime(dst, g.r)
}

// addAgentContext adds the conversation-level agent-context members. A
// carrying document names its statement agents: the leader, the
// conversation's agent, and the others on messages (s.forced).
func (g *generator) addAgentContext(d *objBuilder) {
	r := g.r
	s := &g.st
	if s.carry {
		s.convAgent = len(agentNames) + s.stmt[1]
		d.str("agentId", g.agents[s.convAgent])
	} else if r.IntN(10) < 9 {
		s.convAgent = r.IntN(len(agentNames))
		d.str("agentId", agentNames[s.convAgent])
	}
	if r.IntN(10) < 8 {
		d.key("skillIds")
		d.buf = append(d.buf, '[')
		k := r.IntN(4)
		off := r.IntN(len(skillNames))
		for i := 0; i < k; i++ {
			if i > 0 {
				d.buf = append(d.buf, ',')
			}
			d.buf = append(d.buf, '"')
			d.buf = append(d.buf, skillNames[(off+i)%len(skillNames)]...)
			d.buf = append(d.buf, '"')
		}
		d.buf = append(d.buf, ']')
		d.end()
	}
	if r.IntN(10) < 8 {
		d.str("swarmRole", swarmRoles[r.IntN(len(swarmRoles))])
	}
	if s.carry {
		d.str("leaderId", g.agents[len(agentNames)+s.stmt[0]])
	} else if r.IntN(10) < 6 {
		d.str("leaderId", agentNames[r.IntN(len(agentNames))])
	}
}

// addExtraMember adds, now and then, a forward-compatible extra member,
// which convbatch keeps verbatim.
func (g *generator) addExtraMember(d *objBuilder) {
	r := g.r
	if r.IntN(100) >= 10 {
		return
	}
	switch r.IntN(4) {
	case 0:
		d.raw("schemaVersion", "1")
	case 1:
		d.key("settings")
		d.buf = append(d.buf, `{"temperature":`...)
		d.buf = append(d.buf, oddNumbers[r.IntN(len(oddNumbers))]...)
		d.buf = append(d.buf, `,"model":"`...)
		d.buf = append(d.buf, models[r.IntN(len(models))]...)
		d.buf = append(d.buf, `","seed":9007199254740993}`...)
		d.end()
	case 2:
		d.str("x-source", "import/chatgpt-export")
	default:
		d.raw("tags", `["work","ünïcode","🏷️",null,true,{"nested":[1,2,{"deep":[]}]}]`)
	}
}

// beginMsg starts message number g.msgI with the given role in g.ob[1];
// it returns false (and starts nothing) when the document is full.
func (g *generator) beginMsg(role string) bool {
	if g.msgI >= g.msgN {
		return false
	}
	s := &g.st
	m := &g.ob[1]
	m.reset()
	m.str("role", role)
	if g.clock != nil {
		g.clock.message(role)
	}
	s.msgAgent = -1
	if len(s.forced) > 0 && (role != "user" || g.msgN-g.msgI <= len(s.forced)) {
		s.msgAgent = s.forced[0]
		s.forced = s.forced[1:]
		m.str("agentId", g.agents[s.msgAgent])
	}
	if s.msgIDs {
		m.key("id")
		m.buf = append(m.buf, `"msg-`...)
		m.buf = strconv.AppendInt(m.buf, int64(g.msgI), 10)
		m.buf = append(m.buf, '"')
		m.end()
	}
	if s.msgTimes {
		m.key("createdAt")
		m.buf = append(m.buf, '"')
		m.buf = g.appendTime(m.buf)
		m.buf = append(m.buf, '"')
		m.end()
	}
	return true
}

// endMsg finishes the message started by beginMsg and appends it to the
// document's messages array.
func (g *generator) endMsg() {
	r := g.r
	m := &g.ob[1]
	d := &g.ob[0]
	if r.IntN(100) < 3 {
		switch r.IntN(3) {
		case 0:
			m.key("params")
			m.buf = append(m.buf, `{"temperature":`...)
			m.buf = append(m.buf, oddNumbers[r.IntN(len(oddNumbers))]...)
			m.buf = append(m.buf, `,"top_p":`...)
			m.buf = append(m.buf, oddNumbers[r.IntN(len(oddNumbers))]...)
			m.buf = append(m.buf, '}')
			m.end()
		case 1:
			m.raw("seq", "9007199254740993")
		default:
			m.raw("annotations", `[]`)
		}
	}
	if g.msgI > 0 {
		d.buf = append(d.buf, ',')
	}
	d.buf = m.appendTo(d.buf, r)
	g.st.messages++
	g.msgI++
}

// buildMessages appends n messages, comma-separated, to g.ob[0].buf.
func (g *generator) buildMessages(n, ext int) {
	r := g.r
	s := &g.st
	m := &g.ob[1]
	g.msgI, g.msgN = 0, n

	if x := r.IntN(100); x < 45 {
		if g.beginMsg("system") {
			g.textContent(m)
			g.endMsg()
		}
	} else if x < 50 {
		if g.beginMsg("developer") {
			g.textContent(m)
			g.endMsg()
		}
	}
	for g.msgI < n {
		if g.beginMsg("user") {
			if ext&extImages != 0 && r.IntN(100) < 12 {
				g.imageContent(m)
			} else {
				g.textContent(m)
			}
			g.endMsg()
		}
		if ext&extTools != 0 && (s.wantDupCall && !s.dupPlaced || r.IntN(100) < 35) {
			if g.beginMsg("assistant") {
				g.assistant(m, ext, true)
				g.endMsg()
			}
			// results, in random order, some missing
			p := s.pendingCalls
			for k := len(p) - 1; k > 0; k-- {
				j := r.IntN(k + 1)
				p[k], p[j] = p[j], p[k]
			}
			for len(s.pendingCalls) > 0 && r.IntN(100) >= 10 && g.beginMsg("tool") {
				last := len(s.pendingCalls) - 1
				g.toolResult(m, s.pendingCalls[last], false)
				s.pendingCalls = s.pendingCalls[:last]
				s.results++
				g.endMsg()
			}
			if r.IntN(100) < 4 && g.beginMsg("tool") {
				s.callSeq++
				g.toolResult(m, s.callSeq, true)
				s.orphans++
				g.endMsg()
			}
		}
		if g.beginMsg("assistant") {
			g.assistant(m, ext, false)
			g.endMsg()
		}
		if r.IntN(100) < 2 && g.beginMsg("developer") {
			g.textContent(m)
			g.endMsg()
		}
	}
}

// textContent adds a content member: usually a string, sometimes an array
// of parts or an object.
func (g *generator) textContent(m *objBuilder) {
	r := g.r
	m.key("content")
	switch x := r.IntN(100); {
	case x < 90:
		m.buf = append(m.buf, '"')
		if g.st.surrogate && !g.st.surPlaced {
			m.buf = append(m.buf, `\ud800 `...) // a lone surrogate: no JCS form
			g.st.surPlaced = true
		}
		m.buf = appendText(m.buf, r, textLen(r))
		m.buf = append(m.buf, '"')
	case x < 96:
		k := 1 + r.IntN(3)
		m.buf = append(m.buf, '[')
		for j := 0; j < k; j++ {
			if j > 0 {
				m.buf = append(m.buf, ',')
			}
			if r.IntN(2) == 0 {
				m.buf = append(m.buf, `{"type":"text","text":"`...)
			} else {
				m.buf = append(m.buf, `{"text":"`...)
			}
			m.buf = appendText(m.buf, r, textLen(r))
			m.buf = append(m.buf, `"}`...)
		}
		m.buf = append(m.buf, ']')
	default:
		m.buf = append(m.buf, `{"format":"markdown","text":"`...)
		m.buf = appendText(m.buf, r, textLen(r))
		m.buf = append(m.buf, `","lang":"en"}`...)
	}
	m.end()
	if r.IntN(100) < 4 {
		m.str("kind", [...]string{"text", "reasoning", "summary", "note"}[r.IntN(4)])
	}
}

var imageTypes = []string{"png", "jpeg", "webp", "gif"}

// imageContent adds an inline image: a data URL, or raw base64 with kind
// "image".
func (g *generator) imageContent(m *objBuilder) {
	r := g.r
	s := &g.st
	size := 120 + r.IntN(3000)
	off := r.IntN(len(g.b64) - size)
	payload := g.b64[off : off+size]
	m.key("content")
	m.buf = append(m.buf, '"')
	dataURL := r.IntN(3) != 0
	if dataURL {
		m.buf = append(m.buf, "data:image/"...)
		m.buf = append(m.buf, imageTypes[r.IntN(len(imageTypes))]...)
		m.buf = append(m.buf, ";base64,"...)
	}
	m.buf = base64.StdEncoding.AppendEncode(m.buf, payload)
	m.buf = append(m.buf, '"')
	m.end()
	if !dataURL || r.IntN(4) == 0 {
		m.str("kind", "image")
	}
	s.images++
	s.imageBytes += int64(size)
}

// assistant adds the members of an assistant message; withCalls adds
// toolCalls (tool-linkage).
func (g *generator) assistant(m *objBuilder, ext int, withCalls bool) {
	r := g.r
	s := &g.st
	if withCalls {
		switch r.IntN(3) {
		case 0:
			m.raw("content", "null")
		case 1:
			m.raw("content", `""`)
		default:
			m.key("content")
			m.buf = append(m.buf, '"')
			m.buf = appendText(m.buf, r, 1)
			m.buf = append(m.buf, '"')
			m.end()
		}
		k := 1 + r.IntN(3)
		dup := s.wantDupCall && !s.dupPlaced
		if dup {
			k = 2 + r.IntN(2)
		}
		m.key("toolCalls")
		m.buf = append(m.buf, '[')
		for j := 0; j < k; j++ {
			if j > 0 {
				m.buf = append(m.buf, ',')
			}
			s.calls++
			if dup && j == 1 {
				// Repeat the id of call 0; neither gets a result.
				s.pendingCalls = s.pendingCalls[:len(s.pendingCalls)-1]
				s.dupUnanswered += 2
				s.dupCalls++
				s.dupPlaced = true
			} else {
				s.callSeq++
				s.pendingCalls = append(s.pendingCalls, s.callSeq)
			}
			c := &g.ob[2]
			c.reset()
			c.key("id")
			c.buf = g.appendCallID(c.buf, s.callSeq, false)
			c.end()
			c.str("name", toolNames[r.IntN(len(toolNames))])
			a := &g.ob[3]
			a.reset()
			a.str("query", fragments[r.IntN(len(fragments))])
			if r.IntN(2) == 0 {
				a.raw("limit", strconv.Itoa(1+r.IntN(100)))
			}
			if r.IntN(2) == 0 {
				a.raw("verbose", "false")
			}
			if r.IntN(3) == 0 {
				a.raw("filters", `{"lang":["en","fr"],"since":null}`)
			}
			c.key("arguments")
			c.buf = a.appendTo(c.buf, r)
			c.end()
			m.buf = c.appendTo(m.buf, r)
		}
		m.buf = append(m.buf, ']')
		m.end()
	} else {
		g.textContent(m)
	}
	agent := g.noAgent
	if s.convAgent >= 0 {
		agent = s.convAgent
	}
	if s.msgAgent >= 0 {
		agent = s.msgAgent
	} else if ext&extAgent != 0 && r.IntN(100) < 30 {
		agent = r.IntN(len(agentNames))
		m.str("agentId", agentNames[agent])
	}
	if ext&extUsage != 0 && r.IntN(100) < 85 {
		pi := r.IntN(len(providers))
		p := providers[pi]
		in := int64(r.IntN(4000))
		if r.IntN(20) == 0 {
			in = int64(r.IntN(200000))
		}
		out := int64(r.IntN(1500))
		t := &g.ob[2]
		t.reset()
		t.raw("input", strconv.FormatInt(in, 10))
		t.raw("output", strconv.FormatInt(out, 10))
		if r.IntN(4) == 0 {
			t.raw("cache_read", strconv.Itoa(r.IntN(100000)))
		}
		if r.IntN(6) == 0 {
			t.raw("reasoning", strconv.Itoa(r.IntN(5000)))
		}
		m.key("tokens")
		m.buf = t.appendTo(m.buf, r)
		m.end()
		c := (in*p.rateIn + out*p.rateOut) / 1000
		var cost float64
		m.key("cost")
		m.buf, cost = appendCost(m.buf, r, c)
		m.end()
		m.str("provider", p.name)
		if r.IntN(2) == 0 {
			m.str("model", models[r.IntN(len(models))])
		}
		s.usage = append(s.usage, usageRec{prov: pi, agent: agent, in: in, out: out, cost: cost})
	}
}

// appendCallID appends a quoted call id, unique within a conversation;
// orphan ids never collide with call ids.
func (g *generator) appendCallID(dst []byte, seq uint64, orphan bool) []byte {
	if orphan {
		dst = append(dst, `"orphan_`...)
	} else {
		dst = append(dst, `"call_`...)
	}
	n := len(dst)
	dst = appendHex64(dst, mix(seq^g.idSalt))[:n+12]
	dst = append(dst, '_')
	dst = strconv.AppendUint(dst, seq, 10)
	return append(dst, '"')
}

// toolResult adds the members of a tool message answering call seq.
func (g *generator) toolResult(m *objBuilder, seq uint64, orphan bool) {
	r := g.r
	m.key("toolCallId")
	m.buf = g.appendCallID(m.buf, seq, orphan)
	m.end()
	m.key("content")
	if r.IntN(2) == 0 {
		m.buf = append(m.buf, `"{\"status\":\"ok\",\"rows\":`...)
		m.buf = strconv.AppendInt(m.buf, int64(r.IntN(1000)), 10)
		m.buf = append(m.buf, `}"`...)
	} else {
		m.buf = append(m.buf, '"')
		m.buf = appendText(m.buf, r, textLen(r))
		m.buf = append(m.buf, '"')
	}
	m.end()
}
