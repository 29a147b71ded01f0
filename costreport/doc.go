// Package costreport aggregates the usage table that `convbatch run` and
// `convbatch extract` write (OUT/tables/usage/part-NNNNN.parquet, described
// in docs/TABLES.md) into cost and token totals by provider, agent, day,
// role or conversation.
//
// It sits after the pipeline: it reads the published Parquet parts only,
// never the archives. The parts are streamed record batch by record batch
// with pqarrow, reading only the columns a report needs, so memory grows
// with the number of groups, not with the number of rows.
//
// The convbatch report command is a thin client of this package.
package costreport
