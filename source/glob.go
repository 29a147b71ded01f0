package source

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Glob returns the objects whose keys match pattern, in lexical (byte)
// order of key, as a directory's entries are. The pattern is a URL whose
// key uses path.Match syntax, matched per '/'-separated segment: '*' and
// '?' never match a '/'. A pattern without meta characters is one object,
// stat'ed (ErrNotFound if it is absent); a pattern that matches nothing
// returns no objects and no error. Keys ending in '/' (folder markers) are
// never matched. The listing is of every key under the pattern's literal
// prefix, so a meta character early in the key lists more.
func (c *Client) Glob(ctx context.Context, pattern string) ([]Info, error) {
	loc, err := Parse(pattern)
	if err != nil {
		return nil, err
	}
	if !hasMeta(loc.Key) {
		info, err := c.Stat(ctx, loc)
		if err != nil {
			return nil, err
		}
		return []Info{info}, nil
	}
	if loc.Scheme == SchemeHTTP || loc.Scheme == SchemeHTTPS {
		return nil, &Error{Op: "list", URL: loc.String(), Kind: ErrUnsupported, Err: fmt.Errorf("a web server has no listing to glob")}
	}
	if _, err := path.Match(loc.Key, ""); err != nil {
		return nil, fmt.Errorf("source: glob %s: %w", loc, err)
	}
	b, err := c.backend(ctx, loc)
	if err != nil {
		return nil, err
	}
	prefix := loc.Key[:strings.IndexAny(loc.Key, `*?[\`)]
	var out []Info
	err = c.retry(ctx, "list", loc, func(ctx context.Context) error {
		out = out[:0]
		return b.list(ctx, loc, prefix, func(info Info) {
			if strings.HasSuffix(info.Location.Key, "/") {
				return
			}
			if ok, _ := path.Match(loc.Key, info.Location.Key); ok {
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
