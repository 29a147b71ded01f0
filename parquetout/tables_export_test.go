package parquetout

import (
	"testing"

	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/verify"
)

// FinishTables adds the receipts to tables, closes them and commits txn,
// failing t at the first error: the end every test that writes tables
// shares.
func FinishTables(t testing.TB, txn *sink.Txn, tables *Tables, receipts []verify.ReceiptResult) {
	t.Helper()
	if err := tables.AddReceipts(receipts); err != nil {
		t.Fatal(err)
	}
	if err := tables.Close(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
}

// Spilled returns the batches the named table spilled to its spill file
// (0 when it spilled none or is not partitioned).
func Spilled(t *Tables, name string) int {
	if p := t.parts[name]; p != nil {
		return p.spilled
	}
	return 0
}

// EncoderConfig is encoderConfig for the tests of package parquetout_test.
type EncoderConfig struct {
	// Serial encodes on the caller's goroutine.
	Serial bool
	// Depth is the encoders' queue length.
	Depth int
	// Before is called before each operation of an encoder.
	Before func(kind string) error
	// NoTiny writes every partition with the engine, however small (no
	// whole-file tinyparquet part).
	NoTiny bool
}

func (c EncoderConfig) config() encoderConfig {
	return encoderConfig{serial: c.Serial, depth: c.Depth, before: c.Before, noTiny: c.NoTiny}
}

// NewTablesWith is NewTables encoding as c says, with NewTables' engine.
func NewTablesWith(txn *sink.Txn, names []string, opts TableOptions, c EncoderConfig) *Tables {
	enc, err := withEngine(c.config())
	if err != nil {
		panic(err)
	}
	return newTables(txn, names, opts, enc)
}

// SetDefaultEncoding makes NewTables encode as c says, for runs of the
// pipeline, until the returned function restores the default.
func SetDefaultEncoding(c EncoderConfig) (restore func()) {
	old := defaultEncoderConfig
	defaultEncoderConfig = c.config()
	return func() { defaultEncoderConfig = old }
}
