package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// TestRunConfigGCPercent: run's collector target is DefaultGCPercent
// unless GOGC is set, which then wins (as GOMEMLIMIT does over
// --memory-limit).
func TestRunConfigGCPercent(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gogc string
		want int
	}{
		{"", DefaultGCPercent},
		{"100", 0},
		{"off", 0},
	} {
		t.Setenv("GOGC", tc.gogc)
		var f runFlags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.registerOutputs(fs)
		f.register(fs, true)
		if err := fs.Parse([]string{"-o", filepath.Join(dir, "out"), in}); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.config(&env{ctx: context.Background(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, fs.Args())
		if err != nil {
			t.Fatalf("GOGC=%q: %v", tc.gogc, err)
		}
		if cfg.GCPercent != tc.want {
			t.Errorf("GOGC=%q: GCPercent %d, want %d", tc.gogc, cfg.GCPercent, tc.want)
		}
	}
}
