package cli

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/convbatch/convbatch/ledger"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/outdir"
)

// registerCheckpointKey adds --checkpoint-key, for the commands that
// commit into OUT (run, extract, maintain, audit).
func registerCheckpointKey(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "checkpoint-key", "", "sign the checkpoint of OUT's history with this note signer key FILE (convbatch checkpoint --new-key writes one); without it the checkpoint is unsigned")
}

// readCheckpointKey reads and checks the signer key file named by
// --checkpoint-key; "" without one.
func readCheckpointKey(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usageErr("--checkpoint-key: %v", err)
	}
	skey := strings.TrimSpace(string(b))
	if err := ledger.CheckSigner(skey); err != nil {
		return "", usageErr("--checkpoint-key %s: %v", file, err)
	}
	return skey, nil
}

// readVerifierKey returns --checkpoint-vkey's key: the flag's value, or
// the contents of the file it names.
func readVerifierKey(v string) string {
	if b, err := os.ReadFile(v); err == nil {
		return strings.TrimSpace(string(b))
	}
	return strings.TrimSpace(v)
}

// checkpointCommand is `convbatch checkpoint OUT`: the latest checkpoint
// of OUT's history, for the user to keep elsewhere; and
// `convbatch checkpoint --new-key NAME --key-out FILE`: a signer key.
func checkpointCommand() *command {
	var newKey, keyOut string
	return &command{
		name:    "checkpoint",
		summary: "print the latest checkpoint of OUT's history (tree size and root) to keep elsewhere, or make a key to sign checkpoints",
		usage:   "convbatch checkpoint OUT | convbatch checkpoint --new-key NAME --key-out FILE",
		example: joinLines(
			"  convbatch checkpoint /data/out >> ~/kept/out-$(date +%F).checkpoint",
			"  convbatch check --checkpoint ~/kept/ /data/out",
			"  convbatch checkpoint --new-key auditor --key-out ~/.convbatch-auditor.key > auditor.vkey",
			"",
			"Every commit into OUT appends its run's manifest to OUT's history, a Merkle",
			"tree, and writes a checkpoint: the tree's origin, size and root hash,",
			"signed with --checkpoint-key when run, extract or maintain had one.",
			"checkpoint prints it (after checking it against OUT's manifests) on",
			"stdout: exit 0; 1 when it is not what the manifests hash to; 2 when OUT",
			"has no history. --new-key writes a note signer key to FILE (mode 0600,",
			"never over an existing file) and prints its verifier key on stdout, for",
			"check --checkpoint-vkey. docs/FORMAT.md, \"The history of OUT\".",
		),
		flags: func(fs *pflag.FlagSet) func(*env, []string) (int, error) {
			fs.StringVar(&newKey, "new-key", "", "make a new signer key named NAME (letters, digits, . - _ +) instead of printing a checkpoint")
			fs.StringVar(&keyOut, "key-out", "", "with --new-key: the file to write the signer key to (must not exist)")
			return func(e *env, args []string) (int, error) {
				if newKey != "" || keyOut != "" {
					if newKey == "" || keyOut == "" || len(args) > 0 {
						return 0, usageErr("checkpoint: --new-key NAME and --key-out FILE go together, with no OUT (see 'convbatch checkpoint --help')")
					}
					skey, vkey, err := ledger.NewKey(newKey)
					if err != nil {
						return 0, usageErr("checkpoint: %v", err)
					}
					f, err := os.OpenFile(keyOut, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
					if err != nil {
						return 0, usageErr("checkpoint: --key-out: %v", err)
					}
					_, err = fmt.Fprintln(f, skey)
					if cerr := f.Close(); err == nil {
						err = cerr
					}
					if err != nil {
						return 0, fatalErr(fmt.Errorf("checkpoint: %s: %w", keyOut, err))
					}
					fmt.Fprintln(e.stdout, vkey)
					return ExitOK, nil
				}
				if len(args) != 1 {
					return 0, usageErr("checkpoint: want exactly one OUT directory, got %s (see 'convbatch checkpoint --help')", plural(int64(len(args)), "argument", "arguments"))
				}
				out, shown := args[0], args[0]
				if objout.IsURL(out) {
					// The newest commit's manifests and history.
					t, err := openObjectOut(e, out)
					if err != nil {
						return 0, err
					}
					c, err := t.Latest(e.ctx)
					if err != nil {
						return 0, fatalErr(fmt.Errorf("checkpoint: %w", err))
					}
					if c == nil {
						return 0, usageErr("checkpoint: %s holds no commit (%s): not the -o of a convbatch run", t.URL, objout.CommitsDir)
					}
					if out, err = fetchRecord(e, t, c); err != nil {
						return 0, fatalErr(fmt.Errorf("checkpoint: %w", err))
					}
					defer os.RemoveAll(out)
				}
				rec, problems := outdir.ReadRecord(out)
				if len(problems) > 0 {
					return 0, usageErr("checkpoint: %s: %s (convbatch check %s says more)", shown, problems[0], shown)
				}
				if _, err := os.Lstat(filepath.Join(out, filepath.FromSlash(outdir.CheckpointRel))); errors.Is(err, iofs.ErrNotExist) || rec.LastRun == 0 {
					return 0, usageErr("checkpoint: %s: no %s: not the output directory of a convbatch run, or none of its runs was committed by a convbatch with a history (the next run into it writes one)", shown, outdir.CheckpointRel)
				}
				h, problems := outdir.ReadHistory(out, rec, "")
				if len(problems) > 0 {
					for _, p := range problems {
						fmt.Fprintf(e.stderr, "convbatch checkpoint: %s\n", escapeControls(p.String()))
					}
					fmt.Fprintf(e.stderr, "convbatch checkpoint: %s: the checkpoint is not what OUT's manifests hash to; not printed (convbatch check %s)\n", shown, shown)
					return ExitFindings, nil
				}
				if _, err := e.stdout.Write(h.Note); err != nil {
					return 0, fatalErr(err)
				}
				return ExitOK, nil
			}
		},
	}
}
