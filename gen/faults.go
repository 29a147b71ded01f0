package gen

import (
	"strings"

	"github.com/convbatch/convbatch/codes"
)

// Fault kinds. Each fault line has exactly one defect, so the reason
// precedence of docs/FORMAT.md cannot matter. Every kind is listed with the
// way it is counted in Expect:
//
//	crlf-doc           a good document ending in CRLF: document, warning crlf
//	duplicate-id       a good document repeating an earlier accepted id:
//	                   document, warning duplicate-id
//	unknown-extension  a good document declaring 1 or 2 unknown names:
//	                   document, warning unknown-extension once per name,
//	                   extensions_unknown[name]++
//	blank              "", "   ", "\t", " \r": blank (never crlf)
//	invalid-utf8       raw FF, overlong C0 AF, surrogate ED A0 80, or the
//	                   truncated E2 82 inside a content string
//	not-json           truncated document, trailing garbage, trailing comma,
//	                   single-quoted string, NaN, leading zero 012, bad
//	                   escape \x41, raw 0x01 in a string, two objects on one
//	                   line, a bare word
//	too-deep           a message content of 600 nested arrays
//	not-object         [1,2,3], "text", 42, null, true
//	duplicate-key      top-level title twice, a message member twice, role
//	                   written plain and as "\u0072ole"
//	bad-id             id missing, 42, "", null
//	bad-messages       messages missing, an object, null
//	bad-message        a message that is a string, null or 42
//	bad-role           role missing, 7, null
//	bad-extensions     ["a","a"], "usage-metadata", [1]
//	bad-title          title 5, title ["t"]
//	bad-created-at     "yesterday", "2026-13-01T00:00:00Z", a number, a
//	                   message createdAt "2026-01-01"
//	bad-message-field  a message id 5, a message kind true
//	too-large          (MaxDocBytes <= 4 MiB only) a document padded to
//	                   MaxDocBytes+1 .. MaxDocBytes+65536 bytes
//	tool-call-dup      a good document declaring tool-linkage whose first
//	                   tool round repeats the id of a call in the same
//	                   toolCalls array (neither call gets a result):
//	                   document, warning tool-call-duplicate-id per
//	                   repeated call, both calls counted as unanswered
//	transcript-unhashable  a good document (fresh id) holding a lone
//	                   surrogate escape "\ud800" in a message content, or
//	                   a top-level "x-score": 1e400: document, warning
//	                   transcript-unhashable; never referenced by receipts
//
// Rejected lines carry the id the next accepted document will get: a
// reject never registers its id, so that document is no duplicate.
type faultCategory struct {
	name     string
	weight   int // bad-doc counts as 8 categories, one per reason
	variants int
	emit     func(g *generator, variant int)
}

var faultCategories = []faultCategory{
	{"crlf-doc", 1, 1, func(g *generator, _ int) { g.goodLine(docCRLF, false) }},
	{"duplicate-id", 1, 1, func(g *generator, _ int) { g.goodLine(docDuplicate, false) }},
	{"unknown-extension", 1, 1, func(g *generator, _ int) { g.goodLine(docUnknownExt, false) }},
	{"tool-call-dup", 1, 1, func(g *generator, _ int) { g.goodLine(docToolDup, false) }},
	{"transcript-unhashable", 1, 1, func(g *generator, _ int) { g.goodLine(docUnhashable, false) }},
	{"blank", 1, 4, (*generator).faultBlank},
	{"invalid-utf8", 1, 4, (*generator).faultUTF8},
	{"not-json", 1, 10, (*generator).faultNotJSON},
	{"too-deep", 1, 1, (*generator).faultTooDeep},
	{"not-object", 1, 5, (*generator).faultNotObject},
	{"duplicate-key", 1, 3, (*generator).faultDupKey},
	{"bad-doc", 8, 25, (*generator).faultBadDoc},
	{"too-large", 1, 1, (*generator).faultTooLarge}, // last: skipped over TooLargeMaxDocBytes
}

