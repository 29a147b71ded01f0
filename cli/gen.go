package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/gen"
)

// genUsage and genExample are gen's --help.
var (
	genUsage   = "convbatch gen -o FILE [--conversations N | --bytes SIZE] [--seed S] [--faults RATE] [--tamper RATE] [--dates night|spread] [--profile short]\n  convbatch gen -o DIR --nights N [--files-per-night F] --conversations N [--seed S] [--faults RATE] [--tamper RATE] [--dates night|spread] [--profile receipts]"
	genExample = joinLines(
		"  convbatch gen -o sample.jsonl.zst --conversations 200 --seed 1",
		"  convbatch gen -o big.jsonl.zst --bytes 1GiB",
		"  convbatch gen -o faulty.jsonl --conversations 1000 --faults 0.05 --max-doc-bytes 1MiB   # dates spread over years",
		"  convbatch gen -o years.jsonl.zst --conversations 2000 --dates spread   # years of dates, no faults",
		"  convbatch gen -o audit.jsonl.zst --conversations 2000 --tamper 0.2   # then: convbatch verify --keys audit.jsonl.zst.keys.json audit.jsonl.zst",
		"  convbatch gen -o tiny.jsonl --conversations 3000000 --profile short   # tiny documents, a few receipts",
		"  convbatch gen -o nights --nights 3 --files-per-night 2 --conversations 200   # nights/night-1/a.jsonl.zst ..., keys.json, expect.json",
		"  convbatch gen -o audit-nights --nights 30 --profile receipts --conversations 16670   # 1,000,020 receipts, keys.json, rotated.keys.json",
	)
)

