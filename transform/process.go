package transform

import (
	"fmt"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/verify"
)

// Doc is one record on its way through the handlers.
type Doc struct {
	// Rec is the framed line.
	Rec *stream.Record
	// Tape is the parsed document, filled by core-json.
	Tape *jsonscan.Tape

	// Set by core-document for the handlers after it: the token index of
	// each top-level member, or -1 when absent.
	ID, Messages, Extensions int32
	// Agents are the agent ids the agent-context fields name (set by the
	// agent-context handler).
	Agents []string

	state any
	// inBatch is set while ProcessBatch runs: a BatchFinisher's Handle
	// may leave part of its work to FinishBatch.
	inBatch bool

	// The members of the root object and of each message, indexed once
	// (fields.go), and the scratch memory for escaped names.
	root                     members
	msgs                     []message
	rootIndexed, msgsIndexed bool
	scratch                  []byte
	strs                     *strCache
}

// State returns the running handler's per-worker state (see Stateful), or
// nil.
func (d *Doc) State() any { return d.state }

// Stateful is implemented by handlers that keep scratch memory: each worker
// gets its own state from NewState, which Handle reads with Doc.State.
type Stateful interface {
	NewState() any
}

// BatchFinisher is implemented by handlers that may finish part of their
// work on several documents at once: after every record of a batch has
// been through the handlers, ProcessBatch calls FinishBatch with the
// handler's state (see Stateful), which must complete every Result the
// handler left unfinished (the Results of a batch stay where they are until
// ProcessBatch returns). Under Process alone the handler must do all of
// its work in Handle; Doc.InBatch tells which.
type BatchFinisher interface {
	FinishBatch(state any)
}

// InBatch reports whether the document is handled by ProcessBatch, whose
// BatchFinisher handlers may finish it in FinishBatch.
func (d *Doc) InBatch() bool { return d.inBatch }

// Result is what the handlers found in one record.
type Result struct {
	// Reject is the reject reason, codes.NoReject for a document.
	Reject codes.Reject
	// Column is the 1-based byte position in the line where the fault that
	// made the reject was found, 0 when it concerns the whole line.
	Column int
	// ID is the document's id, unescaped.
	ID string
	// Warnings lists the warnings, one entry per occurrence.
	Warnings []codes.Warning
	// Declared has bit i set when the document declares KnownExtensions[i].
	Declared uint8
	// Unknown lists the declared extension names convbatch does not know.
	Unknown []string
	// Panic holds a handler's panic, turned into an error for the batch.
	Panic error

	// Hash is the document's transcript hash when Hashed.
	Hash   [32]byte
	Hashed bool
	// Receipt is the document's receipt check, nil without a receipt.
	Receipt *verify.ReceiptCheck
	// Images and ImageBytes count inline images and their decoded size.
	Images, ImageBytes int64
	// Rows are the table rows of the document, filled when the handlers
	// extract (Options.Extract).
	Rows Rows
}

// reset empties r for reuse, keeping the memory of its lists. It clears
// field by field, in place: `*r = Result{...}` built the zero Result on the
// stack and copied it over, some 600 bytes twice per document (and through
// the write barrier while the GC runs). TestResetClearsEveryField keeps it
// complete.
func (r *Result) reset() {
	r.Reject, r.Column, r.ID = codes.NoReject, 0, ""
	r.Warnings = r.Warnings[:0]
	r.Declared = 0
	r.Unknown = r.Unknown[:0]
	r.Panic = nil
	r.Hash, r.Hashed = [32]byte{}, false
	r.Receipt = nil
	r.Images, r.ImageBytes = 0, 0
	r.Rows.reset()
}

// Warn records one occurrence of warning w.
func (r *Result) Warn(w codes.Warning) { r.Warnings = append(r.Warnings, w) }

// Processor runs the handlers on records. Each worker owns one; it is not
// safe for concurrent use.
type Processor struct {
	handlers []Handler
	states   []any
	// finishers are the indexes in handlers of the BatchFinishers.
	finishers []int
	tape      jsonscan.Tape
	doc       Doc
	strs      strCache
}

// NewProcessor returns a processor for handlers, which must come from
// Registry.Resolve.
func NewProcessor(handlers []Handler) *Processor {
	p := &Processor{handlers: handlers, states: make([]any, len(handlers))}
	for i, h := range handlers {
		if s, ok := h.(Stateful); ok {
			p.states[i] = s.NewState()
		}
		if _, ok := h.(BatchFinisher); ok {
			p.finishers = append(p.finishers, i)
		}
	}
	return p
}

// maxKeptMessages is the most message index entries (80 bytes each) a
// Processor keeps between documents.
const maxKeptMessages = 1 << 16

// Process runs the handlers on rec and fills res (after resetting it).
// Blank lines and records already rejected while framing are left as they
// are. A handler's panic is caught and reported in res.Panic.
func (p *Processor) Process(rec *stream.Record, res *Result) {
	res.reset()
	if rec.Kind != stream.KindLine {
		if rec.Kind == stream.KindReject {
			res.Reject = rec.Reason
		}
		return
	}
	d := &p.doc
	d.Rec, d.Tape, d.ID, d.Messages, d.Extensions, d.Agents = rec, &p.tape, -1, -1, -1, d.Agents[:0]
	d.rootIndexed, d.msgsIndexed, d.strs = false, false, &p.strs
	if cap(d.msgs) > maxKeptMessages {
		d.msgs = nil // do not keep a hostile document's index for good
	}
	defer func() {
		if v := recover(); v != nil {
			res.Panic = fmt.Errorf("handler panic on line %d: %v", rec.Line, v)
		}
	}()
	for i, h := range p.handlers {
		p.doc.state = p.states[i]
		h.Handle(&p.doc, res)
		if res.Reject != codes.NoReject {
			return
		}
	}
}

// ProcessBatch runs the handlers on every record of recs, as Process does,
// into results, which it grows to len(recs) (reusing its room) and returns:
// results[i] is recs[i]'s. The BatchFinisher handlers then finish the
// batch (the transcript hashes of all its documents at once).
func (p *Processor) ProcessBatch(recs []stream.Record, results []Result) []Result {
	if cap(results) < len(recs) {
		results = make([]Result, len(recs))
	}
	results = results[:len(recs)]
	p.doc.inBatch = true
	for i := range recs {
		p.Process(&recs[i], &results[i])
	}
	p.doc.inBatch = false
	for _, i := range p.finishers {
		p.handlers[i].(BatchFinisher).FinishBatch(p.states[i])
	}
	return results
}
