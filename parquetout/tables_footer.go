package parquetout

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/metadata"
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

// parquetMagic ends a Parquet file, after the footer's length.
var parquetMagic = []byte("PAR1")

// omitDistinctCounts rewrites the footer of the closed Parquet file f
// without the distinct_count of the column chunks' statistics.
//
// arrow-go v17 sets distinct_count = 0 on every column chunk
// (apache/arrow-go#806, fixed in v18 by #807): its statistics start with
// a distinct count they never compute. The field is optional and unknown
// here, so it is omitted rather than claimed; a reader seeing 0 may take
// the column for empty. The footer is read back, the fields cleared and
// the footer written again in place (it only shrinks); the data pages are
// untouched. The first data page header of each chunk still carries the
// 0, which the writer gives no way to avoid; readers plan from the footer.
func omitDistinctCounts(f *os.File) error {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	var tail [8]byte
	if end < int64(len(tail)) {
		return errors.New("parquet footer: file too short")
	}
	if _, err := f.ReadAt(tail[:], end-8); err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	if !bytes.Equal(tail[4:], parquetMagic) {
		return errors.New("parquet footer: no PAR1 magic at the end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	start := end - 8 - n
	if start < int64(len(parquetMagic)) {
		return fmt.Errorf("parquet footer: length %d exceeds the file", n)
	}
	raw := make([]byte, n)
	if _, err := f.ReadAt(raw, start); err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	md, err := metadata.NewFileMetaData(raw, nil)
	if err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	changed := false
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			if cc.MetaData != nil && cc.MetaData.Statistics != nil && cc.MetaData.Statistics.DistinctCount != nil {
				cc.MetaData.Statistics.DistinctCount = nil
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	var buf bytes.Buffer
	m, err := md.WriteTo(&buf, nil)
	if err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(m)))
	buf.Write(parquetMagic)
	if err := f.Truncate(start); err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	if _, err := f.WriteAt(buf.Bytes(), start); err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	return nil
}
