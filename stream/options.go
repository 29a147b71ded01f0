package stream

import (
	"context"
	"errors"
	"fmt"
)

// Defaults for the Reader's limits.
const (
	// DefaultMaxDocBytes is the size cap of one line (64 MiB).
	DefaultMaxDocBytes = 64 << 20
	// DefaultZstdMaxWindow is the largest zstd window accepted (128 MiB, as
	// the zstd command's own default limit); archives made with
	// `zstd --long=31` need 2 GiB.
	DefaultZstdMaxWindow = 128 << 20
	// MaxZstdWindow is the largest window the flag may raise the cap to.
	MaxZstdWindow = 2 << 30
	// DefaultBatchBytes is the buffer size a batch aims for.
	DefaultBatchBytes = 4 << 20
	// DefaultBatchRecords caps the records in one batch. A batch's
	// results are read again by the writer once the whole batch is
	// processed; at 4096 tiny documents a batch, its records, results
	// (504 bytes each) and rows were some 3.5 MiB, past a core's L2, and
	// the writer found them cold. At 1024, extract of 3M tiny documents
	// took 6% less time (4.70 -> 4.41 s, 5 interleaved runs) and run
	// the same; archives of large documents fill DefaultBatchBytes first.
	DefaultBatchRecords = 1024
)

type options struct {
	maxDocBytes   int64
	strict        bool
	zstdMaxWindow uint64
	zstdWorkers   int
	batchBytes    int
	batchRecords  int
	spool         *Spool
	keepBytes     int64 // 0: maxDocBytes
	counter       func(n int)
	ctx           context.Context
	damaged       []Range
	shard         *shard // WithShard; nil: the whole input
}

func defaultOptions() options {
	return options{
		maxDocBytes:   DefaultMaxDocBytes,
		zstdMaxWindow: DefaultZstdMaxWindow,
		zstdWorkers:   1,
		batchBytes:    DefaultBatchBytes,
		batchRecords:  DefaultBatchRecords,
	}
}

// Option configures a Reader.
type Option func(*options) error

// WithMaxDocBytes sets the size cap of one line; longer lines are rejects
// with reason too-large.
func WithMaxDocBytes(n int64) Option {
	return func(o *options) error {
		if n < 1 || n > 1<<31-1 {
			return fmt.Errorf("max document bytes %d: must be between 1 and 2 GiB", n)
		}
		o.maxDocBytes = n
		return nil
	}
}

// WithStrict refuses a leading byte-order mark instead of dropping it.
func WithStrict(strict bool) Option {
	return func(o *options) error { o.strict = strict; return nil }
}

// WithZstdMaxWindow caps the zstd window (and so the decoder's memory).
func WithZstdMaxWindow(n uint64) Option {
	return func(o *options) error {
		if n < 1<<10 || n > MaxZstdWindow {
			return fmt.Errorf("zstd window %d: must be between 1 KiB and 2 GiB", n)
		}
		o.zstdMaxWindow = n
		return nil
	}
}

// WithZstdWorkers sets how many blocks the zstd decoder decodes ahead in
// background goroutines (1: none).
func WithZstdWorkers(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return errors.New("zstd workers must be at least 1")
		}
		o.zstdWorkers = n
		return nil
	}
}

// WithBatch sets the target bytes and the most records of one batch.
func WithBatch(bytes, records int) Option {
	return func(o *options) error {
		if bytes < 1<<10 || records < 1 {
			return fmt.Errorf("batch of %d bytes, %d records: too small", bytes, records)
		}
		o.batchBytes, o.batchRecords = bytes, records
		return nil
	}
}

// WithSpool keeps the bytes of too-large lines in s; without a spool they
// are counted and dropped.
func WithSpool(s *Spool) Option {
	return func(o *options) error { o.spool = s; return nil }
}

// WithRejectKeepBytes caps how many bytes of one too-large line are kept
// in the spool (its first n); the rest is only counted, so that a line of
// gigabytes (a zstd bomb, /dev/zero) costs at most n bytes of disk. The
// default is the size cap of one line (WithMaxDocBytes).
func WithRejectKeepBytes(n int64) Option {
	return func(o *options) error {
		if n < 1 || n > 1<<31-1 {
			return fmt.Errorf("reject keep bytes %d: must be between 1 and 2 GiB", n)
		}
		o.keepBytes = n
		return nil
	}
}

// WithContext makes the Reader give up when ctx ends, even inside a line
// that never ends (/dev/zero): ReadBatch then returns ctx's cause, and
// keeps returning it.
func WithContext(ctx context.Context) Option {
	return func(o *options) error {
		if ctx == nil {
			return errors.New("nil context")
		}
		o.ctx = ctx
		return nil
	}
}

// WithByteCounter calls f with the number of bytes read from the underlying
// (possibly compressed) input as they are read, for progress reports.
func WithByteCounter(f func(n int)) Option {
	return func(o *options) error { o.counter = f; return nil }
}