// faultLine writes one fault line, its category drawn by weight.
func (g *generator) faultLine() {
	cats := faultCategories
	if g.maxDoc > TooLargeMaxDocBytes {
		cats = cats[:len(cats)-1]
	}
	total := 0
	for _, c := range cats {
		total += c.weight
	}
	x := g.r.IntN(total)
	for _, c := range cats {
		if x < c.weight {
			c.emit(g, g.r.IntN(c.variants))
			return
		}
		x -= c.weight
	}
}

var blankLines = []string{"", "   ", "\t", " \r"}

func (g *generator) faultBlank(v int) { g.blank([]byte(blankLines[v])) }

// fmember is a member of a fault document: raw JSON key and value.
type fmember struct{ k, v string }

// fmsg is a message of a fault document: members, or a raw value.
type fmsg struct {
	members []fmember
	raw     string
}

// fdoc is a small document built member by member so that one defect can
// be put in.
type fdoc struct {
	top     []fmember
	msgs    []fmsg
	msgsRaw string // replaces the messages array when set
	noMsgs  bool
}

func setMember(ms []fmember, k, v string) []fmember {
	for i := range ms {
		if ms[i].k == k {
			ms[i].v = v
			return ms
		}
	}
	return append(ms, fmember{k, v})
}

func delMember(ms []fmember, k string) []fmember {
	out := ms[:0]
	for _, m := range ms {
		if m.k != k {
			out = append(out, m)
		}
	}
	return out
}

func (g *generator) jsonText(n int) string {
	g.tmp = append(g.tmp[:0], '"')
	g.tmp = appendText(g.tmp, g.r, n)
	g.tmp = append(g.tmp, '"')
	return string(g.tmp)
}

// baseDoc returns a small valid document carrying the next fresh id.
func (g *generator) baseDoc() *fdoc {
	r := g.r
	d := &fdoc{}
	g.tmp = append(g.tmp[:0], '"')
	g.tmp = g.appendConvID(g.tmp, g.nextIdx)
	g.tmp = append(g.tmp, '"')
	d.top = append(d.top, fmember{`"id"`, string(g.tmp)})
	if r.IntN(2) == 0 {
		d.top = append(d.top, fmember{`"title"`, `"` + titles[r.IntN(len(titles))] + `"`})
	}
	if r.IntN(2) == 0 {
		g.tmp = append(g.tmp[:0], '"')
		if g.clock != nil {
			g.clock.start()
		}
		g.tmp = g.appendTime(g.tmp)
		g.tmp = append(g.tmp, '"')
		d.top = append(d.top, fmember{`"createdAt"`, string(g.tmp)})
	}
	if r.IntN(5) < 2 {
		d.top = append(d.top, fmember{`"extensions"`, `["usage-metadata","agent-context"]`})
	}
	n := 2 + r.IntN(3)
	for i := 0; i < n; i++ {
		role := `"user"`
		if i%2 == 1 {
			role = `"assistant"`
		}
		m := fmsg{members: []fmember{{`"role"`, role}, {`"content"`, g.jsonText(1 + r.IntN(3))}}}
		if r.IntN(2) == 0 {
			m.members = append(m.members, fmember{`"id"`, `"m` + string(rune('0'+i)) + `"`})
		}
		d.msgs = append(d.msgs, m)
	}
	return d
}

// someMsg returns the index of a random message of d.
func (g *generator) someMsg(d *fdoc) int { return g.r.IntN(len(d.msgs)) }

func shuffleMembers(g *generator, ms []fmember) {
	for i := len(ms) - 1; i > 0; i-- {
		j := g.r.IntN(i + 1)
		ms[i], ms[j] = ms[j], ms[i]
	}
}

// appendFdoc serializes d, members in random order.
func (g *generator) appendFdoc(dst []byte, d *fdoc) []byte {
	top := append([]fmember(nil), d.top...)
	if !d.noMsgs {
		var b strings.Builder
		if d.msgsRaw != "" {
			b.WriteString(d.msgsRaw)
		} else {
			b.WriteByte('[')
			for i, m := range d.msgs {
				if i > 0 {
					b.WriteByte(',')
				}
				if m.raw != "" {
					b.WriteString(m.raw)
					continue
				}
				ms := append([]fmember(nil), m.members...)
				shuffleMembers(g, ms)
				b.WriteByte('{')
				for j, mm := range ms {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(mm.k)
					b.WriteByte(':')
					b.WriteString(mm.v)
				}
				b.WriteByte('}')
			}
			b.WriteByte(']')
		}
		top = append(top, fmember{`"messages"`, b.String()})
	}
	shuffleMembers(g, top)
	dst = append(dst, '{')
	for i, m := range top {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.k...)
		dst = append(dst, ':')
		dst = append(dst, m.v...)
	}
	return append(dst, '}')
}

