package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"io/fs"
	"strings"

	"github.com/convbatch/convbatch/outdir"
	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// ErrChanged marks an incremental run refused because an input that OUT
// already holds has changed since (Config.ReplaceChanged allows it).
var ErrChanged = errors.New("input changed since it was committed")

// ChangedError names the inputs whose bytes changed since the run that
// committed them; it wraps ErrChanged.
type ChangedError struct {
	// Paths are the inputs, as named.
	Paths []string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%q and %d other input(s) changed since OUT committed them (--replace-changed retires their earlier outputs)", e.Paths[0], len(e.Paths)-1)
}

// Unwrap returns ErrChanged.
func (e *ChangedError) Unwrap() error { return ErrChanged }

// outDir is a run's output directory: its lock, committed state and
// staging, and what the run resumes from.
type outDir struct {
	dir   *outdir.Dir
	cfg   *Config
	run   int
	state *state
	// seals are the sealed segments a killed run left that this run takes
	// as finished, by input index.
	seals []*seal
	// already are the inputs an incremental run skips; replaced the
	// committed inputs it retires.
	already  []sink.CommittedInput
	replaced []*committedInput
	// record is what OUT's manifests promise (an incremental run's; nil
	// for a run that replaces OUT).
	record *outdir.Record
	// tableOptions are Config.TableOptions with the version set.
	tableOptions parquetout.TableOptions
}

// openOutDir opens Config.OutDir for the run (lock, recovery), loads its
// committed state, removes from cfg.Inputs the inputs an incremental run
// skips, numbers the run, and finds the sealed segments to resume from.
func openOutDir(cfg *Config) (o *outDir, err error) {
	d, err := outdir.Open(cfg.OutDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	o = &outDir{dir: d, cfg: cfg, run: 1, tableOptions: cfg.TableOptions}
	if o.tableOptions.Version == "" {
		o.tableOptions.Version = Version
	}
	if cfg.Incremental {
		rec, err := d.CheckRecord()
		if err != nil {
			return nil, err
		}
		o.record = rec
		if o.state, err = loadState(d, rec.LastRun); err != nil {
			return nil, err
		}
		o.run = o.state.lastRun + 1
		if err := o.sameSettings(); err != nil {
			return nil, err
		}
		if err := o.classify(); err != nil {
			return nil, err
		}
	} else {
		o.state = &state{byPath: map[string]*committedInput{}}
	}
	key, err := o.stagingKey()
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(d.Staging(), stagingRun)); err != nil || string(b) != key {
		if err := d.ClearStaging(); err != nil {
			return nil, err
		}
	}
	if err := outdir.WriteFileAtomic(filepath.Join(d.Staging(), stagingRun), []byte(key)); err != nil {
		return nil, fmt.Errorf("staging: %w", err)
	}
	o.seals = make([]*seal, len(cfg.Inputs))
	for idx, in := range cfg.Inputs {
		s, ok := readSeal(d.Staging(), idx)
		if !ok {
			continue
		}
		if fp, ok, err := statFingerprint(in.Path); err == nil && ok && fp.sameFile(s.Fingerprint) {
			o.seals[idx] = s
		}
	}
	return o, nil
}

// runSettings are what every run of an incremental series must share, so
// that its datasets and its documents' index records mean the same thing
// from run to run (the keyring may change: it only decides verdicts).
type runSettings struct {
	Handlers    []string                `json:"handlers"`
	Tables      []string                `json:"tables"`
	PartitionBy parquetout.Partitioning `json:"partition_by"`
	Archive     sink.ArchiveFormat      `json:"archive"`
}

func (o *outDir) settings() runSettings {
	s := runSettings{Handlers: o.cfg.Registry.Names(), Tables: o.cfg.Tables, PartitionBy: o.tableOptions.PartitionBy, Archive: o.cfg.Archive}
	if s.PartitionBy == "" {
		s.PartitionBy = parquetout.PartitionNone
	}
	if s.Tables == nil {
		s.Tables = []string{}
	}
	return s
}

