package outdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
)

// Reasons CheckOutDir refuses an output directory, wrapped in an
// *OutDirError.
var (
	// ErrOutDirInInput: the output directory is, or lies inside, an input
	// directory, so a later run over that directory would read the outputs
	// as inputs.
	ErrOutDirInInput = errors.New("output directory inside an input directory")
	// ErrInputInOutDir: an input lies inside the output directory.
	ErrInputInOutDir = errors.New("input inside the output directory")
	// ErrOutDirForeign: the output directory exists and holds other files
	// but no report.json and no .convbatch state directory, so it is not
	// convbatch's to take over.
	ErrOutDirForeign = errors.New("output directory holds other files")
	// ErrOutDirURL: the output directory is a URL (s3://, gs://,
	// https://): OUT is a local directory; inputs may be URLs.
	ErrOutDirURL = errors.New("output directory is a URL")
)

// OutDirError is CheckOutDir's refusal of an output directory.
type OutDirError struct {
	// Out is the output directory as given.
	Out string
	// Input is the input argument (ErrOutDirInInput) or input path
	// (ErrInputInOutDir) concerned; "" otherwise.
	Input string
	// Err is ErrOutDirInInput, ErrInputInOutDir, ErrOutDirForeign, or the
	// error that kept Out from being resolved.
	Err error
}

func (e *OutDirError) Error() string {
	switch e.Err {
	case ErrOutDirInInput:
		return fmt.Sprintf("output directory %q lies inside the input directory %q: a later run over %q would read the outputs as inputs", e.Out, e.Input, e.Input)
	case ErrInputInOutDir:
		return fmt.Sprintf("input %q lies inside the output directory %q", e.Input, e.Out)
	case ErrOutDirForeign:
		return fmt.Sprintf("output directory %q exists, is not empty and holds no convbatch report.json or .convbatch directory", e.Out)
	case ErrOutDirURL:
		return fmt.Sprintf("output directory %s: OUT must be a local directory (inputs may be s3://, gs:// or https:// URLs; OUT in object storage is not supported yet)", e.Out)
	}
	return fmt.Sprintf("output directory %q: %v", e.Out, e.Err)
}

// Unwrap returns the reason or cause.
func (e *OutDirError) Unwrap() error { return e.Err }

// CheckOutDir refuses an output directory a run would read back or that
// holds something other than convbatch's outputs: one that is, or lies
// inside, an input directory (the next run over that directory would read
// the outputs as inputs), one that holds an input, and an existing,
// non-empty directory without a report.json (a run removes stale files in
// its own subdirectories when it publishes, so it must not take over an
// unrelated directory). args are the input arguments as given (a directory
// or a glob names the directory the run reads), inputs what they expanded
// to (stream.Expand); standard input is skipped. Symbolic links are
// resolved. A refusal is an *OutDirError.
func CheckOutDir(out string, args []string, inputs []stream.Input) error {
	if source.IsURL(out) {
		loc, err := source.Parse(out)
		shown := loc.String()
		if err != nil {
			shown = "(a URL)"
		}
		return &OutDirError{Out: shown, Err: ErrOutDirURL}
	}
	absOut, err := ResolvePath(out)
	if err != nil {
		return &OutDirError{Out: out, Err: err}
	}
	within := func(path, dir string) bool {
		return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
	}
	for _, arg := range args {
		if arg == stream.StdinPath || source.IsURL(arg) {
			continue
		}
		dir := arg
		if st, err := os.Stat(arg); err != nil || !st.IsDir() {
			if !strings.ContainsAny(arg, "*?[") {
				continue
			}
			dir = filepath.Dir(arg)
		}
		absDir, err := ResolvePath(dir)
		if err == nil && within(absOut, absDir) {
			return &OutDirError{Out: out, Input: arg, Err: ErrOutDirInInput}
		}
	}
	for _, in := range inputs {
		if in.Path == stream.StdinPath || in.URL != "" {
			continue
		}
		if absIn, err := ResolvePath(in.Path); err == nil && within(absIn, absOut) {
			return &OutDirError{Out: out, Input: in.Path, Err: ErrInputInOutDir}
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil
	}
	if hasOwner(entries) {
		return nil
	}
	for _, e := range entries {
		// A killed run of an earlier version left only its spool or index.
		if !strings.HasPrefix(e.Name(), ".convbatch-") {
			return &OutDirError{Out: out, Err: ErrOutDirForeign}
		}
	}
	return nil
}

// hasOwner reports whether the entries of a directory include report.json
// or convbatch's state directory.
func hasOwner(entries []os.DirEntry) bool {
	for _, e := range entries {
		if e.Name() == ReportFile || e.Name() == StateDir {
			return true
		}
	}
	return false
}

// ResolvePath returns p as an absolute path with symbolic links resolved
// for the longest leading part of it that exists; the rest, which does not
// exist yet, is joined on unchanged.
func ResolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
