package transform

import (
	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/jsonscan"
)

// CoreJSON checks that a line is valid UTF-8 holding exactly one JSON object
// with no duplicate member names, nested at most MaxDepth deep, and leaves
// the parsed tape in the Doc.
type CoreJSON struct {
	// MaxDepth is the nesting limit; <= 0 means jsonscan.DefaultMaxDepth.
	MaxDepth int
}

// Manifest describes core-json.
func (CoreJSON) Manifest() Manifest {
	return Manifest{Name: HandlerCoreJSON, Status: StatusCore, Reads: []string{"$"}}
}

// Handle parses d.Rec.Data into d.Tape.
func (h CoreJSON) Handle(d *Doc, res *Result) {
	// The parser checks UTF-8 first, over the whole line, so its
	// ErrInvalidUTF8 ranks above every syntax fault, as invalid-utf8 ranks
	// above not-json (docs/FORMAT.md).
	if err := d.Tape.Parse(d.Rec.Data, h.MaxDepth); err != nil {
		perr, ok := err.(*jsonscan.Error)
		if !ok {
			res.Reject = codes.RejectNotJSON
			return
		}
		res.Column = column(d, perr.Offset)
		switch perr.Code {
		case jsonscan.ErrInvalidUTF8:
			res.Reject = codes.RejectInvalidUTF8
		case jsonscan.ErrTooDeep:
			res.Reject = codes.RejectTooDeep
		case jsonscan.ErrDuplicateKey:
			if d.Tape.Kind(0) != jsonscan.Object {
				res.Reject, res.Column = codes.RejectNotObject, 0
				return
			}
			res.Reject = codes.RejectDuplicateKey
		default:
			res.Reject = codes.RejectNotJSON
		}
		return
	}
	if d.Tape.Kind(0) != jsonscan.Object {
		res.Reject = codes.RejectNotObject
	}
}

// column converts an offset in d.Rec.Data to a 1-based position in the line;
// 0 for a .json input (docs/FORMAT.md, "Lines, offsets and framing"): its
// one line is the whole file, compacted when it parses, so an offset in
// Data is no column of a line.
func column(d *Doc, off int) int {
	if d.Rec.WholeFile || d.Rec.Compacted {
		return 0
	}
	if d.Rec.BOM {
		off += 3
	}
	return off + 1
}