// sameSettings refuses an incremental run whose settings differ from those
// of the runs OUT holds (its state's settings.json) with a *SettingsError.
func (o *outDir) sameSettings() error {
	b, err := os.ReadFile(o.dir.State(stateSettings))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	now, err := json.Marshal(o.settings())
	if err != nil {
		return err
	}
	if was := strings.TrimSpace(string(b)); was != string(now) {
		return &SettingsError{Was: was, Now: string(now)}
	}
	return nil
}

// ErrSettingsChanged marks an incremental run refused because OUT's runs
// used other settings.
var ErrSettingsChanged = errors.New("incremental run with other settings than OUT's runs")

// SettingsError is the refusal of an incremental run whose settings
// (command, tables, partitioning, archive format) differ from OUT's runs.
type SettingsError struct {
	// Was and Now are the settings, as JSON.
	Was, Now string
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("the runs in OUT used %s, this one %s: an incremental run must use the same command, tables, --partition-by and --archive (run without --incremental to replace OUT)", e.Was, e.Now)
}

// Unwrap returns ErrSettingsChanged.
func (e *SettingsError) Unwrap() error { return ErrSettingsChanged }

// classify sorts an incremental run's inputs: those OUT holds with the
// same fingerprint are skipped (their path, size and modification time
// match, or else their digest does; with Config.Checksum always their
// digest), and so is an input whose bytes OUT holds under another path
// that it keeps; those whose bytes changed are refused, or with
// ReplaceChanged retire their earlier outputs (and are then skipped too
// when their new bytes are held under another path); the rest are new.
// An input is read to decide only when OUT holds its path, or its size is
// that of a committed input (or with Checksum): same bytes, same size.
//
// It works in two passes, so that bytes count as held only under a path
// this run keeps: the first decides the inputs OUT holds under their own
// path, the second looks the others up by digest among the committed
// inputs that are not being replaced.
func (o *outDir) classify() error {
	type pending struct {
		in stream.Input
		fp Fingerprint
		c  *committedInput // the committed input at its path; nil if none
	}
	var keep []stream.Input
	var byDigest []pending
	var changed []string
	sizes := map[int64]bool{}
	for _, c := range o.state.inputs {
		if c.SHA256 != "" {
			sizes[c.Size] = true
		}
	}
	for _, in := range o.cfg.Inputs {
		fp, ok, err := statFingerprint(in.Path)
		if err != nil || !ok {
			keep = append(keep, in) // read (and faulted) as any input
			continue
		}
		c := o.state.byPath[in.Path]
		if c != nil && !o.cfg.Checksum && fp.sameFile(c.Fingerprint) {
			o.already = append(o.already, sink.CommittedInput{Path: in.Path, Run: c.Run})
			continue
		}
		if c == nil && !sizes[fp.Size] {
			keep = append(keep, in)
			continue
		}
		if fp.SHA256, err = digestFile(in.Path); err != nil {
			keep = append(keep, in)
			continue
		}
		switch {
		case c == nil:
			byDigest = append(byDigest, pending{in, fp, nil})
		case fp.SHA256 == c.SHA256 && fp.Size == c.Size:
			o.already = append(o.already, sink.CommittedInput{Path: in.Path, Run: c.Run})
		case o.cfg.ReplaceChanged:
			o.replaced = append(o.replaced, c)
			byDigest = append(byDigest, pending{in, fp, c})
		default:
			changed = append(changed, in.Path)
		}
	}
	if len(changed) > 0 {
		return &ChangedError{Paths: changed}
	}
	retired := o.replacedSet()
	held := map[string]*committedInput{}
	for _, c := range o.state.inputs {
		if c.SHA256 != "" && !retired[c] {
			held[c.SHA256] = c
		}
	}
	for _, p := range byDigest {
		if same := held[p.fp.SHA256]; same != nil && same.Size == p.fp.Size {
			// A replaced input whose new bytes OUT holds elsewhere is
			// retired and not taken again: its bytes stay held once.
			o.already = append(o.already, sink.CommittedInput{Path: p.in.Path, Run: same.Run, As: same.Path})
			continue
		}
		keep = append(keep, p.in)
	}
	// The inputs keep their order on the command line.
	order := make(map[string]int, len(o.cfg.Inputs))
	for i, in := range o.cfg.Inputs {
		order[in.Path] = i
	}
	slices.SortStableFunc(keep, func(a, b stream.Input) int { return order[a.Path] - order[b.Path] })
	o.cfg.Inputs = keep
	return nil
}

