package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/audit"
	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/pipeline"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/verify"
)

// auditCommand is `convbatch audit OUT --keys KEYRING`: re-judge every
// receipt OUT holds under a keyring from OUT's record, without reading
// the archives, and commit the verdicts that changed as a new run.
func auditCommand() *command {
	var keys keysFlag
	var since, format, warnExpiry, maxKeyring string
	var quiet, asJSON bool
	var findingsExit, inputTries int
	var inputStall time.Duration
	var checkpointKey, cpuProfile, scratchDir, catalog, catalogNamespace string
	return &command{
		name:    "audit",
		summary: "re-judge every receipt OUT holds under a keyring, without reading the archives; commit the verdicts that changed",
		usage:   "convbatch audit OUT --keys KEYRING [--since RUN|DATE] [--format table|json|html] [--warn-expiry DURATION] [--catalog URI]\n       convbatch audit prove [--json] [--line] OUT RECEIPT",
		checks: joinLines(
			"  OUT's record first, as an incremental run does (every recorded file at its",
			"  size; report.json, the state and every run's receipts state at their",
			"  SHA-256), then every receipt's keys under KEYRING, witnessed when OUT",
			"  first committed it (docs/FORMAT.md, \"Auditing OUT\").",
		),
		example: joinLines(
			"  convbatch audit /data/out --keys keyring-2026-12.json",
			"  convbatch audit /data/out --keys k.json --since 2026-11-20 --format html > audit.html",
			"  convbatch audit /data/out --keys k.json --warn-expiry 30d --json | jq .changes",
			"",
			"Each receipt's new verdict is its latest verdict's reasons less those a",
			"keyring decides (envelope-key-not-pinned, statement-key-not-pinned,",
			"key-not-yet-valid, key-expired, key-revoked, signed-at-future), plus what",
			"KEYRING decides of its keys, from the facts OUT recorded (fingerprints,",
			"which signatures verify, signed_at): the verdict a full run with --keys",
			"KEYRING gives, but for the witness rule (a revoked key's statement signed",
			"before compromised_since holds when OUT committed it before then too).",
			"The verdicts that changed are committed as a new run (receipts table",
			"rows with reresolves_run, state lines, report.json's cumulative counts;",
			"one snapshot per Iceberg table), whose manifest records the command and",
			"the keyring's digest; nothing is committed when none changed. The report",
			"(stdout) counts receipts by verdict, reason, signer key, agent and night,",
			"lists every verdict that changed with its cause, the keys that expire",
			"within --warn-expiry and the quorum margin. Exit 1 (--findings-exit-code)",
			"when a verdict changed or a key expires within --warn-expiry.",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.Var(&keys, "keys", "the keyring to judge every receipt under (required; docs/FORMAT.md, \"Keyring\")")
			fs.StringVar(&maxKeyring, "max-keyring-bytes", bytesize.Format(verify.DefaultMaxKeyringBytes), "refuse a keyring larger than this (e.g. 64MiB)")
			fs.IntVar(&inputTries, "input-tries", source.DefaultTries, "--keys given by URL: tries of each request in a row without a byte of progress before a transient failure (5xx, 429, a reset, a stall) is given up; the waits between tries double from 200ms to at most 10s (as for convbatch run)")
			fs.DurationVar(&inputStall, "input-stall-timeout", source.DefaultStallTimeout, "--keys given by URL: how long a request may go without a byte before it is abandoned and tried again")
			fs.StringVar(&since, "since", "", "re-judge only the receipts first committed by run RUN or later, or at or after DATE (YYYY-MM-DD or RFC 3339, UTC)")
			fs.StringVar(&format, "format", "table", "report format on stdout: table, json or html")
			fs.StringVar(&warnExpiry, "warn-expiry", "", "list the keys (and the keyring) whose validity ends within DURATION (30d, 72h)")
			fs.BoolVarP(&quiet, "quiet", "q", false, "no summary line on stderr (the report is still printed); errors are")
			fs.BoolVar(&asJSON, "json", false, "print the report as one JSON object on stdout, with the summary (same as --format json)")
			registerCheckpointKey(fs, &checkpointKey)
			fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the audit to this file")
			fs.StringVar(&scratchDir, "scratch-dir", "", "with an s3:// or gs:// OUT: the local directory under which the audit works (docs/FORMAT.md, \"OUT on object storage\"); default the system's temporary directory")
			fs.StringVar(&catalog, "catalog", "", "the Iceberg SQL catalog OUT's tables are committed to (the --catalog of its runs): the audit's snapshot of each table is committed there too; required for such an OUT")
			fs.StringVar(&catalogNamespace, "catalog-namespace", icebergout.DefaultNamespace, "with --catalog: the catalog namespace of the tables (the --catalog-namespace of its runs)")
			fs.IntVar(&findingsExit, "findings-exit-code", ExitFindings, "exit code when a verdict changed or a key expires within --warn-expiry, 0 to 255; usage (2) and fatal (3) errors keep theirs")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 {
					return 0, usageErr("audit: want exactly one OUT directory (the -o of convbatch run), got %s (see 'convbatch audit --help')", plural(int64(len(args)), "argument", "arguments"))
				}
				if findingsExit < 0 || findingsExit > 255 {
					return 0, usageErr("audit: --findings-exit-code %d: want an exit code from 0 to 255", findingsExit)
				}
				if asJSON {
					if fs.Changed("format") && format != "json" {
						return 0, usageErr("audit: --json prints JSON; --format %s asks for another format", format)
					}
					format = "json"
				}
				switch format {
				case "table", "json", "html":
				default:
					return 0, usageErr("audit: --format %q: want table, json or html", format)
				}
				var warn time.Duration
				if warnExpiry != "" {
					var err error
					if warn, err = parseAge(warnExpiry); err != nil {
						return 0, usageErr("audit: --warn-expiry: %v", err)
					}
				}
				maxBytes, err := bytesize.Parse(maxKeyring)
				if err != nil || maxBytes < 1 {
					return 0, usageErr("audit: --max-keyring-bytes %q: want a size above 0 (e.g. 64MiB)", maxKeyring)
				}
				kp, err := keys.path()
				if err != nil {
					return 0, err
				}
				if kp == "" {
					return 0, usageErr("audit: --keys KEYRING is required: the keyring to judge the receipts under")
				}
				skey, err := readCheckpointKey(checkpointKey)
				if err != nil {
					return 0, err
				}
				keysClient, err := inputClient(e, inputTries, inputStall)
				if err != nil {
					return 0, err
				}
				o := auditOptions{keysClient: keysClient, out: args[0], keyring: kp, checkpointKey: skey, since: since, format: format, warnExpiry: warnExpiry, warn: warn,
					quiet: quiet, asJSON: asJSON, findingsExit: findingsExit, maxKeyring: maxBytes, scratchDir: scratchDir,
					catalog: catalog, catalogNamespace: catalogNamespace}
				if cpuProfile != "" {
					pf, err := os.Create(cpuProfile)
					if err != nil {
						return 0, usageErr("audit: --cpuprofile: %v", err)
					}
					defer pf.Close()
					if err := pprof.StartCPUProfile(pf); err != nil {
						return 0, fatalErr(fmt.Errorf("audit: cpu profile: %w", err))
					}
					defer pprof.StopCPUProfile()
				}
				return runAudit(e, o)
			}
		},
	}
}

