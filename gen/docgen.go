package gen

import (
	"encoding/base64"
	"strconv"
)

// Kinds of document lines.
const (
	docPlain      = iota // a good document
	docCRLF              // a good document ending in CRLF (warning crlf)
	docDuplicate         // a good document repeating an earlier id (warning duplicate-id)
	docUnknownExt        // a good document declaring unknown extension names
)

type usageRec struct {
	prov, agent int // agent == len(agentNames) means ""
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
}

func (s *docStats) reset() {
	s.messages = 0
	s.usage = s.usage[:0]
	s.calls, s.results, s.orphans, s.images, s.imageBytes = 0, 0, 0, 0, 0
	s.unknown = [len(unknownExtensions)]bool{}
	s.pendingCalls = s.pendingCalls[:0]
	s.callSeq = 0
	s.convAgent = -1
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

// goodLine writes one document line of the given kind; bom prefixes it
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
	limit := int(g.maxDoc) - 1 // room for a CR, whatever the reader counts
	for {
		g.buildDoc(idx, n, kind == docUnknownExt)
		if len(g.line) <= limit {
			break
		}
		if n == 0 {
			// Cannot happen with MaxDocBytes >= minMaxDocBytes.
			g.reject(reasonTooLarge, g.line)
			return
		}
		n /= 2
	}
	var prefix []byte
	if bom {
		prefix = []byte{0xEF, 0xBB, 0xBF}
		g.warnings[warnBOM]++
	}
	g.write(prefix, g.line, kind == docCRLF)
	g.commit()
	switch kind {
	case docCRLF:
		g.warnings[warnCRLF]++
	case docDuplicate:
		g.warnings[warnDuplicateID]++
	}
	if kind != docDuplicate {
		g.nextIdx++
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
	g.exp.Tools.Unanswered += int64(len(s.pendingCalls))
	g.exp.Images.Messages += s.images
	g.exp.Images.Bytes += s.imageBytes
	for i, u := range s.unknown {
		if u {
			g.unknown[i]++
			g.warnings[warnUnknownExtension]++
		}
	}
}

// buildDoc writes a good document with id number idx and n messages to
// g.line, and its statistics to g.st.
func (g *generator) buildDoc(idx uint64, n int, unknownExt bool) {
	r := g.r
	s := &g.st
	s.reset()
	d := &g.ob[0]
	d.reset()

	d.key("id")
	d.buf = append(d.buf, '"')
	d.buf = g.appendConvID(d.buf, idx)
	d.buf = append(d.buf, '"')
	d.end()

	// Extensions: a document uses only the fields of the extensions it
	// declares, so no undeclared-extension warning is ever expected.
	var ext int
	declare := unknownExt || r.IntN(100) < 85
	if declare {
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
	} else if x := r.IntN(100); x < 3 {
		d.raw("extensions", "null") // null counts as absent
	} else if x < 6 {
		d.raw("extensions", "[]")
	}

	if x := r.IntN(100); x < 60 {
		d.str("title", titles[r.IntN(len(titles))])
	} else if x < 62 {
		d.raw("title", "null")
	}
	if x := r.IntN(100); x < 70 {
		d.key("createdAt")
		d.buf = append(d.buf, '"')
		d.buf = appendTime(d.buf, r)
		d.buf = append(d.buf, '"')
		d.end()
	} else if x < 72 {
		d.raw("createdAt", "null")
	}

	if ext&extAgent != 0 {
		if r.IntN(10) < 9 {
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
		if r.IntN(10) < 6 {
			d.str("leaderId", agentNames[r.IntN(len(agentNames))])
		}
	}

	// CONSENSUS-RECEIPT: documents declaring extConsensus will get their
	// "consensusReceipt" and "consensusTranscripts" members here (a signed
	// envelope over transcript hashes of earlier documents, see the
	// verification profile in docs/FORMAT.md). Until then the extension is
	// only declared, which the contract allows.

	// Forward-compatible extra members, kept verbatim by convbatch.
	if r.IntN(100) < 10 {
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

	s.msgIDs = r.IntN(2) == 0
	s.msgTimes = r.IntN(100) < 40
	d.key("messages")
	d.buf = append(d.buf, '[')
	g.buildMessages(n, ext)
	d.buf = append(d.buf, ']')
	d.end()

	g.line = d.appendTo(g.line[:0], r)
}

// beginMsg starts message number g.msgI with the given role in g.ob[1];
// it returns false (and starts nothing) when the document is full.
func (g *generator) beginMsg(role string) bool {
	if g.msgI >= g.msgN {
		return false
	}
	r := g.r
	s := &g.st
	m := &g.ob[1]
	m.reset()
	m.str("role", role)
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
		m.buf = appendTime(m.buf, r)
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
		if ext&extTools != 0 && r.IntN(100) < 35 {
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
		m.key("toolCalls")
		m.buf = append(m.buf, '[')
		for j := 0; j < k; j++ {
			if j > 0 {
				m.buf = append(m.buf, ',')
			}
			s.callSeq++
			s.calls++
			s.pendingCalls = append(s.pendingCalls, s.callSeq)
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
	agent := len(agentNames)
	if s.convAgent >= 0 {
		agent = s.convAgent
	}
	if ext&extAgent != 0 && r.IntN(100) < 30 {
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
