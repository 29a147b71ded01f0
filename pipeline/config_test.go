package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

func TestConfigRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		field string // named in the error
	}{
		{"negative workers", Config{Workers: -1}, "Workers -1"},
		{"negative max doc bytes", Config{MaxDocBytes: -1}, "MaxDocBytes -1"},
		{"max doc bytes over 2 GiB", Config{MaxDocBytes: 1 << 31}, "MaxDocBytes 2147483648"},
		{"negative max depth", Config{MaxDepth: -3}, "MaxDepth -3"},
		{"zstd window under 1 KiB", Config{ZstdMaxWindow: 1}, "ZstdMaxWindow 1"},
		{"zstd window over 2 GiB", Config{ZstdMaxWindow: stream.MaxZstdWindow + 1}, "ZstdMaxWindow 2147483649"},
		{"negative zstd level", Config{ZstdLevel: -1}, "ZstdLevel -1"},
		{"zstd level past the best", Config{ZstdLevel: zstd.SpeedBestCompression + 1}, "ZstdLevel 5"},
		{"negative batch bytes", Config{BatchBytes: -1}, "BatchBytes -1"},
		{"batch under 1 KiB", Config{BatchBytes: 1023}, "BatchBytes 1023"},
		{"negative memory limit", Config{MemoryLimit: -1}, "MemoryLimit -1"},
		{"unknown archive format", Config{Archive: "gzip"}, `Archive "gzip"`},
		{"unknown table", Config{Tables: []string{tabledef.Usage, "costs"}}, `Tables[1] "costs"`},
		{"table named twice", Config{Tables: []string{tabledef.Usage, tabledef.Usage}}, `Tables[1] "usage"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cfg
			err := tc.cfg.validate()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "Config."+tc.field+":") {
				t.Fatalf("validate() = %v, want ErrConfig naming %s", err, tc.field)
			}
			if tc.cfg.Workers != before.Workers || tc.cfg.Registry != nil || tc.cfg.Progress != nil {
				t.Error("a refused Config was given defaults")
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	var c Config
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if c.Workers != runtime.NumCPU() || c.MaxDocBytes != stream.DefaultMaxDocBytes || c.MaxDepth != jsonscan.DefaultMaxDepth ||
		c.ZstdMaxWindow != stream.DefaultZstdMaxWindow || c.ZstdLevel != zstd.SpeedDefault || c.Archive != sink.ArchiveZstd ||
		c.BatchBytes != stream.DefaultBatchBytes || c.Registry == nil || c.Progress == nil || c.Stdin != os.Stdin {
		t.Fatalf("defaults: %+v", c)
	}
	if c.MemoryLimit != 0 || c.Strict || c.Tables != nil || c.Keyring != nil {
		t.Fatalf("settings without a default changed: %+v", c)
	}

	// Values given are kept, the smallest and largest accepted included.
	reg, progress := c.Registry, &Progress{}
	set := Config{
		Workers: 3, MaxDocBytes: 1<<31 - 1, MaxDepth: 1, ZstdMaxWindow: 1 << 10, ZstdLevel: zstd.SpeedBestCompression,
		Archive: sink.ArchiveNone, BatchBytes: 1 << 10, Registry: reg, Progress: progress, MemoryLimit: 1,
		Tables: append([]string{}, tabledef.Names...),
	}
	want := set
	if err := set.validate(); err != nil {
		t.Fatal(err)
	}
	if set.Workers != want.Workers || set.MaxDocBytes != want.MaxDocBytes || set.MaxDepth != want.MaxDepth ||
		set.ZstdMaxWindow != want.ZstdMaxWindow || set.ZstdLevel != want.ZstdLevel || set.Archive != want.Archive ||
		set.BatchBytes != want.BatchBytes || set.Registry != reg || set.Progress != progress || set.MemoryLimit != 1 {
		t.Fatalf("validate changed given values: %+v", set)
	}
}

// TestBadConfigCreatesNothing: Run refuses a bad Config before it reads an
// input or creates the output directory.
func TestBadConfigCreatesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), Config{Inputs: stdinInput(), Stdin: noRead{t}, OutDir: out, Workers: -2})
	if !errors.Is(err, ErrFatal) || !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output directory created for a refused Config")
	}
}
