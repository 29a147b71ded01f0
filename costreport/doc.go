// Package costreport aggregates the usage table that `convbatch run` and
// `convbatch extract` write (OUT/tables/usage/part-NNNNN.parquet, described
// in docs/TABLES.md) into cost and token totals by provider, agent, day,
// role or conversation (one group per document, by source_file and
// source_line), and writes them as a text table, CSV, JSON or an HTML page
// with charts.
//
// It sits after the pipeline: it reads the published Parquet parts only,
// never the archives. The parts are streamed record batch by record batch
// with pqarrow, reading only the columns a report needs, so memory grows
// with the number of groups, not with the number of rows.
//
// Costs add up exactly: each float64 cost cell is read back as its
// shortest round-trip decimal (the archive's literal for literals of up to
// 15 significant digits) and summed as a Decimal, with no rounding, so
// totals and the order of the rows do not depend on the order of the rows
// read. The HTML page (Report.WriteHTML, with WithOverview) draws its
// charts with gonum.org/v1/plot as inline SVG and fetches nothing.
//
// The convbatch report command is a thin client of this package.
package costreport
