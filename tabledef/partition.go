package tabledef

import "fmt"

// Partitioning is how the tables are split into Hive-style partitions
// (docs/TABLES.md, "Partitioned datasets"): part of OUT's layout, which
// the writer (package parquetout), the commit (package outdir: the
// settings of an incremental series, the Iceberg partition spec) and
// Iceberg's maintenance read alike.
type Partitioning string

const (
	// PartitionNone writes each table as one directory of parts,
	// OUT/tables/<name>/part-NNNNN.parquet. The zero value means the same.
	PartitionNone Partitioning = "none"
	// PartitionDay writes each table's rows into one directory per UTC
	// day of its partition time (Table.PartitionColumn),
	// OUT/tables/<name>/day=YYYY-MM-DD/.
	PartitionDay Partitioning = "day"
)

// ParsePartitioning parses the --partition-by flag: "none" or "day".
func ParsePartitioning(s string) (Partitioning, error) {
	switch p := Partitioning(s); p {
	case PartitionNone, PartitionDay:
		return p, nil
	}
	return "", fmt.Errorf("unknown partitioning %q (want none or day)", s)
}

// NullPartition is the value, in a partition directory's name, of the rows
// whose partition time is null: Hive's default partition, which DuckDB,
// Spark, pyarrow and Polars read back as NULL (and DuckDB writes itself).
const NullPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionKey is the name of the partition key in the directory names
// (day=YYYY-MM-DD).
const PartitionKey = "day"
