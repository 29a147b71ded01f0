package parquetout

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Application is the name written first in every part's created_by.
const Application = "convbatch"

// CreatedBy returns the created_by of the parts a given version of
// convbatch writes: "convbatch version VERSION (build REVISION)", the form
// parquet-java's VersionParser parses. Without it parquet-java (Spark,
// Hive) distrusts the min/max statistics of string columns (PARQUET-251)
// and skips no row group on them. A leading "v" is dropped from version
// ("0.0.0-unknown" when empty), so that it parses as a semantic version;
// REVISION is the VCS revision the binary was built from, with "-dirty"
// for uncommitted changes, or "unknown" (go test and go run record none).
func CreatedBy(version string) string {
	version = strings.TrimPrefix(strings.TrimSpace(version), "v")
	if version == "" {
		version = "0.0.0-unknown"
	}
	return fmt.Sprintf("%s version %s (build %s)", Application, token(version), token(buildRevision()))
}

// buildRevision is the VCS revision of the running binary, or "unknown".
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// token makes s one token of created_by: no space or parenthesis, which
// would end the version or the build early.
func token(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '(' || r == ')' || r <= ' ' {
			return '_'
		}
		return r
	}, s)
}