func genCommand() *command {
	var (
		out    string
		convs  int
		size   string
		seed   uint64
		faults float64
		tamper float64
		noRcpt bool
		maxDoc string
		prog   string
		prof   string
		nights int
		perN   int
		dates  string
	)
	return &command{
		name:    "gen",
		summary: "write a deterministic synthetic archive and FILE.expect.json with the counts a correct run reports",
		usage:   genUsage,
		example: genExample,
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.StringVarP(&out, "out", "o", "", "archive to write: .jsonl or .jsonl.zst (required)")
			fs.IntVar(&convs, "conversations", 0, "number of conversations to write")
			fs.StringVar(&size, "bytes", "", "or: write until the uncompressed archive reaches SIZE (e.g. 1GiB)")
			fs.Uint64Var(&seed, "seed", 1, "random seed; the same seed gives the same bytes")
			fs.Float64Var(&faults, "faults", 0, "share of lines (0 to 1) that are faults: every reject reason, CRLF, blank lines, a BOM; dates spread unless --dates night")
			fs.Float64Var(&tamper, "tamper", 0, "share of receipts (0 to 1) broken in one of the ways docs/FORMAT.md lists")
			fs.BoolVar(&noRcpt, "no-receipts", false, "write no consensus receipts (and no FILE.keys.json)")
			fs.StringVar(&maxDoc, "max-doc-bytes", "64MiB", "the cap the archive will be run with; too-large faults need 4MiB or less")
			fs.StringVar(&dates, "dates", "", "times of documents, messages and receipts: night (default: a night's export dated 2026-11-29, night N of --nights N-1 days later, from the evening before to past midnight, in order, spelled 2026-11-29T14:03:27.123Z; 98 in 100 documents dated) or spread (default with --faults: years 2023-2026 in every RFC 3339 spelling, 3 in 10 documents undated)")
			fs.StringVar(&prof, "profile", "default", "default: realistic conversations (~24 KB); short: one or two short messages a document (~65-270 bytes), a few valid receipts, no faults; needs --conversations; receipts (with --nights only): every document a signed receipt (quorum 2 of 3, 1 in 10 ML-DSA-65), dated from 2026-10-01, and DIR/rotated.keys.json, a format 2 keyring of the same keys with one revoked and one expired mid-way")
			fs.IntVar(&nights, "nights", 0, "write a set of files over N nights into the directory -o: night-N/a.jsonl.zst ..., whose receipts also reference documents of other files and nights; keys.json and expect.json (the expectations of one run over nights 1..k), which a run over the directory skips as sidecars")
			fs.IntVar(&perN, "files-per-night", 2, "with --nights: files a night (1 to 26), each of --conversations documents")
			fs.StringVar(&prog, "progress", "auto", "progress line on stderr: auto (redrawn in place when stderr is a terminal), always (elsewhere a line every 10s), never")
			return func(e *env, args []string) (int, error) {
				if out == "" {
					return 0, usageErr("gen: -o/--out is required (see 'convbatch help gen')")
				}
				if len(args) > 0 {
					return 0, usageErr("gen: unexpected arguments %q", args)
				}
				if fs.Changed("dates") && gen.Dates(dates) != gen.DatesNight && gen.Dates(dates) != gen.DatesSpread {
					return 0, usageErr("gen: --dates %q: want night or spread", dates)
				}
				if fs.Changed("nights") || fs.Changed("files-per-night") {
					return genNights(e, fs, out, gen.NightsOptions{
						Nights: nights, FilesPerNight: perN, Conversations: convs, Seed: seed, Faults: faults, Tamper: tamper,
						Dates: gen.Dates(dates),
					}, maxDoc)
				}
				if !strings.HasSuffix(out, ".jsonl") && !strings.HasSuffix(out, ".jsonl.zst") {
					return 0, usageErr("gen: -o %q: the name must end in .jsonl or .jsonl.zst", out)
				}
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					return 0, fatalErr(err)
				}
				opts := gen.Options{Conversations: convs, Seed: seed, Faults: faults, Tamper: tamper, NoReceipts: noRcpt, Profile: gen.Profile(prof), Dates: gen.Dates(dates)}
				convsSet, bytesSet := fs.Changed("conversations"), fs.Changed("bytes")
				if convsSet && bytesSet {
					return 0, usageErr("gen: give --conversations N or --bytes SIZE, not both")
				}
				switch opts.Profile {
				case gen.ProfileDefault:
				case gen.ProfileShort:
					if bytesSet || faults > 0 || tamper > 0 {
						return 0, usageErr("gen: --profile short takes --conversations N, and no --bytes, --faults or --tamper")
					}
				default:
					return 0, usageErr("gen: --profile %q: want default or short", prof)
				}
				if !convsSet && !bytesSet {
					return 0, usageErr("gen: say how much to write: --conversations N or --bytes SIZE")
				}
				if convsSet && convs < 1 {
					return 0, usageErr("gen: --conversations %d: want at least 1", convs)
				}
				if bytesSet {
					n, err := parseSize("gen: --bytes", size, 1, math.MaxInt64, "a size of at least 1 byte, such as 64MiB")
					if err != nil {
						return 0, err
					}
					opts.Bytes = n
				}
				if err := checkShares(faults, tamper); err != nil {
					return 0, err
				}
				md, err := parseSize("gen: --max-doc-bytes", maxDoc, gen.MinMaxDocBytes, 1<<31-1,
					"a size from 16KiB to 2147483647 bytes (under 2GiB); too-large faults need 4MiB or less")
				if err != nil {
					return 0, err
				}
				opts.MaxDocBytes = md
				switch prog {
				case "auto", "always", "never":
				default:
					return 0, usageErr("gen: --progress %q: want auto, always or never", prog)
				}
				opts.Progress = &gen.Progress{}
				m := newMeter(e.stderr, prog, genFields(opts.Progress, opts))
				m.start()
				exp, err := gen.WriteFile(out, opts)
				m.stop()
				if err != nil {
					return 0, fatalErr(err)
				}
				r := exp.Receipts
				fmt.Fprintf(e.stderr, "convbatch gen: %s (%s, %s, %d blank, %s), %s uncompressed, %s; wrote %s, %s.expect.json",
					plural(exp.Lines, "line", "lines"), plural(exp.Documents, "document", "documents"), plural(exp.Rejects, "reject", "rejects"),
					exp.Blank, plural(r.Valid+r.Invalid+r.Incomplete, "receipt", "receipts"), bytesize.Format(exp.BytesIn), datesText(exp.Dates, exp.Day), out, out)
				if !noRcpt {
					fmt.Fprintf(e.stderr, " and %s.keys.json", out)
				}
				fmt.Fprintln(e.stderr)
				return ExitOK, nil
			}
		},
	}
}

// checkShares refuses a --faults or --tamper outside 0 to 1.
func checkShares(faults, tamper float64) error {
	for _, r := range []struct {
		flag, of string
		v        float64
	}{{"--faults", "lines", faults}, {"--tamper", "receipts", tamper}} {
		if !(r.v >= 0 && r.v <= 1) {
			return usageErr("gen: %s %v: want a share from 0 to 1, such as 0.05 for 5%% of the %s", r.flag, r.v, r.of)
		}
	}
	return nil
}

