// Package npmtest installs pinned npm packages for tests that check
// convbatch's files with independent Node.js tools
// (internal/testkit/duckdbtest, internal/testkit/hyparquettest), and finds
// their scripts under testdata/.
//
// An Install is set up once per machine into
// os.UserCacheDir()/convbatch/DIR: npm install into a temporary directory
// beside it, a check that the packages work, a marker file, then an atomic
// rename, so that parallel test processes do not collide; later runs reuse
// it. Without node, or without npm when the packages are not installed yet,
// or when npm install fails (no network, say), Setup says why the test must
// be skipped, except under CI=true, where it must fail: CI must not skip the
// independent readers silently.
package npmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Install describes pinned npm packages and where they are installed.
type Install struct {
	// Dir is the install directory below os.UserCacheDir()/convbatch,
	// slash-separated, naming the versions (e.g. "duckdb-node/1.5.6-r.1").
	Dir string
	// Packages are npm package specs with exact versions ("name@1.2.3").
	Packages []string
	// Marker is the file written into a complete install; it holds the
	// packages, space-separated, and a newline.
	Marker string
	// Check, when set, verifies a fresh install in dir before it is
	// published; node is the path of the node binary.
	Check func(node, dir string) error
}

// Env is the result of Setup: where node and the packages are, or why
// tests cannot use them.
type Env struct {
	// Node is the node binary; Dir the install directory (its
	// node_modules holds the packages).
	Node, Dir string
	// Skip says why tests must be skipped; Fail why they must fail.
	Skip, Fail string
}

// Setup finds node and the installed packages, installing them when needed.
func (in Install) Setup() Env {
	e := in.setup()
	if e.Skip != "" && InCI() {
		e.Fail, e.Skip = e.Skip+" (CI=true makes this a failure)", ""
	}
	return e
}

func (in Install) setup() Env {
	var e Env
	node, err := exec.LookPath("node")
	if err != nil {
		e.Skip = "node (Node.js) is not installed or not in PATH; the check needs node and npm"
		return e
	}
	e.Node = node
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	e.Dir = filepath.Join(cache, "convbatch", filepath.FromSlash(in.Dir))
	if in.installed(e.Dir) {
		return e
	}
	pkgs := strings.Join(in.Packages, " ")
	npm, err := exec.LookPath("npm")
	if err != nil {
		e.Skip = fmt.Sprintf("npm is not installed or not in PATH, and %s is not in %s; the check needs node and npm", pkgs, e.Dir)
		return e
	}
	if err := in.install(node, npm, e.Dir); err != nil {
		e.Skip = fmt.Sprintf("installing %s with npm failed: %v", pkgs, err)
	}
	return e
}

// InCI reports whether the CI environment variable says true.
func InCI() bool {
	v, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && v
}

func (in Install) stamp() string { return strings.Join(in.Packages, " ") + "\n" }

func (in Install) installed(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, in.Marker))
	return err == nil && strings.TrimSpace(string(b)) == strings.TrimSpace(in.stamp())
}

// install runs npm install in a fresh temporary directory beside dir, runs
// the check in it, and renames it to dir. When another process got there
// first, its install is used.
func (in Install) install(node, npm, dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	pkg := `{"name": "convbatch-npmtest", "private": true, "description": "installed by internal/testkit/npmtest"}` + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(pkg), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--loglevel=error"}, in.Packages...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm install: %w: %s", err, Tail(out, 2000))
	}
	if in.Check != nil {
		if err := in.Check(node, tmp); err != nil {
			return fmt.Errorf("the installed packages fail their check: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, in.Marker), []byte(in.stamp()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if in.installed(dir) {
			return nil // another process installed it meanwhile
		}
		// A stale, incomplete directory: replace it.
		if rerr := os.RemoveAll(dir); rerr != nil {
			return fmt.Errorf("replacing %s: %w", dir, rerr)
		}
		if err := os.Rename(tmp, dir); err != nil && !in.installed(dir) {
			return err
		}
	}
	return nil
}

// Tail returns the last n bytes of b's trimmed text, for error messages.
func Tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// Script locates rel (a slash-separated path such as
// "testdata/duckdb/query.mjs") at the module root: beside this source
// file's module root, else above the working directory.
func Script(rel string) (string, error) {
	rel = filepath.FromSlash(rel)
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		p := filepath.Join(filepath.Dir(file), "..", "..", "..", rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New(filepath.ToSlash(rel) + " not found above the working directory")
		}
		dir = up
	}
}

// SetupScript is Setup for a harness that runs the script at rel (relative
// to the module root) with the packages: it returns the Env and the
// script's path; a missing script is a failure, not a skip.
func (in Install) SetupScript(rel string) (Env, string) {
	script, err := Script(rel)
	if err != nil {
		return Env{Fail: err.Error()}, ""
	}
	return in.Setup(), script
}

// Int reads an integer value of a result that JSON decoded with UseNumber
// (a json.Number, or a decimal string, as engines write 64-bit integers).
func Int(v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an int64: %w", s, err)
	}
	return n, nil
}
