package sink

import "github.com/convbatch/convbatch/transform"

// transcriptsTable declares the transcripts table (docs/TABLES.md,
// "transcripts"): one row per document.
var transcriptsTable = newTable(TableTranscripts,
	utf8Col("conversation_id", func(d *docRow) string { return d.ID }),
	sha256Col("sha256"),
	optInt64Col("canonical_bytes", func(d *docRow) transform.Opt[int64] {
		return transform.Opt[int64]{V: d.Rows.CanonicalBytes, Valid: d.Hashed}
	}),
	utf8Col("source_file", func(d *docRow) string { return d.File }).dict(),
	int64Col("source_line", func(d *docRow) int64 { return d.Line }),
).partitionedBy(docCreatedAt)
