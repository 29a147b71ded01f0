package icebergout

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
)

// PartitionField is the name of the day partition field of a partitioned
// table's spec (Iceberg's day transform of the table's partition column).
const PartitionField = "day"

// Schema returns the Iceberg schema of the named table (a tabledef name):
// its declared columns in order, with the types of the Parquet parts
// (parquetout.Schema), field ids numbered from 1 in that order and then
// the nested fields'.
func Schema(name string) (*iceberg.Schema, error) {
	sc := parquetout.Schema(name)
	if sc == nil {
		return nil, fmt.Errorf("iceberg: unknown table %q", name)
	}
	s, err := table.ArrowSchemaToIcebergWithFreshIDs(sc, false)
	if err != nil {
		return nil, fmt.Errorf("iceberg: schema of table %s: %w", name, err)
	}
	return s, nil
}

// Spec returns the partition spec of the named table in schema s: with
// partitioned, Iceberg's day transform of the table's partition column
// (tabledef.Table.PartitionColumn) as the field "day"; otherwise, or for
// a table that declares no partition column (tool_calls and transcripts,
// which take the day of their document), the unpartitioned spec.
func Spec(name string, s *iceberg.Schema, partitioned bool) (iceberg.PartitionSpec, error) {
	col := partitionColumn(name)
	if !partitioned || col == "" {
		return *iceberg.UnpartitionedSpec, nil
	}
	f, ok := s.FindFieldByName(col)
	if !ok {
		return iceberg.PartitionSpec{}, fmt.Errorf("iceberg: table %s has no column %s", name, col)
	}
	return iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{f.ID},
		FieldID:   1000,
		Name:      PartitionField,
		Transform: iceberg.DayTransform{},
	}), nil
}

// partitionColumn is the declared partition column of the named table, ""
// when it has none.
func partitionColumn(name string) string {
	t, _ := tabledef.Lookup(name)
	return t.PartitionColumn
}
