package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/spf13/pflag"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/convbatch/convbatch/outdir"
)

// auditSubcommands are the subcommands of `convbatch audit`, by name:
// dispatch hands `convbatch audit NAME ARGS...` to auditSubcommands[NAME]
// before any flag is parsed; every other form is auditCommand's.
var auditSubcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"prove": runAuditProve,
}

// ProofChain is what `convbatch audit prove --json` prints: each link
// checkable without convbatch (docs/FORMAT.md, "The history of OUT").
type ProofChain struct {
	Receipt struct {
		File           string `json:"file"`
		Line           int64  `json:"line"`
		ConversationID string `json:"conversation_id"`
		Status         string `json:"status"`
	} `json:"receipt"`
	// Document is the receipt's document line in its archive under OUT:
	// its 1-based line number and the SHA-256 of its bytes without the
	// line feed; Raw only with --line.
	Document struct {
		Archive string `json:"archive"`
		Line    int64  `json:"line"`
		SHA256  string `json:"sha256"`
		Raw     string `json:"raw,omitempty"`
	} `json:"document"`
	// File is the archive as the manifest of the run that published it
	// records it.
	File struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
		Run    int    `json:"run"`
	} `json:"file"`
	// Manifest is that run's manifest: leaf LeafIndex of OUT's tree,
	// LeafHash = tlog.RecordHash of its bytes.
	Manifest struct {
		Path      string    `json:"path"`
		SHA256    string    `json:"sha256"`
		LeafIndex int64     `json:"leaf_index"`
		LeafHash  tlog.Hash `json:"leaf_hash"`
	} `json:"manifest"`
	// Proof is the inclusion proof of the leaf in the tree of TreeSize
	// leaves and root Root (tlog.CheckRecord checks it).
	Proof struct {
		TreeSize int64       `json:"tree_size"`
		Root     tlog.Hash   `json:"root"`
		Hashes   []tlog.Hash `json:"hashes"`
	} `json:"proof"`
	// Checkpoint is OUT's latest checkpoint (the note), whose size and
	// root are the proof's.
	Checkpoint string `json:"checkpoint"`
}

