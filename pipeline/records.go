package pipeline

import (
	"bytes"
	"maps"
	"math/bits"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/transform"
)

// Class is what a framed record turned out to be once the handlers ran.
type Class uint8

const (
	// ClassBlank is a blank line.
	ClassBlank Class = iota
	// ClassReject is a line rejected while framing or by a handler.
	ClassReject
	// ClassDocument is a document.
	ClassDocument
)

// Counters are the report's counters that records add to, beside
// sink.Counts: by reason, by warning, by declared extension. They are kept
// per input (a segment's seal holds them) or per shard (the Beam module
// merges them).
type Counters struct {
	RejectsByReason   map[string]int64 `json:"rejects_by_reason"`
	Warnings          map[string]int64 `json:"warnings"`
	Declared          map[string]int64 `json:"declared"`
	Unknown           map[string]int64 `json:"unknown"`
	StatementsInvalid int64            `json:"statements_invalid"`
}

// NewCounters returns empty Counters, their maps made.
func NewCounters() Counters {
	return Counters{RejectsByReason: map[string]int64{}, Warnings: map[string]int64{}, Declared: map[string]int64{}, Unknown: map[string]int64{}}
}

// AddTo adds the counters to the report's.
func (c *Counters) AddTo(rep *sink.Report) {
	addAll(rep.RejectsByReason, c.RejectsByReason)
	addAll(rep.Warnings, c.Warnings)
	addAll(rep.Extensions.Declared, c.Declared)
	addAll(rep.Extensions.Unknown, c.Unknown)
	rep.Receipts.StatementsInvalid += c.StatementsInvalid
}

// Merge adds o's counters to c's.
func (c *Counters) Merge(o *Counters) {
	addAll(c.RejectsByReason, o.RejectsByReason)
	addAll(c.Warnings, o.Warnings)
	addAll(c.Declared, o.Declared)
	addAll(c.Unknown, o.Unknown)
	c.StatementsInvalid += o.StatementsInvalid
}

// Clone returns a copy of c that shares no map with it.
func (c *Counters) Clone() Counters {
	return Counters{RejectsByReason: maps.Clone(c.RejectsByReason), Warnings: maps.Clone(c.Warnings),
		Declared: maps.Clone(c.Declared), Unknown: maps.Clone(c.Unknown), StatementsInvalid: c.StatementsInvalid}
}

func addAll(dst, src map[string]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

// Tally classifies one record that the handlers processed and counts it:
// its line, its reject reason or its warnings, extensions and invalid
// statements. Every caller that frames records counts them with it, so
// that the accounting law (docs/FORMAT.md) holds the same way for each.
func Tally(counts *sink.Counts, ctr *Counters, rec *stream.Record, res *transform.Result) Class {
	counts.Lines++
	if rec.BOM {
		ctr.Warnings[codes.WarnBOMDropped.String()]++
	}
	switch {
	case rec.Kind == stream.KindBlank:
		counts.Blank++
		return ClassBlank
	case res.Reject != codes.NoReject:
		counts.Rejects++
		ctr.RejectsByReason[res.Reject.String()]++
		return ClassReject
	}
	counts.Documents++
	if rec.CR {
		ctr.Warnings[codes.WarnCRLF.String()]++
	}
	for _, code := range res.Warnings {
		ctr.Warnings[code.String()]++
	}
	if res.Receipt != nil {
		ctr.StatementsInvalid += int64(res.Receipt.StatementsInvalid)
	}
	for m := uint(res.Declared); m != 0; m &= m - 1 {
		ctr.Declared[transform.KnownExtensions[bits.TrailingZeros(m)]]++
	}
	for _, name := range res.Unknown {
		ctr.Unknown[name]++
	}
	return ClassDocument
}

// SegmentOutputs are the files one input's records go to (or one shard's,
// in the Beam module): the archive write-back, the rejects and the
// document tables. A nil member is an output not written.
type SegmentOutputs struct {
	Archive *sink.ArchiveWriter
	Rejects *sink.RejectWriter
	Tables  *parquetout.Tables
}

// WriteDocument writes a document of input path: its table rows and its
// archive line (the document's bytes, without a BOM or CR).
func (o *SegmentOutputs) WriteDocument(path string, rec *stream.Record, res *transform.Result) error {
	if o.Tables != nil {
		d := parquetout.Doc{File: path, Line: rec.Line, ID: res.ID, Hash: res.Hash, Hashed: res.Hashed, Rows: &res.Rows}
		if err := o.Tables.AddDocument(&d); err != nil {
			return err
		}
	}
	if o.Archive != nil {
		return o.Archive.Write(rec.Data)
	}
	return nil
}

// WriteReject writes a reject of input path: its position, reason and
// kept bytes (from the spool, for a too-large line).
func (o *SegmentOutputs) WriteReject(path string, rec *stream.Record, res *transform.Result) error {
	if o.Rejects == nil {
		return nil
	}
	r := sink.Reject{File: path, Line: rec.Line, Offset: rec.Offset, Reason: res.Reject.String(), Column: res.Column, Length: rec.Length}
	if rec.Raw == nil {
		return o.Rejects.Write(r, rec.Spool.Reader())
	}
	return o.Rejects.Write(r, bytes.NewReader(rec.Raw))
}

// Close closes the outputs; the first error is returned. Tables stays
// set, for its counts.
func (o *SegmentOutputs) Close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if o.Archive != nil {
		keep(o.Archive.Close())
		o.Archive = nil
	}
	if o.Rejects != nil {
		keep(o.Rejects.Close())
		o.Rejects = nil
	}
	if o.Tables != nil {
		keep(o.Tables.Close())
	}
	return first
}