// genFields returns the progress fields of gen writing opts: the share of
// the documents or bytes asked for, the uncompressed bytes and documents
// generated, the rate and the time left.
func genFields(p *gen.Progress, opts gen.Options) func(time.Duration) []field {
	return func(elapsed time.Duration) []field {
		docs, n := p.Documents.Load(), p.Bytes.Load()
		frac := float64(n) / float64(max(opts.Bytes, 1))
		if opts.Conversations > 0 {
			frac = float64(docs) / float64(opts.Conversations)
		}
		return []field{
			{percent(frac), 0},
			{bytesize.Format(n) + " written", 2},
			{plural(docs, "document", "documents"), 1},
			{rate(n, elapsed), 3},
			{timeLeft(frac, elapsed), 0},
		}
	}
}

// genNights is gen --nights: a set of files in the directory out.
func genNights(e *env, fs *pflag.FlagSet, out string, opts gen.NightsOptions, maxDoc string) (int, error) {
	if !fs.Changed("nights") {
		return 0, usageErr("gen: --files-per-night needs --nights N")
	}
	for _, f := range []string{"bytes", "no-receipts"} {
		if fs.Changed(f) {
			return 0, usageErr("gen: --nights writes files with receipts, of --conversations N each: no --%s", f)
		}
	}
	if fs.Changed("profile") {
		prof, _ := fs.GetString("profile")
		switch gen.Profile(prof) {
		case gen.ProfileDefault:
		case gen.ProfileReceipts:
			if opts.Faults > 0 || opts.Tamper > 0 {
				return 0, usageErr("gen: --profile receipts writes no --faults and no --tamper")
			}
			opts.Profile = gen.ProfileReceipts
		default:
			return 0, usageErr("gen: --nights --profile %q: want default or receipts", prof)
		}
	}
	switch {
	case opts.Nights < 1:
		return 0, usageErr("gen: --nights %d: want at least 1", opts.Nights)
	case opts.FilesPerNight < 1 || opts.FilesPerNight > 26:
		return 0, usageErr("gen: --files-per-night %d: want 1 to 26", opts.FilesPerNight)
	case opts.Nights*opts.FilesPerNight < 2:
		return 0, usageErr("gen: --nights 1 --files-per-night 1 is one file: want at least two")
	case opts.Conversations < gen.MinNightsConversations:
		return 0, usageErr("gen: --nights needs --conversations N with N at least %d (documents a file)", gen.MinNightsConversations)
	}
	for _, r := range []struct {
		flag, of string
		v        float64
	}{{"--faults", "lines", opts.Faults}, {"--tamper", "receipts", opts.Tamper}} {
		if !(r.v >= 0 && r.v <= 1) {
			return 0, usageErr("gen: %s %v: want a share from 0 to 1, such as 0.05 for 5%% of the %s", r.flag, r.v, r.of)
		}
	}
	md, err := parseSize("gen: --max-doc-bytes", maxDoc, gen.MinMaxDocBytes, 1<<31-1,
		"a size from 16KiB to 2147483647 bytes (under 2GiB); too-large faults need 4MiB or less")
	if err != nil {
		return 0, err
	}
	opts.MaxDocBytes = md
	ne, err := gen.WriteNights(out, opts)
	if err != nil {
		return 0, fatalErr(err)
	}
	a := ne.All
	r := a.Receipts
	dated := datesText(ne.Dates, "")
	if ne.Dates == gen.DatesNight {
		first, last := ne.Files[0].Day, ne.Files[len(ne.Files)-1].Day
		dated = "dated around " + first
		if last != first {
			dated += " to " + last
		}
	}
	keys := "keys.json"
	if opts.Profile == gen.ProfileReceipts {
		keys = "keys.json, " + gen.RotatedKeysName
	}
	fmt.Fprintf(e.stderr, "convbatch gen: %d files over %s (%s, %s, %d cross-file), %s uncompressed, %s; wrote %s/night-*/, %s and expect.json\n",
		len(ne.Files), plural(int64(ne.Nights), "night", "nights"), plural(a.Documents, "document", "documents"),
		plural(r.Valid+r.Invalid+r.Incomplete, "receipt", "receipts"), len(ne.CrossFile), bytesize.Format(a.BytesIn), dated, out, keys)
	return ExitOK, nil
}

// datesText says in gen's summary how an archive is dated: "dated around DAY"
// for a night's archive, "dates spread over years" for the spread.
func datesText(d gen.Dates, day string) string {
	if d == gen.DatesNight {
		return "dated around " + day
	}
	return "dates spread over years"
}
