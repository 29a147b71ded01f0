package cli

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/costreport"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
)

func reportCommand() *command {
	var by, format, since, until string
	var top int
	keys := make([]string, len(costreport.Keys))
	for i, k := range costreport.Keys {
		keys[i] = string(k)
	}
	return &command{
		name:    "report",
		summary: "sum cost and tokens of a run's usage table by provider, agent, day, role or conversation",
		usage:   "convbatch report [--by KEY,...] [--since DATE] [--until DATE] [--top N] [--format table|csv|json|html] OUT",
		example: joinLines(
			"  convbatch report out                                 # cost by provider",
			"  convbatch report --by provider,day out               # per provider per UTC day",
			"  convbatch report --by agent --format csv out > agents.csv",
			"  convbatch report --by conversation --format json out | jq '.rows[:10]'",
			"  convbatch report --format html out > cost.html          # charts and tables",
			"  convbatch report --by day --since 2026-11-01 --until 2026-11-30 out",
			"  convbatch report --by agent --top 20 out                # the 20 costliest agents",
			"",
			"OUT is the output directory of convbatch run or extract; the report reads",
			"OUT/tables/usage/*.parquet. Null providers and agents show as (none), a null",
			"created_at as day unknown. --by conversation groups by document, what",
			"identifies one (source_file, source_line), and shows the conversation id",
			"with them: the same id in two documents (an archive given twice, a",
			"duplicate-id) makes two rows. Rows are sorted by cost, highest first, then by",
			"their keys; with day among the keys, by day first (oldest first, unknown",
			"last). The table and json formats end with the total; csv holds the groups",
			"only.",
			"",
			"Costs add up exactly: each cost cell is taken as the shortest decimal that",
			"reads back as its double (the archive's literal, for literals of up to 15",
			"significant digits) and summed as a decimal, so csv and json print the exact",
			"sum (163.737276, not 163.73727599999998) and the table pads every cost to",
			"the same number of decimals.",
			"",
			"--format html writes one self-contained page (no network fetches; inline",
			"SVG charts): the cost over time stacked by provider (a bar per UTC day, week,",
			"month, quarter or year, the finest that fits; the cost of messages with no",
			"created_at is a line under the chart, not a bar), the top 10 agents by cost,",
			"tokens by provider, their tables, and the --by table when it is another.",
			"Dates far from the others are listed under the chart, not drawn: a day more",
			"than 3 times the interquartile range of the dated days (at least 30 days)",
			"before their first quartile or after their third (a 1970 date among four",
			"years). The tables print whole (no scroll boxes on paper).",
			"",
			"--since and --until (YYYY-MM-DD, UTC, both included, either alone) sum only",
			"the messages whose created_at falls on those days; messages with no",
			"created_at are then left out. --top N keeps the N groups of highest cost (in",
			"the usual order) and sums the others in one row, \"(K more groups)\" (json:",
			"\"omitted\"; csv: left out); the total is still every group's.",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.StringVar(&by, "by", string(costreport.Provider), "grouping keys, comma-separated, each at most once: "+strings.Join(keys, ", "))
			fs.StringVar(&format, "format", "table", "output format: table, csv, json or html")
			fs.StringVar(&since, "since", "", "sum only messages created on or after this UTC day, YYYY-MM-DD")
			fs.StringVar(&until, "until", "", "sum only messages created on or before this UTC day, YYYY-MM-DD")
			fs.IntVar(&top, "top", 0, "show only the N groups of highest cost, the others summed in one row (0: all)")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 {
					return 0, usageErr("report: want exactly one OUT directory (the -o of convbatch run), got %s", plural(int64(len(args)), "argument", "arguments"))
				}
				groupBy, err := groupKeys(by)
				if err != nil {
					return 0, err
				}
				write := map[string]func(*costreport.Report) error{
					"table": func(r *costreport.Report) error { return r.WriteTable(e.stdout) },
					"csv":   func(r *costreport.Report) error { return r.WriteCSV(e.stdout) },
					"json":  func(r *costreport.Report) error { return r.WriteJSON(e.stdout) },
					"html":  func(r *costreport.Report) error { return r.WriteHTML(e.stdout) },
				}[format]
				if write == nil {
					return 0, usageErr("report --format %q: want table, csv, json or html", format)
				}
				if top < 0 {
					return 0, usageErr("report --top %d: want a number of groups, at least 1 (0 for all)", top)
				}
				rangeOpt, err := dateRange(since, until)
				if err != nil {
					return 0, err
				}
				out, cleanup, err := reportDir(e, args[0])
				if err != nil {
					return 0, err
				}
				defer cleanup()
				var opts []costreport.Option
				if format == "html" {
					opts = append(opts, costreport.WithOverview())
				}
				if rangeOpt != nil {
					opts = append(opts, rangeOpt)
				}
				rep, err := costreport.Aggregate(e.ctx, out, groupBy, opts...)
				if err != nil {
					if errors.Is(err, costreport.ErrNoUsageTable) {
						return 0, usageErr("report: %v", err)
					}
					return 0, fatalErr(fmt.Errorf("report: %w", err))
				}
				rep.Top(top)
				if err := write(rep); err != nil {
					return 0, fatalErr(fmt.Errorf("report: %w", err))
				}
				if format == "table" {
					writeCumulative(e.stdout, out)
				}
				return ExitOK, nil
			}
		},
	}
}

