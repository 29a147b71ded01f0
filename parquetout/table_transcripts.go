package parquetout

import (
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// The row builder of the transcripts table (docs/TABLES.md,
// "transcripts"): one row per document, partitioned by its created_at.
var _ = fromDocuments(mustDeclare(tabledef.Transcripts, getters[*docRow]{
	tabledef.ColConversationID: utf8Col(func(d *docRow) string { return d.ID }),
	tabledef.ColSHA256:         sha256Col(),
	tabledef.ColCanonicalBytes: optInt64Col(func(d *docRow) transform.Opt[int64] {
		return transform.Opt[int64]{V: d.Rows.CanonicalBytes, Valid: d.Hashed}
	}),
	tabledef.ColSourceFile: utf8Col(func(d *docRow) string { return d.File }),
	tabledef.ColSourceLine: int64Col(func(d *docRow) int64 { return d.Line }),
}, docCreatedAt), func(d *docRow, w *rowWriter[*docRow]) error { return w.add(d) })
