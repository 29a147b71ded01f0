// Package transform is the per-document stage of the convbatch pipeline. It
// runs in the worker pool: each worker owns a Processor, which parses a
// record's bytes once (package jsonscan) and hands the parsed document to
// every registered Handler in dependency order.
//
// Handlers are registered in a Registry with a Manifest (name, status, the
// fields they read, the handlers they need). A duplicate name or a missing
// dependency fails when the registry is resolved, before any input is read.
// The core handlers (core-json, core-document) decide whether a record is a
// document or a reject; the extension handlers, registered after them, only
// add warnings and extracted values, never rejects.
//
// The handlers read a document's members through one table per object,
// made once per document (fields.go): core-document matches the root's and
// each message's member names against the names the handlers read, in one
// pass each, instead of every handler scanning the names again with
// Tape.Lookup for every member it wants. Short strings that documents
// repeat (roles, providers, token names) are interned per worker, so a row
// costs no allocation for them.
//
// Each handler lives in its own file, as miller keeps one verb per file:
// corejson.go, coredocument.go, images.go, usage.go, tools.go,
// agentcontext.go, transcript.go, receipts.go and conversation.go.
// Standard, in extensions.go, is the one table of what runs.
package transform
