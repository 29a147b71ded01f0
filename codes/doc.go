// Package codes holds the codes convbatch reports, one type each, in the
// order docs/FORMAT.md lists them: the reject reason of a line (Reject),
// the warnings counted in the report (Warning), the faults that end an
// input early (InputFault) and the reasons a file found in a directory or
// by a glob is not read (Skip). Receipt reasons are verify.Reason.
//
// A code is a small integer on the hot path (a Result, a Record, an
// InputError carry it) and becomes its documented string only where it is
// written out: the report's counts, rejects.jsonl, an input's error. The
// strings are the data contract and never change; a test holds the tables
// of docs/FORMAT.md to these lists.
//
// The package sits outside internal/ so that every caller of the library,
// the CLI and the Beam module alike, names the codes the same way.
package codes
