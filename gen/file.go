package gen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// encoders keeps the zstd encoders of files written, for the next ones: a
// new encoder allocates and clears its 16 MiB history on its first block,
// which was a fifth of the CPU of writing a set of small files (the
// tests' nights). The same options, so the same bytes.
var encoders = sync.Pool{New: func() any {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err) // no option given: cannot fail
	}
	return enc
}}

// getEncoder returns an encoder writing to w.
func getEncoder(w *bufio.Writer) *zstd.Encoder {
	enc := encoders.Get().(*zstd.Encoder)
	enc.Reset(w)
	return enc
}

// putEncoder gives enc, closed or not, back to the pool, letting go of
// its writer.
func putEncoder(enc *zstd.Encoder) {
	enc.Reset(nil)
	encoders.Put(enc)
}

// WriteFile writes the archive to path (".jsonl" plain, ".jsonl.zst"
// compressed with zstd at the default level), the expected counts to
// path+".expect.json" (indented JSON, trailing newline) and, unless
// opts.NoReceipts, the keyring to path+".keys.json" (see KeysJSON). Each file is
// written to a temporary file in the same directory and renamed into place.
func WriteFile(path string, opts Options) (*Expect, error) {
	exp, _, err := writeFile(path, opts)
	return exp, err
}

// writeFile is WriteFile; for a file of a set (opts.cross) it also returns
// the receipts for the set's expectations, and writes no keyring.
func writeFile(path string, opts Options) (*Expect, []crossReceipt, error) {
	var compress bool
	switch {
	case strings.HasSuffix(path, ".jsonl.zst"):
		compress = true
	case strings.HasSuffix(path, ".jsonl"):
	default:
		return nil, nil, fmt.Errorf("gen: %s: name must end in .jsonl or .jsonl.zst", path)
	}
	var exp *Expect
	var rcpts []crossReceipt
	err := writeAtomic(path, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		var err error
		if compress {
			enc := getEncoder(bw)
			exp, rcpts, err = generate(enc, opts)
			if cerr := enc.Close(); err == nil {
				err = cerr
			}
			putEncoder(enc)
		} else {
			exp, rcpts, err = generate(bw, opts)
		}
		if err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return nil, nil, err
	}
	data, err := json.MarshalIndent(exp, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	data = append(data, '\n')
	err = writeAtomic(path+".expect.json", func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if !opts.NoReceipts && opts.cross == nil {
		keys, err := KeysJSON(opts.Seed)
		if err != nil {
			return nil, nil, err
		}
		err = writeAtomic(path+".keys.json", func(f *os.File) error {
			_, err := f.Write(keys)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return exp, rcpts, nil
}

// writeAtomic writes path through a temporary file in the same directory,
// renamed into place only when fill and Close succeed.
func writeAtomic(path string, fill func(*os.File) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
