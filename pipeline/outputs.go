package pipeline

import (
	"encoding/json"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/tabledef"
)

// openRun opens the run into Config.OutDir (package outdir): what OUT is
// told of the run is the configuration's part that decides what it
// writes.
func (c *Config) openRun() (*outdir.Run, error) {
	key, err := json.Marshal(struct {
		Version                    string
		ZstdLevel                  int
		MaxDocBytes, ZstdMaxWindow int64
		MaxDepth                   int
		Strict                     bool
	}{Version, int(c.ZstdLevel), c.MaxDocBytes, int64(c.ZstdMaxWindow), c.MaxDepth, c.Strict})
	if err != nil {
		return nil, err
	}
	keyring := ""
	if c.Keyring != nil {
		keyring = c.Keyring.Digest()
	}
	return outdir.OpenRun(outdir.Options{
		Root: c.OutDir, Inputs: c.Inputs,
		Incremental: c.Incremental, ReplaceChanged: c.ReplaceChanged, Checksum: c.Checksum, Source: c.Source,
		Handlers: c.Registry.Names(), Tables: c.Tables, Archive: c.Archive, TableWork: parquetout.Work(c.tableOptions()),
		TableFormat: c.TableFormat, Catalog: c.Catalog, IcebergPlace: c.IcebergPlace, KeyringSHA256: keyring, Key: string(key),
		CheckpointKey: c.CheckpointKey, OnStaged: c.OnStaged,
	})
}

// TableWork is the table work outdir is handed for tables partitioned
// so ("" for none), as `convbatch audit` and convbeam's commit hand it
// (outdir.OpenAudit, outdir.Options.TableWork): package parquetout's,
// with convbatch's Version.
func TableWork(partitionBy tabledef.Partitioning) outdir.TableWork {
	return parquetout.Work{Version: Version, PartitionBy: partitionBy}
}

// tableOptions are Config.TableOptions with the version set.
func (c *Config) tableOptions() parquetout.TableOptions {
	opts := c.TableOptions
	if opts.Version == "" {
		opts.Version = Version
	}
	return opts
}

// stage is the per-input stage of the run (Stage).
func (c *Config) stage() *Stage {
	return &Stage{MaxDocBytes: c.MaxDocBytes, ZstdMaxWindow: c.ZstdMaxWindow, Strict: c.Strict, BatchBytes: c.BatchBytes,
		// The tables written per document; those of receipts
		// (receipts, receipt_statements) are written when the run
		// resolves them.
		Tables: tabledef.Select(c.Tables, tabledef.FromDocument), TableOptions: c.tableOptions(), Archive: c.Archive, ZstdLevel: c.ZstdLevel, ZstdWorkers: c.Workers}
}
