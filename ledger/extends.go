package ledger

import (
	"fmt"
	"slices"

	"golang.org/x/mod/sumdb/tlog"
)

// Reasons a tree does not extend a kept checkpoint (Divergence.Reason).
const (
	// ReasonRestarted: the kept checkpoint names another origin: OUT's
	// tree was started anew (a run that replaced OUT) since it was kept.
	ReasonRestarted = "history-restarted"
	// ReasonRemoved: OUT holds fewer runs than the kept checkpoint.
	ReasonRemoved = "runs-removed"
	// ReasonDiffers: the runs the kept checkpoint commits to do not hash
	// to its root: a night was edited, removed, re-signed or reordered.
	ReasonDiffers = "run-differs"
)

// Divergence is how a tree fails to extend a kept checkpoint: the first
// run that differs is among runs First..Last (1-based; First == Last when
// it is named exactly).
type Divergence struct {
	Reason      string
	First, Last int64
	// Kept is the size of the kept checkpoint the tree fails.
	Kept   int64
	Detail string
}

func (d *Divergence) Error() string {
	where := fmt.Sprintf("run %d", d.First)
	if d.Last > d.First {
		where = fmt.Sprintf("one of runs %d..%d", d.First, d.Last)
	}
	return fmt.Sprintf("%s: first difference at %s: %s", d.Reason, where, d.Detail)
}

// Proof is a checked consistency proof: the tree of Size leaves and Root
// extends the kept checkpoint of Kept leaves.
type Proof struct {
	Kept, Size int64
	Root       tlog.Hash
	Hashes     tlog.TreeProof
}

// Extends checks that tree (recomputed from OUT's manifests) extends every
// kept checkpoint, with a tlog consistency proof (ProveTree, checked by
// CheckTree) for each. stored is the tree OUT stores (nil when it cannot
// be read), origin the origin of OUT's own checkpoint ("" when unknown):
// they only help name the run that differs. Naming:
//   - OUT's stored tree still matches the kept root: the first leaf where
//     the stored and recomputed trees differ is named exactly (a manifest
//     rewritten after the checkpoint was kept, the tree left alone);
//   - otherwise the first difference is between the largest kept
//     checkpoint that holds and the smallest that fails: exactly one run
//     when a checkpoint was kept after every run, runs 1..SIZE with only one.
func Extends(tree, stored *Tree, origin string, kept []*Checkpoint) ([]Proof, *Divergence) {
	kept = slices.Clone(kept)
	slices.SortStableFunc(kept, func(a, b *Checkpoint) int { return int(min(max(a.Size-b.Size, -1), 1)) })
	holds := func(k *Checkpoint) bool {
		if k.Size > tree.N {
			return false
		}
		r, err := tree.Root(k.Size)
		return err == nil && r == k.Root
	}
	var a int64 // the largest kept size that holds below the failing one
	for _, k := range kept {
		if origin != "" && k.Origin != origin {
			return nil, &Divergence{Reason: ReasonRestarted, First: 1, Last: k.Size, Kept: k.Size,
				Detail: fmt.Sprintf("the kept checkpoint is of tree %q (%d runs), OUT's of tree %q: OUT's history was started anew (a run without --incremental replaced OUT), and the %d runs kept are not OUT's any more", k.Origin, k.Size, origin, k.Size)}
		}
		if holds(k) {
			a = max(a, k.Size)
			continue
		}
		if k.Size > tree.N {
			return nil, &Divergence{Reason: ReasonRemoved, First: tree.N + 1, Last: k.Size, Kept: k.Size,
				Detail: fmt.Sprintf("OUT's manifests record %d runs, the kept checkpoint %d: runs %d..%d were removed", tree.N, k.Size, tree.N+1, k.Size)}
		}
		if stored != nil && stored.N >= k.Size {
			if r, err := stored.Root(k.Size); err == nil && r == k.Root {
				for i := a; i < k.Size; i++ {
					if stored.Leaf(i) != tree.Leaf(i) {
						return nil, &Divergence{Reason: ReasonDiffers, First: i + 1, Last: i + 1, Kept: k.Size,
							Detail: fmt.Sprintf("the manifest of run %d is not the one the kept checkpoint (%d runs) commits to; OUT's stored tree still holds its original leaf", i+1, k.Size)}
					}
				}
			}
		}
		d := &Divergence{Reason: ReasonDiffers, First: a + 1, Last: k.Size, Kept: k.Size,
			Detail: fmt.Sprintf("OUT's manifests of runs 1..%d do not hash to the kept checkpoint's root", k.Size)}
		if a+1 < k.Size {
			d.Detail += fmt.Sprintf("; OUT's own tree was rewritten to match them, so a checkpoint of size and root alone cannot say which of runs %d..%d (keep one every night to name it)", a+1, k.Size)
		}
		return nil, d
	}
	var proofs []Proof
	root, err := tree.Root(tree.N)
	if err != nil {
		return nil, &Divergence{Reason: ReasonDiffers, First: 1, Last: tree.N, Detail: err.Error()}
	}
	for _, k := range kept {
		p, err := tree.ProveTree(tree.N, k.Size)
		if err == nil {
			err = tlog.CheckTree(p, tree.N, root, k.Size, k.Root)
		}
		if err != nil {
			return nil, &Divergence{Reason: ReasonDiffers, First: 1, Last: k.Size, Kept: k.Size, Detail: "consistency proof: " + err.Error()}
		}
		proofs = append(proofs, Proof{Kept: k.Size, Size: tree.N, Root: root, Hashes: p})
	}
	return proofs, nil
}
