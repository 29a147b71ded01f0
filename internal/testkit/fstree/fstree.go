// Package fstree copies directory trees for tests: an OUT copied before a
// command that changes it, to run the same command again from the same
// state (audit's batches against one commit, the crash property's trials,
// a history test's tampered copy).
package fstree

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Copy copies the directories and regular files under src into dst
// (created as needed), byte for byte; files get mode 0644, directories
// 0755.
func Copy(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