// groupKeys parses --by; a key given twice is refused (ParseKeys drops a
// repeat, which is a typo to show).
func groupKeys(by string) ([]costreport.Key, error) {
	groupBy, err := costreport.ParseKeys(by)
	if err != nil {
		return nil, usageErr("report --by: %v", err)
	}
	seen := map[string]bool{}
	for _, k := range strings.Split(by, ",") {
		if k = strings.TrimSpace(k); k != "" && seen[k] {
			return nil, usageErr("report --by %q: %s is given twice; give each key once", by, k)
		}
		seen[k] = true
	}
	return groupBy, nil
}

// dateRange is the costreport option of --since and --until (UTC days,
// inclusive; either may be ""), nil when neither is given.
func dateRange(since, until string) (costreport.Option, error) {
	if since == "" && until == "" {
		return nil, nil
	}
	var bounds [2]time.Time
	for i, v := range []struct{ flag, value string }{{"since", since}, {"until", until}} {
		if v.value == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, v.value)
		if err != nil {
			return nil, usageErr("report --%s %q: want a UTC day, YYYY-MM-DD", v.flag, v.value)
		}
		bounds[i] = d
	}
	if since != "" && until != "" && bounds[0].After(bounds[1]) {
		return nil, usageErr("report --since %s is after --until %s", since, until)
	}
	return costreport.WithDateRange(bounds[0], bounds[1]), nil
}

// reportDir returns the local OUT report reads for out: out itself
// (checkReportDir), or for an OUT on object storage a temporary copy of
// its report.json and usage table (fetchUsage), which cleanup removes.
func reportDir(e *env, out string) (dir string, cleanup func(), err error) {
	if !objout.IsURL(out) {
		return out, func() {}, checkReportDir(out)
	}
	tmp, err := fetchUsage(e, out)
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(tmp, "out"), func() { os.RemoveAll(tmp) }, nil
}

// checkReportDir refuses, as usage errors that say what to pass instead, an
// OUT that does not exist, is a file, or lies inside a run's output
// directory (OUT/tables/usage, say) rather than being that directory.
func checkReportDir(dir string) error {
	const want = "pass the -o directory of convbatch run or extract"
	st, err := os.Stat(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return usageErr("report: %s: no such directory; %s", dir, want)
	}
	if err != nil {
		return fatalErr(fmt.Errorf("report: %w", err))
	}
	if _, err := os.Stat(filepath.Join(dir, outdir.ReportFile)); err == nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fatalErr(fmt.Errorf("report: %w", err))
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		if _, err := os.Stat(filepath.Join(p, outdir.ReportFile)); err == nil {
			rel, err := filepath.Rel(abs, p)
			if err != nil || filepath.IsAbs(dir) {
				rel = p
			} else {
				rel = filepath.Join(dir, rel)
			}
			return usageErr("report: %s lies inside the output directory %s; pass that directory: convbatch report %s", dir, rel, rel)
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	if !st.IsDir() {
		return usageErr("report: %s is a file, not a directory; %s", dir, want)
	}
	return nil
}
