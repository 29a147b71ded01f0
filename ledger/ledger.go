// Package ledger keeps one thing: the history of an output directory (OUT)
// as an append-only Merkle tree, the transparency log of Go's checksum
// database (golang.org/x/mod/sumdb/tlog, RFC 6962 hashing), and the
// checkpoints that commit to it (golang.org/x/mod/sumdb/note).
//
// Leaf i (from 0) of OUT's tree is tlog.RecordHash of the bytes of the
// manifest of run i+1 (OUT/.convbatch/state/manifests/run-NNNNNN.json), as
// the commit published them. The tree is stored as tlog's stored hashes,
// 32 bytes each in storage order (tlog.StoredHashIndex); a checkpoint is the
// note text
//
//	convbatch OUT <origin>
//	<tree size>
//	<root hash, base64>
//
// signed in note format when the commit was given a signer key, else the
// bare text. docs/FORMAT.md, "The history of OUT", says what each proves.
package ledger

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// OriginPrefix begins the first line of every checkpoint of an OUT's tree.
const OriginPrefix = "convbatch OUT "

// ErrMalformed marks stored hashes or a checkpoint that convbatch did not
// write as they are: truncated, padded or not parseable.
var ErrMalformed = errors.New("malformed")

// Tree is an OUT's history: the stored hashes of a tlog tree of N leaves.
type Tree struct {
	// N is the number of leaves (runs).
	N int64
	// Stored are the stored hashes, tlog.StoredHashCount(N) of them.
	Stored []tlog.Hash
}

// Reader returns the tree's hashes as tlog reads them.
func (t *Tree) Reader() tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x < 0 || x >= int64(len(t.Stored)) {
				return nil, fmt.Errorf("ledger: stored hash %d of %d: %w", x, len(t.Stored), ErrMalformed)
			}
			out[i] = t.Stored[x]
		}
		return out, nil
	})
}

// Append adds the manifest bytes record as the tree's next leaf.
func (t *Tree) Append(record []byte) error {
	hs, err := tlog.StoredHashes(t.N, record, t.Reader())
	if err != nil {
		return fmt.Errorf("ledger: append leaf %d: %w", t.N, err)
	}
	t.Stored = append(t.Stored, hs...)
	t.N++
	return nil
}

