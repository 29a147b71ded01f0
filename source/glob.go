package source

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Glob returns the objects that the URL pattern names, in lexical (byte)
// order of key, as a directory's entries are:
//
//   - A key with meta characters is a pattern, matched per '/'-separated
//     segment as Match does: '*' and '?' never match a '/', and a segment
//     that is exactly "**" matches any number of segments (none included)
//     that do not begin with '.'. One that matches nothing returns no
//     objects and no error. The listing is of every key under the
//     pattern's literal prefix, so a meta character early in the key
//     lists more.
//   - An s3 or gs URL whose key is empty (the bucket's root) or ends in
//     '/' is a directory: every object below it (IsDir). So is a key
//     without meta characters that names no object but is followed by '/'
//     in some key (s3://b/2026/11 when s3://b/2026/11/a.jsonl exists).
//   - Any other key is one object, stat'ed (ErrNotFound if it is absent
//     and no directory).
//
// Keys ending in '/' (folder markers) are never returned. Each request is
// bounded by the Client's stall timeout and retried as a read is.
func (c *Client) Glob(ctx context.Context, pattern string) ([]Info, error) {
	loc, err := Parse(pattern)
	if err != nil {
		return nil, err
	}
	if loc.IsDir() {
		return c.listDir(ctx, loc, loc.Key)
	}
	if !hasMeta(loc.Key) {
		info, err := c.Stat(ctx, loc)
		if err == nil {
			return []Info{info}, nil
		}
		if errors.Is(err, ErrNotFound) && (loc.Scheme == SchemeS3 || loc.Scheme == SchemeGS) {
			// Perhaps a directory named without its trailing '/'. A
			// listing that fails (credentials that may read but not list)
			// leaves the stat's answer.
			if infos, lerr := c.listDir(ctx, loc, loc.Key+"/"); lerr == nil && len(infos) > 0 {
				return infos, nil
			}
		}
		return nil, err
	}
	if loc.Scheme == SchemeHTTP || loc.Scheme == SchemeHTTPS {
		return nil, &Error{Op: "list", URL: loc.String(), Kind: ErrUnsupported, Err: fmt.Errorf("a web server has no listing to glob")}
	}
	if err := checkPattern(loc.Key); err != nil {
		return nil, fmt.Errorf("source: glob %s: %w", loc, err)
	}
	prefix := loc.Key[:strings.IndexAny(loc.Key, `*?[\`)]
	return c.list(ctx, loc, prefix, func(key string) bool {
		ok, _ := Match(loc.Key, key)
		return ok
	})
}

// listDir returns every object whose key begins with prefix, in key
// order, but folder markers.
func (c *Client) listDir(ctx context.Context, loc Location, prefix string) ([]Info, error) {
	return c.list(ctx, loc, prefix, func(string) bool { return true })
}

// list returns the objects under prefix that keep accepts, but folder
// markers, in key order. Each listed object counts as progress for the
// stall timeout, so a long listing that keeps answering is not cut.
func (c *Client) list(ctx context.Context, loc Location, prefix string, keep func(key string) bool) ([]Info, error) {
	b, err := c.backend(ctx, loc)
	if err != nil {
		return nil, err
	}
	var out []Info
	err = c.retry(ctx, "list", loc, func(ctx context.Context, alive func()) error {
		out = out[:0]
		return b.list(ctx, loc, prefix, func(info Info) {
			alive()
			if strings.HasSuffix(info.Location.Key, "/") {
				return
			}
			if keep(info.Location.Key) {
				out = append(out, info)
			}
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Location.Key < out[j].Location.Key })
	return out, nil
}

// Match reports whether name matches pattern, both '/'-separated paths:
// each segment of pattern matches one segment of name as path.Match
// says, except a segment that is exactly "**", which matches any number
// of segments of name, none included, that do not begin with '.' (as a
// directory walk passes over dot-directories). Elsewhere "**" is '*'.
// The only error is path.ErrBadPattern. Globs over listings (Glob) and
// over local directories (package stream) use it alike.
func Match(pattern, name string) (bool, error) {
	if err := checkPattern(pattern); err != nil {
		return false, err
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/")), nil
}

// checkPattern returns path.ErrBadPattern if a segment of pattern is
// malformed.
func checkPattern(pattern string) error {
	for _, seg := range strings.Split(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// matchSegments matches name's segments against pat's.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
				if i < len(name) && strings.HasPrefix(name[i], ".") {
					return false
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
