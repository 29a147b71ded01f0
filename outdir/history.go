package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/convbatch/convbatch/ledger"
)

// The history of OUT (package ledger, docs/FORMAT.md "The history of
// OUT"): the stored hashes of its tree and its latest checkpoint, under the
// state. Every commit publishes both, after its manifest, in its journal.
var (
	// HistoryHashesRel holds the tree's stored hashes.
	HistoryHashesRel = StateRel("log/hashes")
	// CheckpointRel holds the latest checkpoint (a note).
	CheckpointRel = StateRel("log/checkpoint")
)

// Staged names of the history files in the staging directory.
const (
	stagedHashes     = "log-hashes"
	stagedCheckpoint = "log-checkpoint"
)

// isHistoryFile reports whether rel is one of the history's files, which
// no manifest lists (a manifest cannot hold the tree that hashes it).
func isHistoryFile(rel string) bool { return rel == HistoryHashesRel || rel == CheckpointRel }

// ProblemHistory is the Problem kind of a tree or checkpoint that is not
// what OUT's manifests hash to.
const ProblemHistory = "history-mismatch"

// manifestBytes reads the manifests of runs 1..n as published.
func manifestBytes(root string, n int) ([][]byte, error) {
	out := make([][]byte, 0, n)
	for run := 1; run <= n; run++ {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(ManifestRel(run))))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// stageHistory appends the staged manifest (its bytes) to OUT's tree as
