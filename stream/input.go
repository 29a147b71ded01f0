package stream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/convbatch/convbatch/source"

	"github.com/convbatch/convbatch/codes"
)

// Shape is how an input's bytes are laid out.
type Shape uint8

// The input shapes convbatch reads.
const (
	// ShapeUnknown is a standard input whose shape is sniffed when opened.
	ShapeUnknown Shape = iota
	// ShapeJSONL is one document per line.
	ShapeJSONL
	// ShapeJSONLZstd is JSONL in a zstd stream.
	ShapeJSONLZstd
	// ShapeJSON is a single, possibly pretty-printed, document.
	ShapeJSON
	// ShapeJSONLGzip is JSONL in a gzip stream.
	ShapeJSONLGzip
)

func (s Shape) String() string {
	switch s {
	case ShapeJSONL:
		return "jsonl"
	case ShapeJSONLZstd:
		return "jsonl.zst"
	case ShapeJSON:
		return "json"
	case ShapeJSONLGzip:
		return "jsonl.gz"
	}
	return "sniffed"
}

// Input is one source of records.
type Input struct {
	// Path is the input as the user named it ("-" for standard input).
	Path string
	// Rel is the name the input's outputs are written under (its archive is
	// archive/<Rel>.jsonl.zst), with forward slashes: the input's path
	// relative to its directory argument, or its file name for a file or a
	// glob, without the shape's extension; "stdin" for standard input.
	// Expand lengthens the names that would otherwise be shared (see
	// Expand).
	Rel string
	// Shape is taken from the name; ShapeUnknown for standard input.
	Shape Shape
	// Size is the input's size on disk, or -1 when unknown.
	Size int64
	// URL is set for an input in object storage or on a web server
	// (s3://, gs://, https://, http://; package source): the URL it is
	// opened by, which may hold a signed URL's query and is never printed.
	// Path is then the URL without a query or user information, the name
	// reports, rows and errors give it.
	URL string `json:"url,omitempty"`
	// Object is, for an input by URL, the version of the object that the
	// listing or stat found when the input was named (size, ETag or
	// generation, modification time): readers pin their requests to it
	// (source.OpenVersion), so that every read of the input, and its
	// fingerprint, is of that one version. Nil for other inputs.
	Object *source.Info `json:"-"`
}

// StdinPath is the argument that names standard input.
const StdinPath = "-"

// ShapeOf returns the shape a file name implies, or ShapeUnknown when the
// name has none of the known extensions.
func ShapeOf(name string) Shape {
	switch {
	case strings.HasSuffix(name, ".jsonl.zst"):
		return ShapeJSONLZstd
	case strings.HasSuffix(name, ".jsonl.gz"):
		return ShapeJSONLGzip
	case strings.HasSuffix(name, ".jsonl"):
		return ShapeJSONL
	case strings.HasSuffix(name, ".json"):
		return ShapeJSON
	}
	return ShapeUnknown
}

// Ext returns the file extension of the shape, "" for ShapeUnknown.
func (s Shape) Ext() string {
	if s == ShapeUnknown {
		return ""
	}
	return "." + s.String()
}

func trimShape(name string) string {
	for _, ext := range []string{".jsonl.zst", ".jsonl.gz", ".jsonl", ".json"} {
		if strings.HasSuffix(name, ext) {
			return strings.TrimSuffix(name, ext)
		}
	}
	return name
}

// isSidecar reports files that convbatch writes beside archives and that a
// directory walk must not take for documents: FILE.expect.json and
// FILE.keys.json beside an archive FILE, and expect.json and keys.json,
// which gen --nights writes at the top of its directory (the same
// suffixes with no archive name before them).
func isSidecar(name string) bool {
	for _, s := range []string{"expect.json", "keys.json"} {
		if name == s || strings.HasSuffix(name, "."+s) {
			return true
		}
	}
	return false
}