// Build returns the tree whose leaves are the records, in order.
func Build(records [][]byte) (*Tree, error) {
	t := &Tree{}
	for _, r := range records {
		if err := t.Append(r); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Root returns the root hash of the tree's first n leaves.
func (t *Tree) Root(n int64) (tlog.Hash, error) {
	if n < 0 || n > t.N {
		return tlog.Hash{}, fmt.Errorf("ledger: root of %d leaves of a tree of %d", n, t.N)
	}
	return tlog.TreeHash(n, t.Reader())
}

// Leaf returns leaf i's hash.
func (t *Tree) Leaf(i int64) tlog.Hash { return t.Stored[tlog.StoredHashIndex(0, i)] }

// Bytes returns the stored hashes as the file holds them.
func (t *Tree) Bytes() []byte {
	b := make([]byte, 0, len(t.Stored)*tlog.HashSize)
	for _, h := range t.Stored {
		b = append(b, h[:]...)
	}
	return b
}

// ParseHashes reads stored hashes as Bytes writes them. A length that is
// not the stored-hash count of a whole tree (a truncated or padded file)
// is ErrMalformed; so are interior hashes that are not those of the leaves.
func ParseHashes(b []byte) (*Tree, error) {
	if len(b)%tlog.HashSize != 0 {
		return nil, fmt.Errorf("%d bytes, not a whole number of %d-byte hashes (truncated?): %w", len(b), tlog.HashSize, ErrMalformed)
	}
	count := int64(len(b) / tlog.HashSize)
	var n int64
	for tlog.StoredHashCount(n) < count {
		n++
	}
	if tlog.StoredHashCount(n) != count {
		return nil, fmt.Errorf("%d hashes, the stored hashes of no whole tree (truncated?): %w", count, ErrMalformed)
	}
	t := &Tree{N: n, Stored: make([]tlog.Hash, count)}
	for i := range t.Stored {
		copy(t.Stored[i][:], b[i*tlog.HashSize:])
	}
	// The interior hashes must be the leaves': rebuild from the leaves.
	re := &Tree{}
	for i := int64(0); i < n; i++ {
		hs, err := tlog.StoredHashesForRecordHash(i, t.Leaf(i), re.Reader())
		if err != nil {
			return nil, err
		}
		re.Stored = append(re.Stored, hs...)
		re.N++
	}
	for i := range re.Stored {
		if re.Stored[i] != t.Stored[i] {
			lvl, at := tlog.SplitStoredHashIndex(int64(i))
			return nil, fmt.Errorf("stored hash %d (level %d, node %d) is not the hash of the leaves under it: %w", i, lvl, at, ErrMalformed)
		}
	}
	return t, nil
}

// ProveRecord returns the inclusion proof of leaf i in the tree's first
// size leaves (tlog.ProveRecord).
func (t *Tree) ProveRecord(size, i int64) (tlog.RecordProof, error) {
	return tlog.ProveRecord(size, i, t.Reader())
}

// ProveTree returns the proof that the tree's first size leaves extend its
// first old leaves (tlog.ProveTree).
func (t *Tree) ProveTree(size, old int64) (tlog.TreeProof, error) {
	return tlog.ProveTree(size, old, t.Reader())
}

// NewOrigin returns a new tree's origin line's name: 16 random hex digits,
// so that a tree started anew (a run that replaced OUT) is told from the
// one a kept checkpoint commits to.
func NewOrigin() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("ledger: origin: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Checkpoint is a parsed checkpoint.
type Checkpoint struct {
	// Origin is the tree's name (after OriginPrefix).
	Origin string
	// Size is the tree size, Root its root hash.
	Size int64
	Root tlog.Hash
	// Text is the note's text (the three lines); Signed says whether
	// signature lines follow it.
	Text   []byte
	Signed bool
}

// FormatCheckpoint returns the checkpoint text of a tree.
func FormatCheckpoint(origin string, size int64, root tlog.Hash) []byte {
	return fmt.Appendf(nil, "%s%s\n%d\n%s\n", OriginPrefix, origin, size, root)
}

// ParseCheckpoint parses a checkpoint as FormatCheckpoint (and Sign)
// write it; its signatures are not checked (Verify does).
func ParseCheckpoint(msg []byte) (*Checkpoint, error) {
	text, sigs, signed := bytes.Cut(msg, []byte("\n\n"))
	if signed {
		text = append(text, '\n')
		if len(bytes.TrimSpace(sigs)) == 0 {
			return nil, fmt.Errorf("checkpoint: a blank line but no signature after it: %w", ErrMalformed)
		}
	}
	lines := strings.Split(string(text), "\n")
	if len(lines) != 4 || lines[3] != "" || !strings.HasPrefix(lines[0], OriginPrefix) || len(text) > 1024 {
		return nil, fmt.Errorf("checkpoint: not the three lines %q ORIGIN, SIZE, ROOT: %w", OriginPrefix, ErrMalformed)
	}
	origin := strings.TrimPrefix(lines[0], OriginPrefix)
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || lines[1] != strconv.FormatInt(n, 10) {
		return nil, fmt.Errorf("checkpoint: line 2: not a tree size: %w", ErrMalformed)
	}
	h, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(h) != tlog.HashSize {
		return nil, fmt.Errorf("checkpoint: line 3: not a base64 SHA-256 root hash: %w", ErrMalformed)
	}
	c := &Checkpoint{Origin: origin, Size: n, Text: text, Signed: signed}
	copy(c.Root[:], h)
	return c, nil
}

// Sign signs a checkpoint text with the note signer key skey (as
// note.GenerateKey writes it).
func Sign(text []byte, skey string) ([]byte, error) {
	s, err := note.NewSigner(strings.TrimSpace(skey))
	if err != nil {
		return nil, fmt.Errorf("checkpoint key: %w", err)
	}
	msg, err := note.Sign(&note.Note{Text: string(text)}, s)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: sign: %w", err)
	}
	return msg, nil
}

// CheckSigner refuses a signer key that note cannot sign with.
func CheckSigner(skey string) error {
	if _, err := note.NewSigner(strings.TrimSpace(skey)); err != nil {
		return fmt.Errorf("checkpoint key: not a note signer key (convbatch checkpoint --new-key writes one): %w", err)
	}
	return nil
}

// Verify checks that msg carries a valid signature by the note verifier
// key vkey and returns its text parsed.
func Verify(msg []byte, vkey string) (*Checkpoint, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return nil, fmt.Errorf("checkpoint verifier key: %w", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return nil, fmt.Errorf("checkpoint signature by %s: %w", v.Name(), err)
	}
	return ParseCheckpoint([]byte(n.Text))
}

// NewKey returns a new note signer key named name and its verifier key.
func NewKey(name string) (skey, vkey string, err error) {
	skey, vkey, err = note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", "", fmt.Errorf("checkpoint key %q: %w", name, err)
	}
	return skey, vkey, nil
}
