package transform

import (
	"fmt"

	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/stream"
)

// Doc is one record on its way through the handlers.
type Doc struct {
	// Rec is the framed line.
	Rec *stream.Record
	// Tape is the parsed document, filled by core-json.
	Tape *jsonscan.Tape
	// MaxDepth is the nesting limit core-json applies.
	MaxDepth int

	// Set by core-document for the handlers after it: the token index of
	// each top-level member, or -1 when absent.
	ID, Messages, Extensions int32
}

// Result is what the handlers found in one record.
type Result struct {
	// Reject is the reject reason code, "" for a document.
	Reject string
	// Column is the 1-based byte position in the line where the fault that
	// made the reject was found, 0 when it concerns the whole line.
	Column int
	// ID is the document's id, unescaped.
	ID string
	// Warnings lists warning codes, one entry per occurrence.
	Warnings []string
	// Declared has bit i set when the document declares KnownExtensions[i].
	Declared uint8
	// Unknown lists the declared extension names convbatch does not know.
	Unknown []string
	// Panic holds a handler's panic, turned into an error for the batch.
	Panic error
}

// Reset empties r for reuse.
func (r *Result) Reset() {
	*r = Result{Warnings: r.Warnings[:0], Unknown: r.Unknown[:0]}
}

// Warn records one occurrence of warning code.
func (r *Result) Warn(code string) { r.Warnings = append(r.Warnings, code) }

// Processor runs the handlers on records. Each worker owns one; it is not
// safe for concurrent use.
type Processor struct {
	handlers []Handler
	tape     jsonscan.Tape
	doc      Doc
	maxDepth int
}

// NewProcessor returns a processor for handlers, which must come from
// Registry.Resolve. maxDepth <= 0 means jsonscan.DefaultMaxDepth.
func NewProcessor(handlers []Handler, maxDepth int) *Processor {
	return &Processor{handlers: handlers, maxDepth: maxDepth}
}

// Process runs the handlers on rec and fills res (after resetting it).
// Blank lines and records already rejected while framing are left as they
// are. A handler's panic is caught and reported in res.Panic.
func (p *Processor) Process(rec *stream.Record, res *Result) {
	res.Reset()
	if rec.Kind != stream.KindLine {
		if rec.Kind == stream.KindReject {
			res.Reject = rec.Reason
		}
		return
	}
	p.doc = Doc{Rec: rec, Tape: &p.tape, MaxDepth: p.maxDepth, ID: -1, Messages: -1, Extensions: -1}
	defer func() {
		if v := recover(); v != nil {
			res.Panic = fmt.Errorf("handler panic on line %d: %v", rec.Line, v)
		}
	}()
	for _, h := range p.handlers {
		h.Handle(&p.doc, res)
		if res.Reject != "" {
			return
		}
	}
}