func (g *generator) rejectFdoc(reason codes.Reject, d *fdoc) {
	g.line = g.appendFdoc(g.line[:0], d)
	g.reject(reason, g.line)
}

var badUTF8 = []string{"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82"}

func (g *generator) faultUTF8(v int) {
	d := g.baseDoc()
	k := g.someMsg(d)
	d.msgs[k].members = setMember(d.msgs[k].members, `"content"`, `"before `+badUTF8[v]+` after"`)
	g.rejectFdoc(codes.RejectInvalidUTF8, d)
}

var bareWords = []string{"hello", "undefined", "conversation", "nul", "True"}

func (g *generator) faultNotJSON(v int) {
	r := g.r
	d := g.baseDoc()
	k := g.someMsg(d)
	switch v {
	case 0: // truncated, cut before a UTF-8 lead or ASCII byte
		b := g.appendFdoc(g.line[:0], d)
		p := len(b)/4 + r.IntN(len(b)*3/4-1)
		for p > 1 && b[p]&0xC0 == 0x80 {
			p--
		}
		g.line = b[:p]
		g.reject(codes.RejectNotJSON, g.line)
		return
	case 1: // trailing garbage
		b := g.appendFdoc(g.line[:0], d)
		g.line = append(b, [...]string{"}", " garbage", "]", ",", "\"\""}[r.IntN(5)]...)
		g.reject(codes.RejectNotJSON, g.line)
		return
	case 2: // trailing comma
		b := g.appendFdoc(g.line[:0], d)
		b[len(b)-1] = ','
		g.line = append(b, '}')
		g.reject(codes.RejectNotJSON, g.line)
		return
	case 3:
		d.top = setMember(d.top, `"title"`, `'single quoted'`)
	case 4:
		d.top = append(d.top, fmember{`"temperature"`, "NaN"})
	case 5:
		d.top = append(d.top, fmember{`"retries"`, "012"})
	case 6:
		d.msgs[k].members = setMember(d.msgs[k].members, `"content"`, `"bad \x41 escape"`)
	case 7:
		d.msgs[k].members = setMember(d.msgs[k].members, `"content"`, "\"raw \x01 control\"")
	case 8: // two objects
		b := g.appendFdoc(g.line[:0], d)
		b = append(b, ' ')
		g.line = g.appendFdoc(b, g.baseDoc())
		g.reject(codes.RejectNotJSON, g.line)
		return
	default:
		g.line = append(g.line[:0], bareWords[r.IntN(len(bareWords))]...)
		g.reject(codes.RejectNotJSON, g.line)
		return
	}
	g.rejectFdoc(codes.RejectNotJSON, d)
}

func (g *generator) faultTooDeep(int) {
	d := g.baseDoc()
	k := g.someMsg(d)
	d.msgs[k].members = setMember(d.msgs[k].members, `"content"`, strings.Repeat("[", 600)+strings.Repeat("]", 600))
	g.rejectFdoc(codes.RejectTooDeep, d)
}

var notObjects = []string{"[1,2,3]", `"text"`, "42", "null", "true"}

func (g *generator) faultNotObject(v int) {
	g.line = append(g.line[:0], notObjects[v]...)
	g.reject(codes.RejectNotObject, g.line)
}

func (g *generator) faultDupKey(v int) {
	d := g.baseDoc()
	k := g.someMsg(d)
	switch v {
	case 0:
		d.top = delMember(d.top, `"title"`)
		d.top = append(d.top, fmember{`"title"`, `"first"`}, fmember{`"title"`, `"second"`})
	case 1:
		d.msgs[k].members = append(d.msgs[k].members, fmember{`"content"`, `"again"`})
	default:
		d.msgs[k].members = append(d.msgs[k].members, fmember{`"\u0072ole"`, `"user"`})
	}
	g.rejectFdoc(codes.RejectDuplicateKey, d)
}

