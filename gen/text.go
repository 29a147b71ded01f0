package gen

import (
	"math/rand/v2"
	"strconv"
)

// objBuilder collects the members of one JSON object so that they can be
// written in a random order.
type objBuilder struct {
	buf   []byte
	spans []int // start, end of each member in buf
}

func (o *objBuilder) reset() {
	o.buf = o.buf[:0]
	o.spans = o.spans[:0]
}

// key starts a member; its value is appended to o.buf, then end is called.
func (o *objBuilder) key(k string) {
	o.spans = append(o.spans, len(o.buf))
	o.buf = append(o.buf, '"')
	o.buf = append(o.buf, k...)
	o.buf = append(o.buf, '"', ':')
}

func (o *objBuilder) end() { o.spans = append(o.spans, len(o.buf)) }

// str adds a member with a string value whose text is already JSON-escaped.
func (o *objBuilder) str(k, v string) {
	o.key(k)
	o.buf = append(o.buf, '"')
	o.buf = append(o.buf, v...)
	o.buf = append(o.buf, '"')
	o.end()
}

// raw adds a member with a raw JSON value.
func (o *objBuilder) raw(k, v string) {
	o.key(k)
	o.buf = append(o.buf, v...)
	o.end()
}

// appendTo writes the object, members shuffled, to dst.
func (o *objBuilder) appendTo(dst []byte, r *rand.Rand) []byte {
	return o.appendToStarts(dst, r, nil)
}

// appendToStarts is appendTo; when starts is not nil, the offset in dst of
// each member written is appended to it.
func (o *objBuilder) appendToStarts(dst []byte, r *rand.Rand, starts *[]int) []byte {
	n := len(o.spans) / 2
	var permArr [64]uint8
	perm := permArr[:0]
	for i := 0; i < n && i < len(permArr); i++ {
		perm = append(perm, uint8(i))
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	dst = append(dst, '{')
	for i, p := range perm {
		if i > 0 {
			dst = append(dst, ',')
		}
		if starts != nil {
			*starts = append(*starts, len(dst))
		}
		dst = append(dst, o.buf[o.spans[2*int(p)]:o.spans[2*int(p)+1]]...)
	}
	return append(dst, '}')
}

// mix is the splitmix64 finalizer, a bijection on uint64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

const hexDigits = "0123456789abcdef"

func appendHex64(dst []byte, v uint64) []byte {
	for s := 60; s >= 0; s -= 4 {
		dst = append(dst, hexDigits[(v>>uint(s))&15])
	}
	return dst
}

// appendConvID appends the id of the i-th registered document, unique by
// construction (mix is a bijection).
func (g *generator) appendConvID(dst []byte, i uint64) []byte {
	dst = append(dst, "conv-"...)
	return appendHex64(dst, mix(i+g.idSalt))
}

// appendTime appends a valid RFC 3339 date-time in one of many spellings.
func appendTime(dst []byte, r *rand.Rand) []byte {
	y := 2023 + r.IntN(4)
	mo := 1 + r.IntN(12)
	d := 1 + r.IntN(28)
	h, mi, s := r.IntN(24), r.IntN(60), r.IntN(60)
	form := r.IntN(100)
	if form == 0 { // leap second, allowed by the contract
		return append(dst, "2016-12-31T23:59:60Z"...)
	}
	dst = append4(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, mo)
	dst = append(dst, '-')
	dst = append2(dst, d)
	if form == 1 {
		dst = append(dst, 't')
	} else {
		dst = append(dst, 'T')
	}
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, mi)
	dst = append(dst, ':')
	dst = append2(dst, s)
	switch {
	case form < 20:
		dst = append(dst, '.')
		dst = append3(dst, r.IntN(1000))
	case form < 25:
		dst = append(dst, '.')
		dst = append3(dst, r.IntN(1000))
		dst = append3(dst, r.IntN(1000))
		dst = append3(dst, r.IntN(1000))
	case form < 27:
		dst = append(dst, '.', byte('0'+r.IntN(10)))
	}
	switch {
	case form == 1:
		dst = append(dst, 'z')
	case form < 60:
		dst = append(dst, 'Z')
	case form < 70:
		dst = append(dst, "+00:00"...)
	case form < 80:
		dst = append(dst, "+02:00"...)
	case form < 85:
		dst = append(dst, "+05:30"...)
	case form < 95:
		dst = append(dst, "-05:00"...)
	default:
		dst = append(dst, "-09:30"...)
	}
	return dst
}