// leaf j.Run-1, stages the tree and its checkpoint (signed with
// j.CheckpointKey when set) and adds their renames to j. Run 1 starts a new
// tree; an OUT whose runs predate the tree gets one from its manifests;
// stored hashes that are not what the manifests hash to refuse the commit
// (nothing is published).
func (d *Dir) stageHistory(j *Journal, manifest []byte) error {
	tree := &ledger.Tree{}
	origin := ""
	if j.Run > 1 {
		prev, err := manifestBytes(d.root, j.Run-1)
		if err != nil {
			return fmt.Errorf("%w: history: %w", ErrRefused, err)
		}
		want, err := ledger.Build(prev)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(d.path(filepath.FromSlash(HistoryHashesRel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// An OUT committed by a convbatch before the tree: its
			// history starts from the manifests it holds.
			tree = want
		case err != nil:
			return fmt.Errorf("history: %w", err)
		default:
			stored, err := ledger.ParseHashes(b)
			if err == nil && stored.N != want.N {
				err = fmt.Errorf("%d leaves for %d runs", stored.N, want.N)
			}
			if err == nil {
				for i := range want.N {
					if stored.Leaf(i) != want.Leaf(i) {
						err = fmt.Errorf("the manifest of run %d does not hash to its leaf: rewritten since its commit", i+1)
						break
					}
				}
			}
			if err != nil {
				return fmt.Errorf("%w: %s: the history of OUT (%s) is not what its manifests hash to (%v); nothing was published: `convbatch check %s` says more; restore OUT from a backup, or rerun without --incremental to start a new history (docs/FORMAT.md, \"The history of OUT\")", ErrRefused, d.root, HistoryHashesRel, err, d.root)
			}
			tree = stored
			if cb, err := os.ReadFile(d.path(filepath.FromSlash(CheckpointRel))); err == nil {
				if c, err := ledger.ParseCheckpoint(cb); err == nil {
					origin = c.Origin
				}
			}
		}
	}
	if origin == "" {
		var err error
		if origin, err = ledger.NewOrigin(); err != nil {
			return err
		}
	}
	if err := tree.Append(manifest); err != nil {
		return err
	}
	root, err := tree.Root(tree.N)
	if err != nil {
		return err
	}
	cp := ledger.FormatCheckpoint(origin, tree.N, root)
	if j.CheckpointKey != "" {
		if cp, err = ledger.Sign(cp, j.CheckpointKey); err != nil {
			return err
		}
	}
	if err := writeFileSync(filepath.Join(d.Staging(), stagedHashes), tree.Bytes()); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(d.Staging(), stagedCheckpoint), cp); err != nil {
		return err
	}
	j.Renames = append(j.Renames, Rename{From: stagedHashes, To: HistoryHashesRel}, Rename{From: stagedCheckpoint, To: CheckpointRel})
	return nil
}

// History is OUT's history as check reads it: the tree recomputed from
// the manifests, the stored one, and the latest checkpoint.
type History struct {
	// Tree is recomputed from the manifests (leaf i: run i+1's bytes).
	Tree *ledger.Tree
	// Stored is the tree OUT stores; nil when it cannot be read.
	Stored *ledger.Tree
	// Checkpoint is OUT's latest checkpoint, parsed (nil when it cannot
	// be read), Note its bytes.
	Checkpoint *ledger.Checkpoint
	Note       []byte
}

// ReadHistory recomputes OUT's tree from the manifests rec names and
// checks the stored tree and the checkpoint against it (and the
// checkpoint's signature with the note verifier key vkey, when given). The
// problems are of kind ProblemHistory, ProblemMissing or ProblemUnreadable;
// none when the history is whole.
func ReadHistory(root string, rec *Record, vkey string) (*History, []Problem) {
	h := &History{}
	records, err := manifestBytes(root, rec.LastRun)
	if err != nil {
		return h, []Problem{{Path: StateRel(manifestsDir), Kind: ProblemUnreadable, Detail: err.Error()}}
	}
	if h.Tree, err = ledger.Build(records); err != nil {
		return h, []Problem{{Path: StateRel(manifestsDir), Kind: ProblemHistory, Detail: err.Error()}}
	}
	var problems []Problem
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(HistoryHashesRel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		problems = append(problems, Problem{Path: HistoryHashesRel, Kind: ProblemMissing, Detail: fmt.Sprintf("OUT records %d run(s) but no history tree (a convbatch before the tree committed them: the next run starts it)", rec.LastRun)})
	case err != nil:
		problems = append(problems, Problem{Path: HistoryHashesRel, Kind: ProblemUnreadable, Detail: err.Error()})
	default:
		stored, err := ledger.ParseHashes(b)
		switch {
		case err != nil:
			problems = append(problems, Problem{Path: HistoryHashesRel, Kind: ProblemHistory, Detail: err.Error()})
		case stored.N != h.Tree.N:
			h.Stored = stored
			problems = append(problems, Problem{Path: HistoryHashesRel, Kind: ProblemHistory, Detail: fmt.Sprintf("%d leaves, OUT's manifests record %d runs", stored.N, h.Tree.N)})
		default:
			h.Stored = stored
			for i := range stored.N {
				if stored.Leaf(i) != h.Tree.Leaf(i) {
					problems = append(problems, Problem{Path: ManifestRel(int(i + 1)), Kind: ProblemHistory, Detail: fmt.Sprintf("does not hash to leaf %d of OUT's tree (%s): the manifest was rewritten after its commit", i, HistoryHashesRel)})
					break
				}
			}
		}
	}
	root0, _ := h.Tree.Root(h.Tree.N)
	h.Note, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(CheckpointRel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		problems = append(problems, Problem{Path: CheckpointRel, Kind: ProblemMissing, Detail: "no checkpoint"})
	case err != nil:
		problems = append(problems, Problem{Path: CheckpointRel, Kind: ProblemUnreadable, Detail: err.Error()})
	default:
		c, err := ledger.ParseCheckpoint(h.Note)
		if err == nil && vkey != "" {
			c, err = ledger.Verify(h.Note, vkey)
		}
		switch {
		case err != nil:
			problems = append(problems, Problem{Path: CheckpointRel, Kind: ProblemHistory, Detail: err.Error()})
		case c.Size != h.Tree.N || c.Root != root0:
			h.Checkpoint = c
			problems = append(problems, Problem{Path: CheckpointRel, Kind: ProblemHistory, Detail: fmt.Sprintf("commits to %d runs, root %s; OUT's manifests hash to %d runs, root %s", c.Size, c.Root, h.Tree.N, root0)})
		default:
			h.Checkpoint = c
		}
	}
	return h, problems
}

// Extends proves that OUT's history (h, recomputed from its manifests)
// extends every kept checkpoint (note bytes; their signatures checked
// with vkey when given): ledger.Extends.
func (h *History) Extends(kept [][]byte, vkey string) ([]ledger.Proof, error) {
	var cps []*ledger.Checkpoint
	for i, b := range kept {
		c, err := ledger.ParseCheckpoint(b)
		if err == nil && vkey != "" {
			c, err = ledger.Verify(b, vkey)
		}
		if err != nil {
			return nil, fmt.Errorf("kept checkpoint %d: %w", i+1, err)
		}
		cps = append(cps, c)
	}
	origin := ""
	if h.Checkpoint != nil {
		origin = h.Checkpoint.Origin
	}
	proofs, d := ledger.Extends(h.Tree, h.Stored, origin, cps)
	if d != nil {
		return nil, d
	}
	return proofs, nil
}

// dropHistory removes the history files from a journal's removals: every
// commit publishes them anew.
func dropHistory(removes []string) []string {
	return slices.DeleteFunc(removes, isHistoryFile)
}

// IsRecordFile reports whether rel (relative to OUT) is one of the files
// ReadRecord and ReadHistory read: a run's manifest, or OUT's history
// (its tree's hashes and its checkpoint). A copy of those alone is enough
// to check OUT's history (an OUT on object storage: convbatch check).
func IsRecordFile(rel string) bool {
	return isHistoryFile(rel) || path.Dir(rel) == StateRel(manifestsDir)
}