// faultBadDoc writes a document breaking one core rule; v in 0..24.
func (g *generator) faultBadDoc(v int) {
	d := g.baseDoc()
	k := g.someMsg(d)
	mk := &d.msgs[k].members
	var reason codes.Reject
	switch v {
	case 0:
		reason, d.top = codes.RejectBadID, delMember(d.top, `"id"`)
	case 1:
		reason, d.top = codes.RejectBadID, setMember(d.top, `"id"`, "42")
	case 2:
		reason, d.top = codes.RejectBadID, setMember(d.top, `"id"`, `""`)
	case 3:
		reason, d.top = codes.RejectBadID, setMember(d.top, `"id"`, "null")
	case 4:
		reason, d.noMsgs = codes.RejectBadMessages, true
	case 5:
		reason, d.msgsRaw = codes.RejectBadMessages, `{"0":{"role":"user","content":"hi"}}`
	case 6:
		reason, d.msgsRaw = codes.RejectBadMessages, "null"
	case 7, 8, 9:
		reason = codes.RejectBadMessage
		d.msgs[k] = fmsg{raw: [...]string{`"hello"`, "null", "42"}[v-7]}
	case 10:
		reason, *mk = codes.RejectBadRole, delMember(*mk, `"role"`)
	case 11:
		reason, *mk = codes.RejectBadRole, setMember(*mk, `"role"`, "7")
	case 12:
		reason, *mk = codes.RejectBadRole, setMember(*mk, `"role"`, "null")
	case 13, 14, 15:
		reason = codes.RejectBadExtensions
		d.top = setMember(d.top, `"extensions"`, [...]string{`["a","a"]`, `"usage-metadata"`, `[1]`}[v-13])
	case 16, 17:
		reason = codes.RejectBadTitle
		d.top = setMember(d.top, `"title"`, [...]string{"5", `["t"]`}[v-16])
	case 18, 19, 20:
		reason = codes.RejectBadCreatedAt
		d.top = setMember(d.top, `"createdAt"`, [...]string{`"yesterday"`, `"2026-13-01T00:00:00Z"`, "1700000000"}[v-18])
	case 21:
		reason, *mk = codes.RejectBadCreatedAt, setMember(*mk, `"createdAt"`, `"2026-01-01"`)
	case 22, 23:
		reason, *mk = codes.RejectBadMessageField, setMember(*mk, `"id"`, "5")
	default:
		reason, *mk = codes.RejectBadMessageField, setMember(*mk, `"kind"`, "true")
	}
	g.rejectFdoc(reason, d)
}

// tooLargeFill is ASCII padding for too-large lines.
var tooLargeFill = strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789 ", 1024)

// faultTooLarge queues a document-looking line of MaxDocBytes+1 ..
// MaxDocBytes+65536 bytes, streamed in pieces when written.
func (g *generator) faultTooLarge(int) {
	total := g.maxDoc + 1 + g.r.Int64N(65536)
	head := append([]byte(`{"id":"`), g.appendConvID(nil, g.nextIdx)...)
	head = append(head, `","messages":[{"role":"user","content":"`...)
	g.exp.Rejects++
	g.reasons[codes.RejectTooLarge]++
	g.push(&pend{data: head, tooLarge: total})
}

const tooLargeSuffix = `"}],"title":"padded"}`

// writeTooLarge writes a too-large line: its head, filler, the suffix.
func (g *generator) writeTooLarge(p *pend) {
	fill := p.tooLarge - int64(len(p.data)) - int64(len(tooLargeSuffix))
	g.w.Write(p.data)
	for fill > 0 {
		n := int64(len(tooLargeFill))
		if n > fill {
			n = fill
		}
		g.w.WriteString(tooLargeFill[:n])
		fill -= n
	}
	g.w.WriteString(tooLargeSuffix)
	g.err = g.w.WriteByte('\n')
}
