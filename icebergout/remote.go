package icebergout

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	icebergio "github.com/apache/iceberg-go/io"
)

// An output directory that is not on the local file system (an object
// store: Snapshot.Base and Snapshot.IO) is written the same way as a
// local one: every file at its path relative to OUT in the sink.Txn; only
// the locations are URLs under Base, the table's earlier metadata is read
// through IO, and a data file is described by the footer its writer read
// (ReadFooter) rather than by opening it.

// BaseLocation returns the location of the file or directory rel
// (slash-separated, relative to OUT) of the output directory at the
// location base (a URL, such as s3://bucket/out).
func BaseLocation(base, rel string) string {
	base = strings.TrimSuffix(base, "/")
	if rel == "" {
		return base
	}
	return base + "/" + rel
}

// VersionAt returns the latest metadata version of the table whose
// directory is at the location dir, listed through fsys (which must be an
// icebergio.ListableIO): the highest n of its metadata/v<n>.metadata.json,
// or 0 when it has none.
func VersionAt(fsys icebergio.IO, dir string) (int, error) {
	lister, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return 0, fmt.Errorf("iceberg: cannot list %s: its file system lists no directory", dir)
	}
	n := 0
	err := lister.WalkDir(BaseLocation(dir, MetadataDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d != nil && d.IsDir() {
			return nil
		}
		if m := metadataName.FindStringSubmatch(path.Base(p)); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil && v > n {
				n = v
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("iceberg: %w", err)
	}
	return n, nil
}

// parquetMagic ends a Parquet file whose footer is not encrypted.
var parquetMagic = []byte("PAR1")

// ReadFooter returns the footer of the Parquet file at the local path p
// (its serialized FileMetaData, as DataFile.Footer carries it) and the
// file's size, for a data file that Stage describes on another machine
// than the one that wrote it.
func ReadFooter(p string) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, fmt.Errorf("iceberg: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("iceberg: %w", err)
	}
	size := st.Size()
	var tail [8]byte
	if size < int64(len(tail))+int64(len(parquetMagic)) {
		return nil, 0, fmt.Errorf("iceberg: %s: too small for a Parquet file (%d bytes)", p, size)
	}
	if _, err := f.ReadAt(tail[:], size-int64(len(tail))); err != nil {
		return nil, 0, fmt.Errorf("iceberg: %s: %w", p, err)
	}
	if !bytes.Equal(tail[4:], parquetMagic) {
		return nil, 0, fmt.Errorf("iceberg: %s: not a Parquet file with a plain footer", p)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n+int64(len(tail)) > size {
		return nil, 0, fmt.Errorf("iceberg: %s: footer of %d bytes in a file of %d", p, n, size)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-int64(len(tail))-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("iceberg: %s: %w", p, err)
	}
	return b, size, nil
}

// footer returns the Parquet metadata and size of the data file f: read
// from its local copy, or parsed from the footer it carries.
func footer(f DataFile) (*metadata.FileMetaData, int64, error) {
	if f.Local == "" {
		if len(f.Footer) == 0 {
			return nil, 0, errors.New("neither a local copy nor a footer")
		}
		meta, err := metadata.NewFileMetaData(f.Footer, nil)
		if err != nil {
			return nil, 0, err
		}
		return meta, f.Size, nil
	}
	st, err := os.Stat(f.Local)
	if err != nil {
		return nil, 0, err
	}
	rdr, err := file.OpenParquetFile(f.Local, false)
	if err != nil {
		return nil, 0, err
	}
	defer rdr.Close()
	return rdr.MetaData(), st.Size(), nil
}