// ErrNoInput is returned by Expand when an argument names nothing readable.
var ErrNoInput = errors.New("no input")

// shapesText names the input extensions in messages.
const shapesText = ".jsonl, .jsonl.zst, .jsonl.gz or .json"

// Skipped is a file or directory that a directory walk or a glob found and
// passed over.
type Skipped struct {
	// Path is the file as found: the directory argument joined with the
	// path below it, or the glob's match.
	Path string
	// Reason says why it was not read.
	Reason codes.Skip
}

// skipReason returns why a file (or, with dir, a directory) found by a walk
// or a glob is not an input, and whether it is not. name is its base name,
// regular whether it is a regular file (a glob's match: a file that could
// be examined).
func skipReason(name string, dir, regular bool) (codes.Skip, bool) {
	switch {
	case dir && strings.HasPrefix(name, "."):
		return codes.SkipDotDirectory, true
	case dir:
		return codes.SkipDirectory, true
	case strings.HasPrefix(name, "."):
		return codes.SkipDotFile, true
	case isSidecar(name):
		return codes.SkipSidecar, true
	case ShapeOf(name) == ShapeUnknown:
		return codes.SkipUnknownType, true
	case !regular:
		return codes.SkipNotRegular, true
	}
	return 0, false
}

// Expand turns command-line arguments into inputs, in argument order; a
// directory contributes every file of a known shape below it in lexical path
// order, a glob its sorted matches. Both pass over dot-files, convbatch's
// sidecars (*.expect.json, *.keys.json, expect.json, keys.json) and files
// of no input shape (see ExpandAll, which lists them).
//
// Inputs whose names (Input.Rel) would be the same are told apart by
// Disambiguate, other inputs keep their names; the same file named twice,
// and standard input with a file named stdin, are refused.
func Expand(args []string) ([]Input, error) {
	inputs, _, err := ExpandAll(args)
	return inputs, err
}

// ExpandAll is Expand that also returns every file and directory the walks
// and globs passed over, in the order found, each with its reason (a
// dot-directory is listed once, not what it holds).
func ExpandAll(args []string) ([]Input, []Skipped, error) {
	return ExpandAllContext(context.Background(), args)
}

// URLExpansionLimit bounds the time that the listings and stats of all
// the URL arguments of one ExpandAllContext or ExpandAllWith may take
// together, retries included; beyond it the expansion fails with
// ErrExpansionTimeout. Each
// request is bounded too, by the client's stall timeout and tries (by
// default 60s with no answer, tried 5 times).
const URLExpansionLimit = 10 * time.Minute

// urlExpansionLimit is URLExpansionLimit, which tests shorten.
var urlExpansionLimit = URLExpansionLimit

// ErrExpansionTimeout is the cause of the error of an expansion of URLs
// that outlasted URLExpansionLimit: the store answered too slowly, which
// a later try may not meet.
var ErrExpansionTimeout = errors.New("the listings and stats of the URL inputs took longer than their limit")

// ExpandAllContext is ExpandAll whose requests for URL arguments (package
// source) end when ctx does, or when together they have taken
// URLExpansionLimit.
func ExpandAllContext(ctx context.Context, args []string) ([]Input, []Skipped, error) {
	return ExpandAllWith(ctx, source.Default(), args)
}

