package sink

// TableCounts are the rows of one table, for report.json: a loader checks
// that it loaded Rows rows in all and each part's rows from that part.
type TableCounts struct {
	// Rows counts the table's rows over every part.
	Rows int64 `json:"rows"`
	// Parts are the table's part files in order, each with its rows.
	Parts []PartCounts `json:"parts"`
}

// PartCounts are the rows of one part file.
type PartCounts struct {
	// Path is the part, relative to the output directory (as in
	// outputs.tables).
	Path string `json:"path"`
	// Rows counts the part's rows (its footer's num_rows).
	Rows int64 `json:"rows"`
}