// runAuditProve is `convbatch audit prove [--json] [--line] OUT RECEIPT`.
func runAuditProve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("audit prove", pflag.ContinueOnError)
	fs.SetOutput(stdout)
	asJSON := fs.Bool("json", false, "print the chain as one JSON object")
	withLine := fs.Bool("line", false, "print the document line itself too (its message content)")
	fs.Usage = func() {
		fmt.Fprintf(stdout, "print the chain that ties one receipt to a checkpoint of OUT's history: its document line (archive, line number, SHA-256), the archive's size and digest in the manifest of the run that published it, that manifest's leaf and inclusion proof, the checkpoint\n\nUsage:\n  convbatch audit prove [--json] [--line] OUT RECEIPT\n\nRECEIPT is a conversation id, or SOURCE_FILE:LINE as the receipts table names it.\nExit 0: printed; 1: OUT's history or the archive does not check; 2: no such receipt, or usage.\n\nFlags:\n%s", fs.FlagUsages())
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "convbatch: audit prove: %s\n", escapeControls(fmt.Sprintf(format, a...)))
		return code
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		return fail(ExitUsage, "%v (see 'convbatch audit prove --help')", err)
	}
	if fs.NArg() != 2 {
		return fail(ExitUsage, "want OUT and RECEIPT, got %s (see 'convbatch audit prove --help')", plural(int64(fs.NArg()), "argument", "arguments"))
	}
	out, want := fs.Arg(0), fs.Arg(1)
	rec, problems := outdir.ReadRecord(out)
	if len(problems) > 0 || rec.LastRun == 0 {
		if len(problems) == 0 {
			return fail(ExitUsage, "%s: no manifest: not the output directory of a convbatch run", out)
		}
		return fail(ExitFindings, "%s: %s (convbatch check %s says more)", out, problems[0], out)
	}
	h, hp := outdir.ReadHistory(out, rec, "")
	if len(hp) > 0 {
		return fail(ExitFindings, "%s: its history does not check: %s (convbatch check %s says more)", out, hp[0], out)
	}
	var c ProofChain
	if err := findReceipt(out, rec, want, &c); err != nil {
		return fail(ExitUsage, "%s: %v", out, err)
	}
	archive, err := inputArchive(out, c.Receipt.File)
	if err != nil {
		return fail(ExitUsage, "%s: receipt %s:%d: %v", out, c.Receipt.File, c.Receipt.Line, err)
	}
	f, ok := rec.Files[archive]
	if !ok {
		return fail(ExitFindings, "%s: %s is not in OUT's record", out, archive)
	}
	if p := rec.CheckDigests(out, []string{archive}); len(p) > 0 {
		return fail(ExitFindings, "%s: %s", out, p[0])
	}
	c.Document.Archive = archive
	if err := findLine(filepath.Join(out, filepath.FromSlash(archive)), &c, *withLine); err != nil {
		return fail(ExitFindings, "%s: %s: %v", out, archive, err)
	}
	c.File.Path, c.File.Size, c.File.SHA256, c.File.Run = archive, f.Size, f.SHA256, f.Run
	mrel := outdir.ManifestRel(f.Run)
	mb, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(mrel)))
	if err != nil {
		return fail(ExitFindings, "%v", err)
	}
	sum := sha256.Sum256(mb)
	c.Manifest.Path, c.Manifest.SHA256, c.Manifest.LeafIndex, c.Manifest.LeafHash = mrel, hex.EncodeToString(sum[:]), int64(f.Run-1), tlog.RecordHash(mb)
	proof, err := h.Tree.ProveRecord(h.Tree.N, int64(f.Run-1))
	if err != nil {
		return fail(ExitFindings, "inclusion proof: %v", err)
	}
	root, _ := h.Tree.Root(h.Tree.N)
	if err := tlog.CheckRecord(proof, h.Tree.N, root, int64(f.Run-1), c.Manifest.LeafHash); err != nil {
		return fail(ExitFindings, "inclusion proof: %v", err)
	}
	c.Proof.TreeSize, c.Proof.Root, c.Proof.Hashes = h.Tree.N, root, proof
	if c.Proof.Hashes == nil {
		c.Proof.Hashes = []tlog.Hash{}
	}
	c.Checkpoint = string(h.Note)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(&c); err != nil {
			return fail(ExitFatal, "%v", err)
		}
		return ExitOK
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "receipt     %s at %s:%d (%s)\n", escapeControls(c.Receipt.ConversationID), escapeControls(c.Receipt.File), c.Receipt.Line, c.Receipt.Status)
	fmt.Fprintf(w, "document    %s line %d, SHA-256 %s (the line without its line feed)\n", escapeControls(archive), c.Document.Line, c.Document.SHA256)
	fmt.Fprintf(w, "file        %s: %d bytes, SHA-256 %s, in the manifest of run %d\n", escapeControls(archive), f.Size, f.SHA256, f.Run)
	fmt.Fprintf(w, "manifest    %s: SHA-256 %s, leaf %d, leaf hash %s\n", mrel, c.Manifest.SHA256, c.Manifest.LeafIndex, c.Manifest.LeafHash)
	fmt.Fprintf(w, "inclusion   leaf %d of a tree of %d, root %s:", c.Manifest.LeafIndex, c.Proof.TreeSize, root)
	for _, x := range c.Proof.Hashes {
		fmt.Fprintf(w, " %s", x)
	}
	fmt.Fprintf(w, "\ncheckpoint\n%s", c.Checkpoint)
	if *withLine {
		fmt.Fprintf(w, "line\n%s\n", c.Document.Raw)
	}
	if err := w.Flush(); err != nil {
		return fail(ExitFatal, "%v", err)
	}
	return ExitOK
}