// auditOptions are audit's arguments, checked.
type auditOptions struct {
	out, keyring, since, format, warnExpiry string
	// checkpointKey is the --checkpoint-key file's signer key, "" without.
	checkpointKey string
	warn          time.Duration
	quiet, asJSON bool
	findingsExit  int
	maxKeyring    int64
	// keysClient reads a --keys given by URL (--input-tries,
	// --input-stall-timeout); nil is source.Default().
	keysClient *source.Client
	// scratchDir is --scratch-dir, for an OUT on object storage.
	scratchDir string
	// catalog and catalogNamespace are --catalog and --catalog-namespace.
	catalog, catalogNamespace string
}

// runAudit reads the keyring, opens OUT, audits, commits the changed
// verdicts and prints the report.
// auditMemoryLimit is the Go runtime's soft memory limit during an audit
// (runtime/debug.SetMemoryLimit).
const auditMemoryLimit = 192 << 20

func runAudit(e *env, o auditOptions) (int, error) {
	started := time.Now()
	// The audit's live heap is its changes (about 220 bytes each) and
	// one batch of the commit; GOGC alone lets the heap grow to twice
	// that with the parsing's garbage. A soft limit keeps the process
	// within 256 MiB at a million receipts and half of them changed
	// (issue 43 item 5). GOMEMLIMIT, when set, stands.
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(auditMemoryLimit))
	}
	// The keyring is read, and refused, before OUT is opened: a bad
	// keyring changes nothing under OUT.
	keysClient := o.keysClient
	if keysClient == nil {
		keysClient = source.Default()
	}
	kr, err := loadKeyring(e.ctx, keysClient, o.keyring, o.maxKeyring)
	if err != nil {
		return 0, keyringErr(e, keyringName(o.keyring), err)
	}
	cat, closeCat, err := openCatalog(e, "audit", o.catalog, o.catalogNamespace)
	if err != nil {
		return 0, err
	}
	defer closeCat()
	root, sess, place, err := auditRoot(e, o, cat)
	if err != nil {
		return 0, err
	}
	if sess != nil {
		defer sess.Close()
		if cat != nil {
			// Committed to the catalog when the audit's run is, by
			// Publish.
			cat = sess.DeferCatalog(cat)
		}
	} else if err := catalogMatches("audit", o.out, o.catalog, outdir.CatalogTables(root)); err != nil {
		return 0, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return 0, fatalErr(fmt.Errorf("audit: %w", err))
	}
	warnEmptyKeyring(e.stderr, keyringName(o.keyring), kr)
	digest := kr.Digest()
	opts := audit.Options{Keyring: kr, SinceMicros: audit.NoSince, WarnExpiry: o.warn, Now: started}
	if o.since != "" {
		if n, err := strconv.Atoi(o.since); err == nil {
			if n < 1 {
				return 0, usageErr("audit: --since %s: want a run number from 1, or a date", o.since)
			}
			opts.SinceRun = n
		} else if t, err := parseSince(o.since); err == nil {
			opts.SinceMicros = t.UnixMicro()
		} else {
			return 0, usageErr("audit: --since %q: want a run number or a date (YYYY-MM-DD or RFC 3339, UTC)", o.since)
		}
	}
	r, err := outdir.OpenAudit(root, outdir.AuditOptions{KeyringSHA256: digest, Tables: pipeline.TableWork,
		CheckpointKey: o.checkpointKey, IcebergPlace: place, Catalog: cat})
	if err != nil {
		if errors.Is(err, outdir.ErrBusy) || errors.Is(err, outdir.ErrRefused) || errors.Is(err, outdir.ErrSettingsChanged) {
			return 0, usageErr("audit: %v", err)
		}
		return 0, fatalErr(fmt.Errorf("audit: %w", err))
	}
	defer r.Close()
	if opts.SinceRun > r.LastRun() {
		return 0, usageErr("audit: --since %d: OUT holds runs 1 to %d", opts.SinceRun, r.LastRun())
	}
	// The audit's commit time: its manifest's committed_at, and the
	// witness of a receipt whose first run's is unknown.
	opts.WitnessMicros = r.FixCommittedAt(started).UnixMicro()
	res, err := audit.Run(r, opts)
	if err != nil {
		if errors.Is(err, outdir.ErrRefused) {
			return 0, usageErr("%v", err)
		}
		return 0, fatalErr(err)
	}
	res.Seconds = time.Since(started).Seconds()
	h := &audit.Header{Out: o.out, Keyring: keyringName(o.keyring), KeyringSHA256: digest, KeyringFormat: kr.Format(), Since: o.since, WarnExpiry: o.warnExpiry}
	run, err := audit.Commit(r, res, audit.Settings{Command: "audit", Since: o.since, Keyring: digest}, started)
	switch {
	case errors.Is(err, outdir.ErrNothingToAudit):
	case errors.Is(err, outdir.ErrRefused):
		return 0, usageErr("audit: %v", err)
	case errors.Is(err, outdir.ErrCommitPending):
		return 0, fatalErr(fmt.Errorf("audit: %w; the next convbatch run, extract, maintain or audit into %s finishes the commit first (convbatch check says commit-pending until then)", err, o.out))
	case err != nil:
		return 0, fatalErr(fmt.Errorf("audit: %w", err))
	}
	h.CommittedRun = run
	if sess != nil {
		// Also when this audit committed nothing: an earlier audit's
		// run that was committed in the scratch OUT but not uploaded.
		if err := publishAudit(e, o, sess); err != nil {
			return 0, err
		}
	}
	findings := len(res.Changes) > 0 || len(res.Expiring) > 0
	code := ExitOK
	if findings {
		code = o.findingsExit
	}
	if err := writeAudit(e.stdout, o, h, res, findings, code); err != nil {
		return 0, fatalErr(fmt.Errorf("audit: %w", err))
	}
	if !o.quiet {
		printAuditSummary(e.stderr, o, h, res)
	}
	return code, nil
}

