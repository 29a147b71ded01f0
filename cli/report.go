package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/costreport"
)

func reportCommand() *command {
	var by, format string
	keys := make([]string, len(costreport.Keys))
	for i, k := range costreport.Keys {
		keys[i] = string(k)
	}
	return &command{
		name:    "report",
		summary: "sum cost and tokens of a run's usage table by provider, agent, day, role or conversation",
		usage:   "convbatch report [--by KEY,...] [--format table|csv|json] OUT",
		example: joinLines(
			"  convbatch report out                                 # cost by provider",
			"  convbatch report --by provider,day out               # per provider per UTC day",
			"  convbatch report --by agent --format csv out > agents.csv",
			"  convbatch report --by conversation --format json out | jq '.rows[:10]'",
			"",
			"OUT is the output directory of convbatch run or extract; the report reads",
			"OUT/tables/usage/*.parquet. Null providers and agents show as (none), a null",
			"created_at as day unknown. Rows are sorted by cost, highest first. The table",
			"and json formats end with the total; csv holds the groups only.",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.StringVar(&by, "by", string(costreport.Provider), "grouping keys, comma-separated: "+strings.Join(keys, ", "))
			fs.StringVar(&format, "format", "table", "output format: table, csv or json")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 {
					return 0, usageErr("report: want exactly one OUT directory (the -o of convbatch run), got %s", plural(int64(len(args)), "argument", "arguments"))
				}
				groupBy, err := costreport.ParseKeys(by)
				if err != nil {
					return 0, usageErr("report --by: %v", err)
				}
				write := map[string]func(*costreport.Report) error{
					"table": func(r *costreport.Report) error { return r.WriteTable(e.stdout) },
					"csv":   func(r *costreport.Report) error { return r.WriteCSV(e.stdout) },
					"json":  func(r *costreport.Report) error { return r.WriteJSON(e.stdout) },
				}[format]
				if write == nil {
					return 0, usageErr("report --format %q: want table, csv or json", format)
				}
				rep, err := costreport.Aggregate(e.ctx, args[0], groupBy)
				if err != nil {
					if errors.Is(err, costreport.ErrNoUsageTable) {
						return 0, usageErr("report: %v", err)
					}
					return 0, fatalErr(fmt.Errorf("report: %w", err))
				}
				if err := write(rep); err != nil {
					return 0, fatalErr(fmt.Errorf("report: %w", err))
				}
				return ExitOK, nil
			}
		},
	}
}