// findReceipt finds the receipt want (a conversation id, or
// SOURCE_FILE:LINE) in OUT's receipts files, the latest line of it last.
func findReceipt(out string, rec *outdir.Record, want string, c *ProofChain) error {
	var files []string
	for p := range rec.Files {
		if strings.HasPrefix(p, "receipts/") && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	wantFile, wantLine := "", int64(0)
	if i := strings.LastIndexByte(want, ':'); i > 0 {
		if n, err := strconv.ParseInt(want[i+1:], 10, 64); err == nil && n > 0 {
			wantFile, wantLine = want[:i], n
		}
	}
	type pos struct {
		file string
		line int64
	}
	found := map[pos]bool{}
	for _, rel := range files {
		f, err := os.Open(filepath.Join(out, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var r struct {
				File           string `json:"file"`
				Line           int64  `json:"line"`
				ConversationID string `json:"conversation_id"`
				Status         string `json:"status"`
			}
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			if (wantLine > 0 && r.File == wantFile && r.Line == wantLine) || r.ConversationID == want {
				c.Receipt.File, c.Receipt.Line, c.Receipt.ConversationID, c.Receipt.Status = r.File, r.Line, r.ConversationID, r.Status
				found[pos{r.File, r.Line}] = true
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
	}
	switch {
	case len(found) == 0:
		return fmt.Errorf("no receipt %q in OUT's receipts files (a conversation id, or SOURCE_FILE:LINE as the receipts table's source_file and source_line name it)", want)
	case len(found) > 1:
		var at []string
		for p := range found {
			at = append(at, fmt.Sprintf("%s:%d", p.file, p.line))
		}
		slices.Sort(at)
		return fmt.Errorf("%d receipts of conversation %q, at %s: name one as SOURCE_FILE:LINE", len(found), want, strings.Join(at, ", "))
	}
	return nil
}

// inputArchive returns the archive OUT holds for the input file, from
// OUT's committed inputs (state/inputs.jsonl).
func inputArchive(out, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(outdir.InputsRel())))
	if err != nil {
		return "", err
	}
	for line := range bytes.Lines(b) {
		var in struct {
			Path  string   `json:"path"`
			Files []string `json:"files"`
		}
		if json.Unmarshal(line, &in) != nil || in.Path != file {
			continue
		}
		for _, f := range in.Files {
			if strings.HasPrefix(f, outdir.DirArchive+"/") {
				return f, nil
			}
		}
		return "", fmt.Errorf("the input has no archive in OUT (run with --archive none?)")
	}
	return "", fmt.Errorf("no committed input %q in OUT", file)
}

// findLine finds the receipt's document in the archive at p (zstd or
// plain JSON Lines): the line whose top-level "id" is the conversation id,
// the last such line at or before the receipt's source line (an archive
// holds the input's documents in order, without its rejects and blank
// lines, so a document's archive line is at most its source line).
func findLine(p string, c *ProofChain, raw bool) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".zst") {
		d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<31))
		if err != nil {
			return err
		}
		defer d.Close()
		r = d
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var n int64
	idKey := []byte(`"id"`)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			if n > c.Receipt.Line {
				break
			}
			body := bytes.TrimSuffix(line, []byte("\n"))
			if bytes.Contains(body, idKey) && bytes.Contains(body, []byte(strconv.Quote(c.Receipt.ConversationID))) {
				var doc struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(body, &doc) == nil && doc.ID == c.Receipt.ConversationID {
					sum := sha256.Sum256(body)
					c.Document.Line, c.Document.SHA256 = n, hex.EncodeToString(sum[:])
					if raw {
						c.Document.Raw = string(body)
					}
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n+1, err)
		}
	}
	if c.Document.Line == 0 {
		return fmt.Errorf("no document of id %q at or before line %d", c.Receipt.ConversationID, c.Receipt.Line)
	}
	return nil
}
