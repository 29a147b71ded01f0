package objout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
)

// IO returns the icebergio.IO that reads the files of OUT the scratch
// OUT does not hold (a catalog's metadata, an earlier commit's files
// when the run replaces OUT) by their locations, and writes a catalog's
// metadata files: the objects of OUT's bucket, through its Store.
func (t *Target) IO() icebergio.IO { return &storeIO{t: t} }

// storeIO is an icebergio.WriteFileIO over a Target's bucket: a location
// is a URL of an object in it.
type storeIO struct{ t *Target }

var _ icebergio.WriteFileIO = (*storeIO)(nil)

// maxIcebergObject bounds an object read whole through storeIO: Iceberg
// metadata and manifests, never data.
const maxIcebergObject = 256 << 20

// key returns the key of the object at location, which must be in t's
// bucket.
func (s *storeIO) key(location string) (string, error) {
	k, ok := strings.CutPrefix(location, bucketURL(s.t)+"/")
	if !ok || k == "" {
		return "", fmt.Errorf("iceberg: %s is not in the bucket of %s", location, s.t.URL)
	}
	return k, nil
}

// Open reads the object at location whole.
func (s *storeIO) Open(location string) (icebergio.File, error) {
	b, err := s.ReadFile(location)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), name: path.Base(location), size: int64(len(b))}, nil
}

// ReadFile reads the object at location.
func (s *storeIO) ReadFile(location string) ([]byte, error) {
	k, err := s.key(location)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: location, Err: err}
	}
	rc, err := s.t.Store.Get(context.Background(), k)
	if errors.Is(err, ErrNotFound) {
		return nil, &fs.PathError{Op: "open", Path: location, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: location, Err: err}
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxIcebergObject+1))
	if err == nil && len(b) > maxIcebergObject {
		err = fmt.Errorf("larger than %d bytes", maxIcebergObject)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: location, Err: err}
	}
	return b, nil
}

// Create returns a writer whose Close puts the object at location,
// put-if-absent (a catalog names each metadata file once).
func (s *storeIO) Create(location string) (icebergio.FileWriter, error) {
	return &objectWriter{io: s, location: location}, nil
}

// WriteFile puts b at location, put-if-absent.
func (s *storeIO) WriteFile(location string, b []byte) error {
	k, err := s.key(location)
	if err != nil {
		return &fs.PathError{Op: "write", Path: location, Err: err}
	}
	err = s.t.Store.Put(context.Background(), k, bytes.NewReader(b), int64(len(b)), true)
	var r *retried
	if err != nil && !errors.As(err, &r) {
		return &fs.PathError{Op: "write", Path: location, Err: err}
	}
	return nil
}

// Remove removes the object at location.
func (s *storeIO) Remove(location string) error {
	k, err := s.key(location)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: location, Err: err}
	}
	return s.t.Store.Delete(context.Background(), k)
}

// objectWriter buffers an object until Close puts it.
type objectWriter struct {
	bytes.Buffer
	io       *storeIO
	location string
}

// Close puts the object.
func (w *objectWriter) Close() error { return w.io.WriteFile(w.location, w.Bytes()) }

// memFile is an object read whole, as an icebergio.File.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (m *memFile) Close() error { return nil }

func (m *memFile) Stat() (fs.FileInfo, error) { return fileInfo{m.name, m.size}, nil }

type fileInfo struct {
	name string
	size int64
}

func (i fileInfo) Name() string     { return i.name }
func (i fileInfo) Size() int64      { return i.size }
func (fileInfo) Mode() fs.FileMode  { return 0o444 }
func (fileInfo) ModTime() time.Time { return time.Time{} }
func (fileInfo) IsDir() bool        { return false }
func (fileInfo) Sys() any           { return nil }

// The schemes iceberg-go's catalogs read and write an object-store OUT's
// metadata through (icebergio.LoadFS): a location in the bucket of a
// Target that RegisterIO registered goes through that Target's Store.
var (
	registerOnce sync.Once
	ioMu         sync.Mutex
	ioTargets    = map[string]*Target{} // "s3://bucket" -> Target
)

// RegisterIO makes iceberg-go's file IO for t's scheme (s3 or gs) read
// and write the objects of t's bucket through t's Store, with its
// credentials and retries: an Iceberg catalog (package
// icebergout/sqlcatalog) then reads and writes the metadata of OUT's
// tables. A location in a bucket no registered Target holds is refused.
func RegisterIO(t *Target) {
	registerOnce.Do(func() {
		for _, scheme := range []string{"s3", "gs"} {
			icebergio.Register(scheme, func(_ context.Context, u *url.URL, _ map[string]string) (icebergio.IO, error) {
				ioMu.Lock()
				defer ioMu.Unlock()
				if t := ioTargets[u.Scheme+"://"+u.Host]; t != nil {
					return t.IO(), nil
				}
				return nil, fmt.Errorf("iceberg: no OUT of this run is in %s://%s", u.Scheme, u.Host)
			})
		}
	})
	ioMu.Lock()
	defer ioMu.Unlock()
	ioTargets[bucketURL(t)] = t
}

// bucketURL is "scheme://bucket" of t.
func bucketURL(t *Target) string {
	return strings.TrimSuffix(t.URL, "/"+strings.TrimSuffix(t.Prefix, "/"))
}
