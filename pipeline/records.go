package pipeline

import (
	"bytes"
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

// Tally classifies one record that the handlers processed and counts it:
// its line, its reject reason or its warnings, extensions and invalid
// statements. Every caller that frames records counts them with it, so
// that the accounting law (docs/FORMAT.md) holds the same way for each.
func Tally(counts *sink.Counts, ctr *sink.Counters, rec *stream.Record, res *transform.Result) Class {
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

// CloseArchive closes the archive of the input that ended, in a segment
// whose next input gets an archive of its own.
func (o *SegmentOutputs) CloseArchive() error {
	if o.Archive == nil {
		return nil
	}
	err := o.Archive.Close()
	o.Archive = nil
	return err
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

// Abort closes the outputs after a failure and removes the tables' parts
// in progress; the segment's transaction (sink.Txn.Abort) removes the rest.
func (o *SegmentOutputs) Abort() {
	o.Close()
	if o.Tables != nil {
		o.Tables.Abort()
	}
}