// replacedSet returns the committed inputs this run retires, as a set.
func (o *outDir) replacedSet() map[*committedInput]bool {
	set := make(map[*committedInput]bool, len(o.replaced))
	for _, c := range o.replaced {
		set[c] = true
	}
	return set
}

// stagingKey identifies what the run will write: a staging directory left
// by a killed run is resumed from only when its key is the same.
func (o *outDir) stagingKey() (string, error) {
	cfg := o.cfg
	keyring, err := keyringDigest(cfg)
	if err != nil {
		return "", err
	}
	inputs := make([][2]string, len(cfg.Inputs))
	for i, in := range cfg.Inputs {
		inputs[i] = [2]string{in.Path, in.Rel}
	}
	b, err := json.Marshal(struct {
		Version, Keyring            string
		Run                         int
		Incremental, ReplaceChanged bool
		Archive                     sink.ArchiveFormat
		ZstdLevel                   int
		MaxDocBytes, ZstdMaxWindow  int64
		MaxDepth                    int
		Strict                      bool
		Tables                      []string
		TableOptions                parquetout.TableOptions
		Handlers                    []string
		Inputs                      [][2]string
	}{Version, keyring, o.run, cfg.Incremental, cfg.ReplaceChanged, cfg.Archive, int(cfg.ZstdLevel),
		cfg.MaxDocBytes, int64(cfg.ZstdMaxWindow), cfg.MaxDepth, cfg.Strict, cfg.Tables, o.tableOptions, cfg.Registry.Names(), inputs})
	return string(b) + "\n", err
}

func (o *outDir) staging() string { return o.dir.Staging() }

// keyringDigest is the digest of the run's keyring (verify.Keyring.Digest:
// its keys' bytes, not only their names); "" without one.
func keyringDigest(cfg *Config) (string, error) {
	if cfg.Keyring == nil {
		return "", nil
	}
	return cfg.Keyring.Digest(), nil
}

// resumed returns the seal of input idx when the run resumes it.
func (o *outDir) resumed(idx int) *seal { return o.seals[idx] }

// docTables are the tables written per document: every table asked for
// but receipts, which are written when the run resolves them.
func (o *outDir) docTables() []string {
	var out []string
	for _, t := range o.cfg.Tables {
		if t != tabledef.Receipts {
			out = append(out, t)
		}
	}
	return out
}

// wantsReceiptsTable reports whether the receipts table was asked for.
func (o *outDir) wantsReceiptsTable() bool { return slices.Contains(o.cfg.Tables, tabledef.Receipts) }

// upToDate returns the result of an incremental run that has nothing to
// commit: every input is in OUT with the same fingerprint and none is
// replaced. Its report is OUT's report.json, the last committed run's;
// nil when there is something to do (or no report to return).
func (o *outDir) upToDate() *Result {
	if !o.cfg.Incremental || len(o.cfg.Inputs) > 0 || len(o.replaced) > 0 || o.state.lastRun == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(o.cfg.OutDir, sink.ReportFile))
	if err != nil {
		return nil
	}
	rep := new(sink.Report)
	if json.Unmarshal(b, rep) != nil {
		return nil
	}
	o.dir.ClearStaging()
	return &Result{Report: rep, UpToDate: true}
}

// close releases the lock and removes the temporaries.
func (o *outDir) close() error { return o.dir.Close() }
