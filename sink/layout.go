package sink

import "fmt"

// tablesDir is the directory the table parts' paths start with: the
// tables' directory of OUT (outdir.DirTables), where the commit publishes
// them. TODO(issue 23): parts named within the tables' directory, placed
// by outdir.
const tablesDir = "tables"

// TablePart returns the path of the table's Parquet part number part.
func TablePart(table string, part int) string {
	return fmt.Sprintf("%s/%s/part-%05d.parquet", tablesDir, table, part)
}

// TablePartIn returns the path of the Parquet part number part of the
// table's partition, a directory name such as "day=2026-11-29"
// (DayPartition).
func TablePartIn(table, partition string, part int) string {
	return fmt.Sprintf("%s/%s/%s/part-%05d.parquet", tablesDir, table, partition, part)
}
