package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/bytesize"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
)

// checkCommand is `convbatch check OUT`: every published file against the
// size and SHA-256 its run's manifest records.
func checkCommand() *command {
	var quiet bool
	var kept []string
	var vkey string
	return &command{
		name:    "check",
		summary: "verify every file OUT publishes against its run's manifest (size and SHA-256); writes nothing",
		usage:   "convbatch check [--checkpoint KEPT]... [--checkpoint-vkey KEY] OUT",
		example: joinLines(
			"  convbatch check /data/out && echo intact",
			"",
			"Every committed run leaves a manifest (OUT/.convbatch/state/manifests/): the",
			"files it published with their sizes and SHA-256. check reads every file the",
			"manifests name and lists each one missing, resized, or with other bytes,",
			"and each file in archive/, tables/, rejects/, receipts/, reports/ or the",
			"state that no run published; it exits 0 when there is none, 1 when there",
			"is, 2 when OUT is not a run's output directory or a run is writing it.",
			"What to do about each case: docs/FORMAT.md, \"The record of OUT\".",
			"",
			"It also recomputes OUT's history (a Merkle tree whose leaf i is the",
			"manifest of run i+1) and compares it with the tree and checkpoint OUT",
			"stores (history-mismatch). With --checkpoint KEPT (a checkpoint that",
			"`convbatch checkpoint OUT` printed and you kept elsewhere, or a directory",
			"of them) it proves OUT's history extends each (a consistency proof), or",
			"names the first run that differs: exit 1. Keep one every night:",
			"  convbatch checkpoint /data/out > ~/kept/$(date +%F).checkpoint",
			"  convbatch check --checkpoint ~/kept/ /data/out",
			"docs/FORMAT.md, \"The history of OUT\".",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.BoolVarP(&quiet, "quiet", "q", false, "print only the problems, no summary")
			fs.StringArrayVar(&kept, "checkpoint", nil, "prove OUT's history extends this kept checkpoint FILE (or every file of a directory); may be repeated")
			fs.StringVar(&vkey, "checkpoint-vkey", "", "check the checkpoints' signatures (OUT's and the kept ones) with this note verifier KEY (or a file holding it), as convbatch checkpoint --new-key printed it")
			return func(e *env, args []string) (int, error) {
				if len(args) != 1 {
					return 0, usageErr("check: want exactly one OUT directory (the -o of convbatch run), got %s (see 'convbatch check --help')", plural(int64(len(args)), "argument", "arguments"))
				}
				keptNotes, err := readKept(kept)
				if err != nil {
					return 0, err
				}
				if vkey != "" {
					vkey = readVerifierKey(vkey)
				}
				if objout.IsURL(args[0]) {
					return checkObject(e, args[0], quiet, keptNotes, vkey)
				}
				if err := checkReportDir(args[0]); err != nil {
					return 0, err
				}
				rec, problems, err := outdir.Verify(args[0])
				if errors.Is(err, outdir.ErrNoRecord) || errors.Is(err, outdir.ErrBusy) {
					return 0, usageErr("check: %v", err)
				}
				if err != nil {
					return 0, fatalErr(fmt.Errorf("check: %w", err))
				}
				pending := len(problems) > 0 && problems[0].Kind == outdir.ProblemPending
				var proven string
				if rec.LastRun > 0 && !pending {
					var hp []outdir.Problem
					hp, proven = checkHistory(args[0], rec, keptNotes, vkey)
					problems = append(problems, hp...)
				}
				for _, p := range problems {
					fmt.Fprintf(e.stdout, "%s\n", escapeControls(p.String()))
				}
				if proven != "" && !quiet {
					fmt.Fprintf(e.stderr, "convbatch check: %s\n", proven)
				}
				if !quiet {
					var bytes int64
					for _, f := range rec.Files {
						bytes += f.Size
					}
					fmt.Fprintf(e.stderr, "convbatch check: %s of %d run(s) checked (%s): %s\n",
						plural(int64(len(rec.Files)), "file", "files"), rec.LastRun, bytesize.Format(bytes), plural(int64(len(problems)), "problem", "problems"))
				}
				if len(problems) > 0 {
					return ExitFindings, nil
				}
				return ExitOK, nil
			}
		},
	}
}

// checkHistory checks the history of the OUT at root, whose record is
// rec (history-mismatch), and that it extends every kept checkpoint
// (not-extended); proven says so when it does.
func checkHistory(root string, rec *outdir.Record, keptNotes [][]byte, vkey string) (problems []outdir.Problem, proven string) {
	h, problems := outdir.ReadHistory(root, rec, vkey)
	if len(keptNotes) > 0 {
		proofs, err := h.Extends(keptNotes, vkey)
		if err != nil {
			problems = append(problems, outdir.Problem{Path: "--checkpoint", Kind: "not-extended", Detail: err.Error()})
		} else {
			r, _ := h.Tree.Root(h.Tree.N)
			proven = fmt.Sprintf("OUT's history (%d runs, root %s) extends %s (consistency proofs checked)", h.Tree.N, r, plural(int64(len(proofs)), "kept checkpoint", "kept checkpoints"))
		}
	}
	return problems, proven
}

// readKept reads the kept checkpoints --checkpoint names: each a file, or
// a directory whose regular files each hold one (in name order; an empty
// one, the first night of a cron job, holds none).
func readKept(args []string) ([][]byte, error) {
	var out [][]byte
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, usageErr("check: --checkpoint: %v", err)
		}
		files := []string{a}
		if st.IsDir() {
			entries, err := os.ReadDir(a)
			if err != nil {
				return nil, usageErr("check: --checkpoint: %v", err)
			}
			files = files[:0]
			for _, en := range entries {
				if en.Type().IsRegular() {
					files = append(files, filepath.Join(a, en.Name()))
				}
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, usageErr("check: --checkpoint: %v", err)
			}
			out = append(out, b)
		}
	}
	return out, nil
}