func append2(dst []byte, v int) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }
func append3(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
}
func append4(dst []byte, v int) []byte { return append2(append2(dst, v/100), v%100) }

// fragments are pieces of message text, already JSON-escaped (valid string
// contents). Repeated entries weight the draw towards ASCII prose.
var fragments = []string{
	"The quick brown fox jumps over the lazy dog.",
	"Here is a summary of the changes you asked for:",
	"I think the simplest approach is to stream the input line by line.",
	"Could you clarify what you mean by that?",
	"Sure! Let me walk through it step by step.",
	"First, we parse the configuration; then we validate every field.",
	"That depends on the size of the dataset and the available memory.",
	"The function returns an error when the input is empty.",
	"Let's check the logs for the request id and the timestamp.",
	"In short: yes, but only if the cache is warm.",
	"Thanks, that fixed it.",
	"Here's a revised version with better error handling.",
	"We measured a 3.5x speed-up after batching the writes (p99 went from 120 ms to 34 ms).",
	"Please review the attached diff and tell me what you think.",
	"The meeting is at 10:30 on Tuesday; bring the Q3 numbers.",
	"Note: this API is deprecated since v2.4 & will be removed in v3.",
	"SELECT id, created_at FROM conversations WHERE archived = false LIMIT 100;",
	"Error: connection reset by peer (errno=104) <retrying in 5s>",
	"https://example.com/docs/api?version=2&lang=en#section-4",
	"ok",
	"Hmm.",
	"The quick brown fox jumps over the lazy dog.",
	"Let me know if you need anything else!",
	"Step 1: install the dependencies. Step 2: run the tests. Step 3: ship it.",
	"It compiles, but the benchmark regressed by about 8%.",
	"Here is the code:\\n\\n```go\\nfunc main() {\\n\\tfmt.Println(\\\"hello\\\")\\n}\\n```\\n",
	"Line one\\nLine two\\nLine three",
	"Column\\tValue\\tUnit\\nlatency\\t12.5\\tms",
	"He said \\\"it works on my machine\\\" and left.",
	"The path is C:\\\\Users\\\\dev\\\\project\\\\main.go",
	"caf\\u00e9 cr\\u00e8me br\\u00fbl\\u00e9e",
	"smile \\ud83d\\ude00 and rocket \\ud83d\\ude80",
	"paragraph\\u2028separator and\\u2029paragraph",
	"\\u001b[32mPASS\\u001b[0m all tests",
	"slash \\/ escaped and tab\\tinside",
	"Crème brûlée à la française, naïve façade, déjà vu.",
	"Größenordnung über die Straße, Ärger im Büro.",
	"El niño comió piña en España; ¿qué más?",
	"Dziękuję bardzo, to jest świetne rozwiązanie.",
	"Привет, мир! Это тестовое сообщение.",
	"Γειά σου Κόσμε, η απάντηση είναι σωστή.",
	"你好，世界。这是一个关于流式处理的测试。",
	"日本語のテキストです。ストリーミング処理を確認します。",
	"안녕하세요, 세계! 결과를 확인해 주세요.",
	"مرحبا بالعالم، هذه رسالة تجريبية.",
	"שלום עולם, זו הודעת בדיקה.",
	"नमस्ते दुनिया, यह एक परीक्षण है।",
	"สวัสดีชาวโลก นี่คือข้อความทดสอบ",
	"Emoji: 🚀 ✨ 👩‍💻 🇫🇷 😀 🧪 🤖",
	"Math: ∑ x² ≤ ∞, ∀ε>0 ∃δ, π ≈ 3.14159",
	"Musical 𝄞 and ancient 𐍈 and CJK ext 𠜎𠜱",
	"mixed العربية and English and 中文 in one line",
	"Zero\\u200bwidth space and non\\u00a0breaking space",
}

// appendText appends n fragments separated by spaces (JSON string contents).
func appendText(dst []byte, r *rand.Rand, n int) []byte {
	for i := 0; i < n; i++ {
		if i > 0 {
			if r.IntN(8) == 0 {
				dst = append(dst, `\n\n`...)
			} else {
				dst = append(dst, ' ')
			}
		}
		dst = append(dst, fragments[r.IntN(len(fragments))]...)
	}
	return dst
}

