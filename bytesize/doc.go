// Package bytesize parses and formats byte sizes as convbatch's flags and
// summaries spell them: "64MiB", "1.5G", "10MB" in (Parse), "1.5 GiB" out
// (Format). It stands beside the pipeline rather than in it: it depends on
// nothing else in convbatch, so every command that takes sizes (run,
// extract and verify, gen, the Beam module) shares it without importing
// the generator or the CLI.
package bytesize
