package stream

import "path"

// MatchInput turns one file that a glob matched into an Input, for callers
// that list files through another file system than the local one (the Beam
// module lists gs:// and s3:// paths through Beam's file systems): its
// name is the file's base name without the shape's extension, as Expand
// names a glob's matches. ok is false, with the reason in skipped, for a
// file Expand passes over (dot-files, convbatch's sidecars, files of no
// input shape). path is slash-separated, as URLs and local paths on Unix
// are; size is the file's size.
func MatchInput(p string, size int64) (in Input, skipped Skipped, ok bool) {
	name := path.Base(p)
	if reason, skip := skipReason(name, false, true); skip {
		return Input{}, Skipped{Path: p, Reason: reason}, false
	}
	return Input{Path: p, Rel: trimShape(name), Shape: ShapeOf(name), Size: size}, Skipped{}, true
}