// ExpandAllWith is ExpandAllContext whose URL arguments are listed and
// stat'ed through c, with its retries and stall timeout.
func ExpandAllWith(ctx context.Context, c *source.Client, args []string) ([]Input, []Skipped, error) {
	var (
		out     []Input
		skipped []Skipped
		stdin   bool
	)
	ctx, cancel := context.WithTimeoutCause(ctx, urlExpansionLimit, fmt.Errorf("%w (%v)", ErrExpansionTimeout, urlExpansionLimit))
	defer cancel()
	for _, arg := range args {
		if arg == StdinPath {
			if stdin {
				return nil, nil, fmt.Errorf("standard input named twice")
			}
			stdin = true
			out = append(out, Input{Path: StdinPath, Rel: "stdin", Size: -1})
			continue
		}
		if source.IsURL(arg) {
			found, passed, err := ExpandURLWith(ctx, c, arg)
			if err != nil {
				if cause := context.Cause(ctx); errors.Is(cause, ErrExpansionTimeout) {
					return nil, nil, fmt.Errorf("input %s: %w", urlName(arg), cause)
				}
				return nil, nil, err
			}
			out = append(out, found...)
			skipped = append(skipped, passed...)
			continue
		}
		st, err := os.Stat(arg)
		if err != nil && strings.ContainsAny(arg, "*?[") {
			glob := filepath.Glob
			if hasDoubleStar(arg) {
				glob = globDoubleStar
			}
			matches, gerr := glob(arg)
			if gerr != nil {
				return nil, nil, argError(arg, gerr)
			}
			sort.Strings(matches)
			n := 0
			for _, m := range matches {
				ms, err := os.Stat(m)
				if reason, skip := skipReason(filepath.Base(m), err == nil && ms.IsDir(), err == nil && ms.Mode().IsRegular()); skip {
					skipped = append(skipped, Skipped{Path: m, Reason: reason})
					continue
				}
				out = append(out, Input{Path: m, Rel: trimShape(filepath.Base(m)), Shape: ShapeOf(m), Size: ms.Size()})
				n++
			}
			if n == 0 {
				return nil, nil, argError(arg, fmt.Errorf("%w: the pattern matches no %s file%s", ErrNoInput, shapesText, skippedNote(len(matches))))
			}
			continue
		}
		if err != nil {
			return nil, nil, argError(arg, err)
		}
		if !st.IsDir() {
			shape := ShapeOf(arg)
			if shape == ShapeUnknown {
				return nil, nil, argError(arg, fmt.Errorf("%w: not a %s file", ErrNoInput, shapesText))
			}
			out = append(out, Input{Path: arg, Rel: trimShape(filepath.Base(arg)), Shape: shape, Size: st.Size()})
			continue
		}
		found, passed, err := walkDir(arg)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, found...)
		skipped = append(skipped, passed...)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%w: no input files", ErrNoInput)
	}
	if err := refuseRepeats(out); err != nil {
		return nil, nil, err
	}
	if err := Disambiguate(out); err != nil {
		return nil, nil, err
	}
	return out, skipped, nil
}

// ExpandURL expands an argument that is a URL (source.IsURL), as Expand
// does: an object or a web server's file; a glob over an object listing,
// its matches in key order, a match of no input shape passed over, as a
// glob's; or a directory (an s3:// or gs:// URL ending in '/', a bucket's
// root, or a prefix named without its '/'), walked as a local directory
// is: every object below in key order, named by its key below the
// directory, dot-directories, dot-files, sidecars and other types passed
// over. Each input's Object is the version listed. Callers that list
// inputs themselves (the Beam module) use it for URLs, then Disambiguate
// the whole list.
func ExpandURL(ctx context.Context, arg string) ([]Input, []Skipped, error) {
	return ExpandURLWith(ctx, source.Default(), arg)
}