// textLen draws a long-tailed number of fragments for a message.
func textLen(r *rand.Rand) int {
	switch x := r.IntN(100); {
	case x < 60:
		return 1 + r.IntN(4)
	case x < 90:
		return 5 + r.IntN(20)
	case x < 98:
		return 25 + r.IntN(75)
	default:
		return 100 + r.IntN(300)
	}
}

// appendCost appends a spelling of the decimal c*10^-6 and returns the
// float64 a correctly rounding parser yields for it (every spelling of the
// same decimal parses to the same double).
func appendCost(dst []byte, r *rand.Rand, c int64) ([]byte, float64) {
	v := float64(c) / 1e6
	ip, fp := c/1e6, c%1e6
	frac := strconv.AppendInt(nil, 1e6+fp, 10)[1:] // 6 digits
	switch r.IntN(6) {
	case 0: // shortest decimal
		dst = strconv.AppendInt(dst, ip, 10)
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		if len(frac) > 0 {
			dst = append(dst, '.')
			dst = append(dst, frac...)
		}
	case 1: // all six digits, trailing zeros kept ("0.100000")
		dst = strconv.AppendInt(dst, ip, 10)
		dst = append(dst, '.')
		dst = append(dst, frac...)
	case 2: // integer mantissa, negative exponent
		dst = strconv.AppendInt(dst, c, 10)
		dst = append(dst, "e-6"...)
	case 3:
		dst = strconv.AppendInt(dst, c, 10)
		dst = append(dst, "E-6"...)
	default: // normalized scientific, "1.2345e-2", "1.5E+1", "0e0"
		if c == 0 {
			return append(dst, "0e0"...), 0
		}
		digits := strconv.AppendInt(nil, c, 10)
		exp := len(digits) - 1 - 6
		for len(digits) > 1 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
		}
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		if r.IntN(2) == 0 {
			dst = append(dst, 'e')
		} else {
			dst = append(dst, 'E')
		}
		if exp >= 0 && r.IntN(2) == 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(exp), 10)
	}
	return dst, v
}

// oddNumbers are valid JSON numbers in unusual spellings for extra,
// non-usage members (all within IEEE-754 double range).
var oddNumbers = []string{
	"-0", "0.10", "1e3", "1E-7", "9007199254740993", "-12.5e+2", "0", "3.0",
	"1.7976931348623157e308", "5e-324", "-0.0", "123456789012345678901234567890",
	"2.50", "1E+2", "0.1e1",
}

var titles = []string{
	"Debugging the ingestion pipeline", "Résumé review", "旅行の計画",
	"Quarterly report draft", "Refactor: streaming parser", "Recipe ideas 🍝",
	"SQL performance question", "خطة المشروع", "Help with \\\"quotes\\\" in YAML",
	"Untitled", "", "Deploy checklist\\tv2", "Поиск ошибки", "Weekly sync notes",
}

var models = []string{"gpt-4o", "gpt-4.1-mini", "claude-sonnet-4", "gemini-2.5-pro", "mistral-large", "llama-3.1-70b", "o3"}

type provider struct {
	name    string
	rateIn  int64 // micro-dollars per 1000 tokens
	rateOut int64
}

var providers = [...]provider{
	{"openai", 2500, 10000},
	{"anthropic", 3000, 15000},
	{"google", 1250, 5000},
	{"mistral", 2000, 6000},
	{"local", 0, 0},
	{"azure-openai", 2500, 10000},
}

var agentNames = [...]string{
	"agent-planner", "agent-coder", "agent-reviewer", "agent-researcher",
	"agent-critic", "agent-7f3a", "agent-ψ", "orchestrator",
}

var swarmRoles = []string{"leader", "worker", "critic", "observer", "planner"}

var skillNames = []string{"web-search", "code-exec", "sql", "summarize", "translate", "vision", "retrieval"}

var toolNames = []string{"get_weather", "search_web", "run_sql", "read_file", "write_file", "http_get", "calculator"}

// knownExtensions are the five registered extensions, in bit order.
var knownExtensions = [...]string{"images-inline", "usage-metadata", "tool-linkage", "agent-context", "consensus-receipt"}

const (
	extImages = 1 << iota
	extUsage
	extTools
	extAgent
	extConsensus
)

// unknownExtensions are declared by unknown-extension fault documents.
var unknownExtensions = [...]string{"x-experimental-foo", "x-acme-trace", "org.example.audit-v2", "tractum.memory", "x-experimental-bar"}