// auditRoot returns the directory the audit of o.out works in: o.out,
// or for an OUT on object storage the scratch OUT of its newest commit
// (sess, to publish the audit's run; place locates its Iceberg tables'
// objects), prepared with the tables of receipts downloaded when they
// are Iceberg tables (the audit rewrites their parts).
func auditRoot(e *env, o auditOptions, cat icebergout.Catalog) (root string, sess *objout.Session, place icebergout.Place, err error) {
	if !objout.IsURL(o.out) {
		if st, err := os.Stat(o.out); err != nil || !st.IsDir() {
			return "", nil, place, usageErr("audit: %s: not a directory; pass the -o directory of convbatch run or extract", o.out)
		}
		return o.out, nil, place, nil
	}
	t, err := openObjectOut(e, o.out)
	if err != nil {
		return "", nil, place, err
	}
	var fetch []string
	if c, err := t.Latest(e.ctx); err != nil {
		return "", nil, place, fatalErr(fmt.Errorf("audit: %w; nothing was published", err))
	} else if c != nil && c.HoldsIceberg() {
		for _, n := range tabledef.Names {
			if tabledef.FromReceipts(n) {
				fetch = append(fetch, n)
			}
		}
	}
	if cat != nil {
		// The tables' metadata names the objects' keys; the catalog
		// reads it in the bucket through the same store.
		objout.RegisterIO(t)
	}
	if sess, err = t.Prepare(e.ctx, objout.Options{ScratchRoot: o.scratchDir, FetchTables: fetch, Catalog: cat}); err != nil {
		return "", nil, place, fatalErr(fmt.Errorf("audit: preparing the scratch OUT of %s: %w; nothing was published", t.URL, err))
	}
	if b := sess.Base(); b == nil {
		sess.Close()
		return "", nil, place, usageErr("audit: %s holds no commit (%s): not the -o of a convbatch run", t.URL, objout.CommitsDir)
	} else {
		var tables []string
		for _, cc := range b.Catalog {
			tables = append(tables, cc.Table)
		}
		if err := catalogMatches("audit", o.out, o.catalog, tables); err != nil {
			sess.Close()
			return "", nil, place, err
		}
	}
	return sess.Out, sess, icebergout.Place{Locate: sess.Locator(), IO: t.IO()}, nil
}