// ExpandURLWith is ExpandURL listing and stat'ing through c.
func ExpandURLWith(ctx context.Context, c *source.Client, arg string) ([]Input, []Skipped, error) {
	loc, err := source.Parse(arg)
	if err != nil {
		return nil, nil, fmt.Errorf("input: %w", err)
	}
	infos, err := c.Glob(ctx, arg)
	if err != nil {
		return nil, nil, fmt.Errorf("input: %w", err)
	}
	literal := len(infos) == 1 && infos[0].Location.Key == loc.Key
	switch {
	case loc.IsDir():
		return expandURLDir(loc, loc.Key, infos)
	case !literal && !strings.ContainsAny(loc.Key, `*?[\`):
		// A prefix named without its '/' (Glob found no such object).
		return expandURLDir(loc, loc.Key+"/", infos)
	}
	if literal {
		name := path.Base(loc.Key)
		if ShapeOf(name) == ShapeUnknown {
			return nil, nil, fmt.Errorf("input %s: %w: not a %s file", loc, ErrNoInput, shapesText)
		}
		return []Input{{Path: loc.String(), URL: arg, Rel: trimShape(name), Shape: ShapeOf(name), Size: infos[0].Size, Object: &infos[0]}}, nil, nil
	}
	var out []Input
	var skipped []Skipped
	for i, info := range infos {
		name := path.Base(info.Location.Key)
		if reason, skip := skipReason(name, false, true); skip {
			skipped = append(skipped, Skipped{Path: info.Location.String(), Reason: reason})
			continue
		}
		out = append(out, Input{Path: info.Location.String(), URL: info.Location.String(), Rel: trimShape(name), Shape: ShapeOf(name), Size: info.Size, Object: &infos[i]})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("input %s: %w: the pattern matches no %s object%s", loc, ErrNoInput, shapesText, skippedNote(len(infos)))
	}
	return out, skipped, nil
}

// expandURLDir makes the inputs of the objects infos that a directory
// URL loc, whose keys begin with prefix, holds: named by their keys
// below prefix, passed over by the rules of a local directory walk.
func expandURLDir(loc source.Location, prefix string, infos []source.Info) ([]Input, []Skipped, error) {
	var (
		out     []Input
		skipped []Skipped
		dotDirs = map[string]bool{}
	)
	for i, info := range infos {
		rel := strings.TrimPrefix(info.Location.Key, prefix)
		segs := strings.Split(rel, "/")
		if j := dotDirectory(segs); j >= 0 {
			d := info.Location
			d.Key = prefix + strings.Join(segs[:j+1], "/") + "/"
			if !dotDirs[d.Key] {
				dotDirs[d.Key] = true
				skipped = append(skipped, Skipped{Path: d.String(), Reason: codes.SkipDotDirectory})
			}
			continue
		}
		name := segs[len(segs)-1]
		if reason, skip := skipReason(name, false, true); skip {
			skipped = append(skipped, Skipped{Path: info.Location.String(), Reason: reason})
			continue
		}
		out = append(out, Input{Path: info.Location.String(), URL: info.Location.String(), Rel: trimShape(rel), Shape: ShapeOf(name), Size: info.Size, Object: &infos[i]})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("input %s: %w: the directory holds no %s object%s", loc, ErrNoInput, shapesText, skippedNote(len(skipped)))
	}
	return out, skipped, nil
}

// dotDirectory returns the index of the first directory among the
// '/'-separated segments of a path (all but the last) whose name begins
// with '.', or -1.
func dotDirectory(segs []string) int {
	for j := 0; j < len(segs)-1; j++ {
		if strings.HasPrefix(segs[j], ".") {
			return j
		}
	}
	return -1
}

// hasDoubleStar reports whether a pattern has a segment that is exactly
// "**".
func hasDoubleStar(pattern string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(pattern), "/") {
		if seg == "**" {
			return true
		}
	}
	return false
}

// globDoubleStar is filepath.Glob for a pattern with a "**" segment,
// matched as source.Match matches a URL's key, so that a glob means the
// same on disk and in a listing: "**" matches any number of directories,
// none included, but no dot-directory. It walks the pattern's literal
// directory (the segments before the first with a meta character) and
// returns the files (not directories) that match, in lexical order.
func globDoubleStar(pattern string) ([]string, error) {
	pat := filepath.ToSlash(filepath.Clean(pattern))
	if err := checkPattern(pat); err != nil {
		return nil, err
	}
	segs := strings.Split(pat, "/")
	i := 0
	for i < len(segs) && !strings.ContainsAny(segs[i], `*?[\`) {
		i++
	}
	root := strings.Join(segs[:i], "/")
	switch {
	case root == "" && strings.HasPrefix(pat, "/"):
		root = "/"
	case root == "":
		root = "."
	}
	var matches []string
	err := filepath.WalkDir(filepath.FromSlash(root), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == filepath.FromSlash(root) && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir // no such directory: no match, as filepath.Glob
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if ok, _ := source.Match(pat, filepath.ToSlash(p)); ok {
			matches = append(matches, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return matches, nil
}

// checkPattern reports a malformed pattern as source.Match does.
func checkPattern(pat string) error {
	_, err := source.Match(pat, "")
	return err
}

// urlName is how a URL argument is named in messages: without its user
// information and query.
func urlName(arg string) string {
	if loc, err := source.Parse(arg); err == nil {
		return loc.String()
	}
	return source.RedactURL(arg)
}

// argError is the error of the local argument arg: "input" and the
// argument quoted, then err. An argument that looks like a URL of
// another scheme (ftp://user:password@host/...) is named without its
// user information and query, and so is every URL in err's text, which
// a path error repeats; err stays the cause.
func argError(arg string, err error) error {
	if !strings.Contains(arg, "://") {
		return fmt.Errorf("input %q: %w", arg, err)
	}
	return &redactedError{msg: fmt.Sprintf("input %q: %s", source.RedactURL(arg), source.Redact(err.Error())), err: err}
}

// redactedError is an error whose message is its cause's with URLs
// redacted; it unwraps to the cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// refuseRepeats refuses a file that two arguments both name (directly, or
// also through a directory or glob that holds it), whatever names the two
// would be given: its documents would be read twice. Paths are compared
// absolute, ".." resolved, symbolic links not.
func refuseRepeats(inputs []Input) error {
	seen := make(map[string]string, len(inputs))
	for _, in := range inputs {
		if in.Path == StdinPath {
			continue
		}
		abs := in.Path // a URL names its object
		if in.URL == "" {
			var err error
			if abs, err = filepath.Abs(in.Path); err != nil {
				return fmt.Errorf("input %q: %w", in.Path, err)
			}
		}
		if first, ok := seen[abs]; ok {
			return fmt.Errorf("inputs %q and %q are the same file: name it once", first, in.Path)
		}
		seen[abs] = in.Path
	}
	return nil
}

// skippedNote says how many entries a directory or glob that gave no input
// passed over.
func skippedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d skipped (dot-files, sidecars, other types)", n)
}

// Disambiguate gives distinct names (Input.Rel) to inputs that share one,
// leaving every other input's name as it is, so that a run over inputs
// that do not collide writes the same paths as it always did. Within each
// group of inputs sharing a name, in this order:
//
//  1. Two inputs that are the same file (the same absolute path, ".."
//     resolved, symbolic links not) are refused, as is standard input
//     sharing its name "stdin" with a file.
//  2. Each member's name becomes its path relative to the deepest
//     directory that holds them all, without its extension, except where
//     two members differ only by extension (a.jsonl and a.json in one
//     directory): those keep it. d1/day.jsonl.zst and d2/day.jsonl.zst
//     become d1/day and d2/day; /data/2026/11/30/day.jsonl and
//     /data/2026/12/01/day.jsonl become 11/30/day and 12/01/day; s/a.jsonl,
//     s/a.json and t/a.jsonl become s/a.jsonl, s/a.json and t/a.
//
// The steps repeat until no two names are the same (a lengthened name can
// meet another input's). The result depends only on the set of inputs, not
// on their order.
func Disambiguate(inputs []Input) error {
	// key is an input's absolute path without its extension, with it once
	// the name keeps the extension; a name is always a suffix of its key.
	key := make([]string, len(inputs))
	ext := make([]string, len(inputs))
	kept := make([]bool, len(inputs))
	for i, in := range inputs {
		if in.Path == StdinPath {
			continue
		}
		abs, err := filepath.Abs(in.Path)
		if err != nil {
			return fmt.Errorf("input %q: %w", in.Path, err)
		}
		ext[i] = in.Shape.Ext()
		key[i] = strings.TrimSuffix(abs, ext[i])
	}
	for {
		groups := map[string][]int{}
		for i, in := range inputs {
			groups[in.Rel] = append(groups[in.Rel], i)
		}
		var shared []string
		for name, g := range groups {
			if len(g) > 1 {
				shared = append(shared, name)
			}
		}
		if len(shared) == 0 {
			return nil
		}
		sort.Strings(shared)
		for _, name := range shared {
			if err := disambiguate(inputs, groups[name], key, ext, kept); err != nil {
				return err
			}
		}
	}
}

// disambiguate applies one step of Disambiguate to the group g of inputs
// sharing a name; it lengthens at least one name or fails.
func disambiguate(inputs []Input, g []int, key, ext []string, kept []bool) error {
	files := map[string]int{}
	stems := map[string][]int{}
	for _, i := range g {
		in := inputs[i]
		if in.Path == StdinPath {
			other := g[0]
			if other == i {
				other = g[1]
			}
			return fmt.Errorf("standard input and input %q would both be written as %q: rename the file", inputs[other].Path, in.Rel)
		}
		full := key[i]
		if !kept[i] {
			full += ext[i]
		}
		if j, ok := files[full]; ok {
			return fmt.Errorf("inputs %q and %q are the same file: name it once", inputs[j].Path, in.Path)
		}
		files[full] = i
		stems[key[i]] = append(stems[key[i]], i)
	}
	lengthened := false
	for _, s := range stems {
		if len(s) < 2 {
			continue
		}
		for _, i := range s {
			if !kept[i] {
				kept[i] = true
				key[i] += ext[i]
				inputs[i].Rel += ext[i]
				lengthened = true
			}
		}
	}
	dirs := make([]string, len(g))
	for n, i := range g {
		dirs[n] = filepath.Dir(key[i])
	}
	common := commonDir(dirs)
	for _, i := range g {
		rel, err := filepath.Rel(common, key[i])
		if err != nil {
			return fmt.Errorf("input %q: %w", inputs[i].Path, err)
		}
		rel = filepath.ToSlash(rel)
		if rel != inputs[i].Rel {
			inputs[i].Rel = rel
			lengthened = true
		}
	}
	if !lengthened {
		return fmt.Errorf("inputs %q and %q would both be written as %q", inputs[g[0]].Path, inputs[g[1]].Path, inputs[g[0]].Rel)
	}
	return nil
}

// commonDir returns the deepest directory that is, or holds, every one of
// dirs (absolute and clean).
func commonDir(dirs []string) string {
	c := dirs[0]
	for _, d := range dirs[1:] {
		for !within(d, c) {
			parent := filepath.Dir(c)
			if parent == c {
				break
			}
			c = parent
		}
	}
	return c
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

func walkDir(root string) ([]Input, []Skipped, error) {
	var (
		out     []Input
		skipped []Skipped
	)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("input %q: %w", path, err)
		}
		if path == root {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") {
				skipped = append(skipped, Skipped{Path: path, Reason: codes.SkipDotDirectory})
				return filepath.SkipDir
			}
			return nil
		}
		if reason, skip := skipReason(name, false, d.Type().IsRegular()); skip {
			skipped = append(skipped, Skipped{Path: path, Reason: reason})
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("input %q: %w", path, err)
		}
		out = append(out, Input{Path: path, Rel: filepath.ToSlash(trimShape(rel)), Shape: ShapeOf(name), Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("input %q: %w: the directory holds no %s file%s", root, ErrNoInput, shapesText, skippedNote(len(skipped)))
	}
	return out, skipped, nil
}