// publishAudit uploads and commits the audit's run from the scratch OUT
// of an OUT on object storage.
func publishAudit(e *env, o auditOptions, sess *objout.Session) error {
	c, err := sess.Publish(e.ctx)
	var ce *objout.ConflictError
	switch {
	case errors.As(err, &ce):
		return fatalErr(fmt.Errorf("audit: %w", err))
	case err != nil:
		return fatalErr(fmt.Errorf("audit: %w; nothing was committed to %s (the audit's run is kept in %s: run the same audit again to publish it)", err, o.out, sess.Out))
	}
	if c != nil && !o.quiet {
		fmt.Fprintf(e.stderr, "convbatch audit: committed %s/%s%010d.json: run %d, %d files\n", o.out, objout.CommitsDir, c.Number, c.Run, len(c.Files))
	}
	return nil
}

// writeAudit prints the report in its format on w.
func writeAudit(w io.Writer, o auditOptions, h *audit.Header, res *audit.Result, findings bool, code int) error {
	switch o.format {
	case "json":
		return audit.WriteJSON(w, h, res, map[string]any{"summary": map[string]any{
			"command": "audit", "run": h.CommittedRun, "rejudged": res.Rejudged, "changed": len(res.Changes),
			"not_rejudged": res.NotRejudged, "findings": findings, "exit_code": code}})
	case "html":
		return audit.WriteHTML(w, h, res)
	}
	return audit.WriteTable(w, h, res)
}

// printAuditSummary writes the one-line summary on w.
func printAuditSummary(w io.Writer, o auditOptions, h *audit.Header, res *audit.Result) {
	rate := ""
	if res.Seconds > 0 {
		rate = fmt.Sprintf(", %.0f receipts/s", float64(res.Rejudged+res.NotRejudged+res.OutsideSince)/res.Seconds)
	}
	fmt.Fprintf(w, "convbatch audit: %s re-judged in %.2f s%s; %s changed", plural(res.Rejudged, "receipt", "receipts"), res.Seconds, rate, plural(int64(len(res.Changes)), "verdict", "verdicts"))
	if res.NotRejudged > 0 {
		fmt.Fprintf(w, "; %d not re-judged (written by a convbatch before issue 43)", res.NotRejudged)
	}
	if h.CommittedRun > 0 {
		fmt.Fprintf(w, "; committed as run %d of %s", h.CommittedRun, o.out)
	} else {
		fmt.Fprint(w, "; nothing committed")
	}
	fmt.Fprintln(w)
	if len(res.Expiring) > 0 {
		var names []string
		for _, x := range res.Expiring {
			names = append(names, strings.TrimSpace(x.What+" "+x.KeyID)+" at "+x.At)
		}
		fmt.Fprintf(w, "convbatch audit: expiring within %s: %s\n", o.warnExpiry, strings.Join(names, ", "))
	}
}

// parseSince parses --since's date: YYYY-MM-DD (its midnight, UTC) or
// RFC 3339.
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
