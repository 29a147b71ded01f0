package outdir

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"io/fs"
	"strings"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/sink"
	"github.com/convbatch/convbatch/source"
	"github.com/convbatch/convbatch/stream"
	"github.com/convbatch/convbatch/tabledef"
)

// ErrChanged marks an incremental run refused because an input that OUT
// already holds has changed since (Options.ReplaceChanged allows it).
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

// Options are what a run into OUT is: where OUT is, the inputs, how
// incremental it is, and the settings it writes with.
type Options struct {
	// Root is OUT.
	Root string
	// Inputs are the run's inputs, in order; an incremental run skips
	// some (Run.Inputs).
	Inputs []stream.Input
	// Incremental adds to what OUT holds instead of replacing it;
	// ReplaceChanged then retires a changed input's outputs instead of
	// refusing it, and Checksum decides by every input's digest instead
	// of its size and modification time.
	Incremental, ReplaceChanged, Checksum bool
	// Source states an input given by URL that an incremental run must
	// compare, and reads its digest (its retries and backoff); nil is
	// source.Default().
	Source *source.Client
	// Handlers are the names of the run's handlers, Tables the tables it
	// writes, Archive its archive format.
	Handlers []string
	Tables   []string
	Archive  sink.ArchiveFormat
	// TableWork is the tables' package's work (parquetout.Work, with
	// the writer's options, Version set): the tables of the resolved
	// receipts and a table's empty part written at the commit, a part
	// that a replaced input shares rewritten without its rows. A run
	// with Tables needs it.
	TableWork TableWork
	// TableFormat lays the tables out as Parquet datasets (FormatParquet,
	// the default) or Iceberg tables (FormatIceberg).
	TableFormat TableFormat
	// Catalog, when set (--catalog, FormatIceberg), is the Iceberg
	// catalog each table is registered in: the commit swaps each table's
	// metadata location there, after its files and before the report
	// (docs/TABLES.md, "Iceberg through a catalog").
	Catalog icebergout.Catalog
	// IcebergPlace, when its Locate is set, is how the tables' metadata
	// names OUT's files and reads those Root does not hold: an OUT on
	// object storage (package objout), whose local copy Root is
	// (icebergout.Place; its Root and Dir are ignored here).
	IcebergPlace icebergout.Place
	// KeyringSHA256 is the digest of the run's keyring (verify.Keyring.
	// Digest); "" without one.
	KeyringSHA256 string
	// CheckpointKey, when set, is the note signer key that signs the
	// checkpoint of OUT's history at the commit (docs/FORMAT.md, "The
	// history of OUT").
	CheckpointKey string
	// Key is what else decides the bytes the run writes (the reading and
	// compression options, as JSON): a staging directory that a killed
	// run left is resumed only by a run with the same key, run number and
	// inputs.
	Key string
	// ReaderChecksReceipts leaves the SHA-256 of every run's receipts
	// state to the reader that reads them whole (CheckReceiptsState), as
	// `convbatch audit` does while it judges them, instead of a pass of
	// its own at OpenRun (1 s over 1.4 GB of states). A commit refuses
	// until every one is checked.
	ReaderChecksReceipts bool
	// OnStaged, when set, is called at the commit for each file the run
	// publishes once its bytes are final and read for the manifest, before
	// its sync and the journal: rel is its place in OUT, path where it is
	// staged (the commit renames it to OUT/rel), rec its size and SHA-256.
	// It is called from several goroutines at once, may be called again
	// for a file, and must not hold them (package objout starts the
	// file's upload there, issue 44 item 6).
	OnStaged func(rel, path string, rec FileRecord)
}

// Run is one run into OUT, from Open to Commit: OUT's lock, its committed
// state and staging, what the run skips and what it resumes from.
type Run struct {
	dir   *Dir
	opts  Options
	run   int
	state *state
	// seals are the sealed segments a killed run left that this run takes
	// as finished, by input index.
	seals []*Seal
	// already are the inputs an incremental run skips; replaced the
	// committed inputs it retires.
	already  []sink.CommittedInput
	replaced []*committedInput
	// reread are those of replaced that were not read whole (Partial):
	// read again without being asked to.
	reread map[*committedInput]bool
	// verified are the recorded files whose SHA-256 the run checked
	// (verify).
	verified map[string]bool
	// record is what OUT's manifests promise (an incremental run's; nil
	// for a run that replaces OUT).
	record *Record
	// committedAt is the run's commit time once FixCommittedAt fixed it.
	committedAt time.Time
}

// FixCommittedAt fixes the run's commit time, its manifest's committed_at,
// to now (truncated to the microsecond) on its first call, and returns it
// on every call: the witness time of the receipts this run first commits
// (docs/FORMAT.md, "Key lifetimes"). The pipeline calls it once the
// inputs are read, before resolving receipts.
func (r *Run) FixCommittedAt(now time.Time) time.Time {
	if r.committedAt.IsZero() {
		r.committedAt = now.UTC().Truncate(time.Microsecond)
	}
	return r.committedAt
}

// CommittedAt returns the commit time of run number run of this OUT: an
// earlier run's from its manifest, this run's once fixed
// (FixCommittedAt). ok is false when it is unknown: a manifest written
// before committed_at was recorded, a run OUT no longer holds, or this
// run's before it is fixed.
func (r *Run) CommittedAt(run int) (micros int64, ok bool) {
	if run == r.run {
		return r.committedAt.UnixMicro(), !r.committedAt.IsZero()
	}
	if r.record == nil || run < 1 || run > len(r.record.Manifests) || r.record.Manifests[run-1].Run != run {
		return 0, false
	}
	return r.record.Manifests[run-1].CommittedAtMicros()
}

// OpenRun opens OUT for a run (lock, recovery), checks an incremental
// run's record and settings and loads its committed state, takes from the
// inputs those an incremental run skips, numbers the run, and finds the
// sealed segments to resume from. Its refusals wrap ErrRefused,
// ErrChanged or ErrSettingsChanged.
func OpenRun(opts Options) (r *Run, err error) {
	if len(opts.Tables) > 0 && opts.TableWork == nil {
		return nil, fmt.Errorf("output directory: tables %s asked for without the tables' work (Options.TableWork)", strings.Join(opts.Tables, ","))
	}
	d, err := open(opts.Root, !opts.Incremental, opts.Catalog)
	if err != nil {
		return nil, err
	}
	d.onStaged = opts.OnStaged
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	r = &Run{dir: d, opts: opts, run: 1, reread: map[*committedInput]bool{}, verified: map[string]bool{}}
	r.opts.Inputs = slices.Clone(opts.Inputs)
	if opts.Incremental {
		rec, err := d.CheckRecord()
		if err != nil {
			return nil, err
		}
		r.record = rec
		if err := r.verify(r.builtOn()...); err != nil {
			return nil, err
		}
		if r.state, err = loadState(d, rec.LastRun); err != nil {
			return nil, err
		}
		r.run = r.state.lastRun + 1
		if err := r.sameSettings(); err != nil {
			return nil, err
		}
		if err := r.classify(); err != nil {
			return nil, err
		}
		if err := r.verifyReplaced(); err != nil {
			return nil, err
		}
	} else {
		r.state = &state{byPath: map[string]*committedInput{}}
	}
	if err := r.openStaging(); err != nil {
		return nil, err
	}
	return r, nil
}

// openStaging keeps the staging directory a killed run left when it was
// for the same run (same key), clearing it otherwise, and finds its
// sealed segments whose inputs are unchanged.
func (r *Run) openStaging() error {
	d := r.dir
	key, err := r.stagingKey()
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(d.Staging(), stagingRun)); err != nil || string(b) != key {
		if err := d.ClearStaging(); err != nil {
			return err
		}
	}
	if err := WriteFileAtomic(filepath.Join(d.Staging(), stagingRun), []byte(key)); err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	r.seals = make([]*Seal, len(r.opts.Inputs))
	// A segment is resumed whole, or not at all: when one of its inputs
	// changed since, every input of it is read again, and it is removed
	// now, so that no segment this run writes overlaps one left in
	// staging.
	for _, g := range readSeals(d.Staging(), len(r.opts.Inputs)) {
		same := true
		for _, m := range g.Inputs {
			fp, ok, err := statInput(r.opts.Source, r.opts.Inputs[m.Index])
			same = same && err == nil && ok && fp.SameFile(m.Fingerprint) && r.seals[m.Index] == nil
		}
		if !same {
			if err := removeSegment(segDir(d.Staging(), g.First)); err != nil {
				return fmt.Errorf("staging: %w", err)
			}
			continue
		}
		for _, m := range g.Inputs {
			r.seals[m.Index] = m
		}
	}
	return nil
}

// Number is the run's number: one more than the last committed run's.
func (r *Run) Number() int { return r.run }

// Inputs are the inputs the run reads: Options.Inputs less those an
// incremental run skips, in their order.
func (r *Run) Inputs() []stream.Input { return r.opts.Inputs }

// Already are the inputs an incremental run skips because OUT holds them.
func (r *Run) Already() []sink.CommittedInput { return r.already }

// Replaced are the committed inputs the run retires: those changed since
// (--replace-changed) and those it reads again because they were not
// read whole (Reread).
func (r *Run) Replaced() []sink.CommittedInput {
	var out []sink.CommittedInput
	for _, c := range r.replaced {
		out = append(out, sink.CommittedInput{Path: c.Path, Run: c.Run})
	}
	return out
}

// Reread are the committed inputs that an earlier run did not read whole
// (an input fault ended its reading) and that this run reads again,
// retiring what that run committed of them; Fault is that fault.
func (r *Run) Reread() []sink.CommittedInput {
	var out []sink.CommittedInput
	for _, c := range r.replaced {
		if r.reread[c] {
			out = append(out, sink.CommittedInput{Path: c.Path, Run: c.Run, Fault: c.Partial})
		}
	}
	return out
}

// Tmp is the run's temporary directory (Dir.Tmp).
func (r *Run) Tmp() string { return r.dir.Tmp() }

// Close releases OUT's lock and removes the temporaries.
func (r *Run) Close() error { return r.dir.Close() }

// runSettings are what every run of an incremental series must share, so
// that its datasets and its documents' index records mean the same thing
// from run to run (the keyring may change: it only decides verdicts).
type runSettings struct {
	Handlers    []string              `json:"handlers"`
	Tables      []string              `json:"tables"`
	PartitionBy tabledef.Partitioning `json:"partition_by"`
	Archive     sink.ArchiveFormat    `json:"archive"`
	// TableFormat is "" for FormatParquet, so that the settings of the
	// OUTs written before there was a choice still match.
	TableFormat TableFormat `json:"table_format,omitempty"`
}

// partitionBy is how the run's tables are partitioned (TableWork; "" for
// none).
func (r *Run) partitionBy() tabledef.Partitioning {
	if r.opts.TableWork == nil {
		return ""
	}
	return r.opts.TableWork.Partitioning()
}

func (r *Run) settings() runSettings {
	s := runSettings{Handlers: r.opts.Handlers, Tables: r.opts.Tables, PartitionBy: cmp.Or(r.partitionBy(), tabledef.PartitionNone), Archive: r.opts.Archive}
	if r.opts.TableFormat == FormatIceberg {
		s.TableFormat = FormatIceberg
	}
	if s.Tables == nil {
		s.Tables = []string{}
	}
	return s
}

// sameSettings refuses an incremental run whose settings differ from those
// of the runs OUT holds (its state's settings.json) with a *SettingsError
// that names each setting that differs, in words.
func (r *Run) sameSettings() error {
	b, err := os.ReadFile(r.dir.State(stateSettings))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	now := r.settings()
	nowJSON, err := json.Marshal(now)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(b)) == string(nowJSON) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var was runSettings
	if err := dec.Decode(&was); err != nil {
		// Written by another version of convbatch, or edited: its
		// settings cannot be compared one by one.
		return &SettingsError{Unreadable: err}
	}
	diffs := settingsDiff(was, now)
	if len(diffs) == 0 {
		return nil // the same settings, written otherwise
	}
	return &SettingsError{Differences: diffs}
}

// settingsDiff lists the settings of an incremental series that now asks
// for otherwise than was, in the order of runSettings' fields.
func settingsDiff(was, now runSettings) []SettingDifference {
	var diffs []SettingDifference
	if !slices.Equal(was.Handlers, now.Handlers) {
		diffs = append(diffs, SettingDifference{Setting: SettingCommand, Was: strings.Join(was.Handlers, ","), Now: strings.Join(now.Handlers, ",")})
	}
	if !slices.Equal(was.Tables, now.Tables) {
		diffs = append(diffs, SettingDifference{Setting: SettingTables, Was: tableList(was.Tables), Now: tableList(now.Tables)})
	}
	wasPart, nowPart := cmp.Or(was.PartitionBy, tabledef.PartitionNone), cmp.Or(now.PartitionBy, tabledef.PartitionNone)
	if wasPart != nowPart {
		diffs = append(diffs, SettingDifference{Setting: SettingPartitionBy, Was: string(wasPart), Now: string(nowPart)})
	}
	if was.Archive != now.Archive {
		diffs = append(diffs, SettingDifference{Setting: SettingArchive, Was: string(was.Archive), Now: string(now.Archive)})
	}
	wasFormat, nowFormat := cmp.Or(was.TableFormat, FormatParquet), cmp.Or(now.TableFormat, FormatParquet)
	if wasFormat != nowFormat {
		diffs = append(diffs, SettingDifference{Setting: SettingTableFormat, Was: string(wasFormat), Now: string(nowFormat)})
	}
	return diffs
}

// tableList is a --tables value as a run asks for it: the names
// comma-separated, or none.
func tableList(tables []string) string {
	if len(tables) == 0 {
		return "none"
	}
	return strings.Join(tables, ",")
}

// ErrSettingsChanged marks an incremental run refused because OUT's runs
// used other settings.
var ErrSettingsChanged = errors.New("incremental run with other settings than OUT's runs")

// The settings every run of an incremental series shares
// (SettingDifference.Setting): the command (which decides the handlers)
// and four flags.
const (
	SettingCommand     = "the command"
	SettingTables      = "--tables"
	SettingPartitionBy = "--partition-by"
	SettingArchive     = "--archive"
	SettingTableFormat = "--table-format"
)

// SettingDifference is one setting that an incremental run asks for
// otherwise than the runs OUT holds.
type SettingDifference struct {
	// Setting is the flag (SettingTables, SettingPartitionBy,
	// SettingArchive, SettingTableFormat), or SettingCommand for the
	// handlers, which the command decides.
	Setting string
	// Was and Now are its values in OUT's runs and in this run, as the
	// flag is written (the handlers' names, comma-separated, for
	// SettingCommand).
	Was, Now string
}

// String says the difference in words: "--table-format: OUT holds
// parquet, this run asks for iceberg".
func (d SettingDifference) String() string {
	switch d.Setting {
	case SettingCommand:
		was, now := strings.Split(d.Was, ","), strings.Split(d.Now, ",")
		var parts []string
		if added := missing(now, was); len(added) > 0 {
			parts = append(parts, fmt.Sprintf("OUT's runs did not run %s (as extract, which runs only what its tables need), this run does", strings.Join(added, ", ")))
		}
		if dropped := missing(was, now); len(dropped) > 0 {
			parts = append(parts, fmt.Sprintf("this run does not run %s, which OUT's runs did", strings.Join(dropped, ", ")))
		}
		if len(parts) == 0 {
			parts = append(parts, "OUT's runs ran the same handlers in another order")
		}
		return fmt.Sprintf("%s: %s", d.Setting, strings.Join(parts, "; "))
	case SettingTables:
		was, now := strings.Split(d.Was, ","), strings.Split(d.Now, ",")
		var change []string
		if added := missing(now, was); len(added) > 0 && d.Now != "none" {
			change = append(change, "adds "+strings.Join(added, ","))
		}
		if dropped := missing(was, now); len(dropped) > 0 && d.Was != "none" {
			change = append(change, "leaves out "+strings.Join(dropped, ","))
		}
		s := fmt.Sprintf("%s: OUT holds %s, this run asks for %s", d.Setting, d.Was, d.Now)
		if len(change) > 0 {
			s += " (" + strings.Join(change, ", ") + ")"
		}
		return s
	case SettingPartitionBy:
		return fmt.Sprintf("%s: OUT holds %s, this run asks for %s", d.Setting, partitionWords(d.Was), partitionWords(d.Now))
	case SettingArchive:
		return fmt.Sprintf("%s: OUT holds %s, this run asks for %s", d.Setting, archiveWords(d.Was), archiveWords(d.Now))
	}
	return fmt.Sprintf("%s: OUT holds %s, this run asks for %s", d.Setting, d.Was, d.Now)
}

// missing returns the names of a that b does not hold, in a's order.
func missing(a, b []string) []string {
	var out []string
	for _, s := range a {
		if s != "" && !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// partitionWords says a --partition-by value: "tables partitioned by day
// (day)", "unpartitioned tables (none)".
func partitionWords(v string) string {
	if v == string(tabledef.PartitionNone) {
		return "unpartitioned tables (none)"
	}
	return fmt.Sprintf("tables partitioned by %s", v)
}

// archiveWords says an --archive value: "zst archives", "no archives
// (none)".
func archiveWords(v string) string {
	if v == string(sink.ArchiveNone) {
		return "no archives (none)"
	}
	return v + " archives"
}

// SettingsError is the refusal of an incremental run whose settings
// (command, --tables, --partition-by, --archive, --table-format) differ
// from OUT's runs.
type SettingsError struct {
	// Differences are the settings that differ, each once.
	Differences []SettingDifference
	// Unreadable is why OUT's settings could not be read one by one
	// (written by another version of convbatch, or edited); Differences
	// is then empty.
	Unreadable error
}

func (e *SettingsError) Error() string {
	const rule = "an incremental run keeps the command, --tables, --partition-by, --archive and --table-format of OUT's runs (run without --incremental to replace OUT)"
	if len(e.Differences) == 0 {
		return fmt.Sprintf("OUT's settings (%s) are not this convbatch's (%v): %s", StateRel(stateSettings), e.Unreadable, rule)
	}
	parts := make([]string, len(e.Differences))
	for i, d := range e.Differences {
		parts[i] = d.String()
	}
	return fmt.Sprintf("%s; %s", strings.Join(parts, "; "), rule)
}

// Unwrap returns ErrSettingsChanged, and the reason OUT's settings were
// unreadable if they were.
func (e *SettingsError) Unwrap() []error {
	if e.Unreadable != nil {
		return []error{ErrSettingsChanged, e.Unreadable}
	}
	return []error{ErrSettingsChanged}
}

// classify sorts an incremental run's inputs: those OUT holds with the
// same fingerprint are skipped (their path, size and modification time
// match, or else their digest does; with Options.Checksum always their
// digest, when OUT recorded one), and so is an input whose bytes OUT holds under another path
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
func (r *Run) classify() error {
	type pending struct {
		in stream.Input
		fp Fingerprint
		c  *committedInput // the committed input at its path; nil if none
	}
	var keep []stream.Input
	var byDigest []pending
	var changed []string
	sizes := map[int64]bool{}
	for _, c := range r.state.inputs {
		if c.SHA256 != "" && c.Partial == "" {
			sizes[c.Size] = true
		}
	}
	for _, in := range r.opts.Inputs {
		c := r.state.byPath[in.Path]
		if c != nil && c.Partial != "" {
			// Not read whole last time: never held, read again, and
			// what was committed of it retired, unasked.
			r.replaced = append(r.replaced, c)
			r.reread[c] = true
			keep = append(keep, in)
			continue
		}
		fp, ok, err := statInput(r.opts.Source, in)
		if err != nil || !ok {
			keep = append(keep, in) // read (and faulted) as any input
			continue
		}
		if c != nil && (!r.opts.Checksum || c.SHA256 == "") && fp.SameFile(c.Fingerprint) {
			// With Checksum too when OUT recorded no digest of it (a
			// run with Config.NoInputDigest, a convbeam job before it
			// recorded them, one whose digest step met an outage):
			// there is nothing to compare its bytes with, and the same
			// size, time and version hold it, as without Checksum,
			// instead of refusing it as changed.
			r.already = append(r.already, sink.CommittedInput{Path: in.Path, Run: c.Run})
			continue
		}
		if c == nil && !sizes[fp.Size] {
			keep = append(keep, in)
			continue
		}
		if fp.SHA256, err = inputSHA256(r.opts.Source, in); err != nil {
			// Its digest unreadable (an outage), it is never matched by
			// digest. Held at its path in another version (its size,
			// modification time or version differ), it is a changed
			// input all the same: refused, or its old version retired
			// while the new one is read (and recorded partial if the
			// fault cuts that read too), so that OUT never holds two
			// versions of one path. With Checksum and the same stat, it
			// stays held until a night can read it.
			switch {
			case c == nil:
				keep = append(keep, in)
			case fp.SameFile(c.Fingerprint):
				r.already = append(r.already, sink.CommittedInput{Path: in.Path, Run: c.Run})
			case r.opts.ReplaceChanged:
				r.replaced = append(r.replaced, c)
				keep = append(keep, in)
			default:
				changed = append(changed, in.Path)
			}
			continue
		}
		switch {
		case c == nil:
			byDigest = append(byDigest, pending{in, fp, nil})
		case fp.SHA256 == c.SHA256 && fp.Size == c.Size:
			r.already = append(r.already, sink.CommittedInput{Path: in.Path, Run: c.Run})
		case r.opts.ReplaceChanged:
			r.replaced = append(r.replaced, c)
			byDigest = append(byDigest, pending{in, fp, c})
		default:
			changed = append(changed, in.Path)
		}
	}
	if len(changed) > 0 {
		return &ChangedError{Paths: changed}
	}
	retired := r.replacedSet()
	held := map[string]*committedInput{}
	for _, c := range r.state.inputs {
		if c.SHA256 != "" && c.Partial == "" && !retired[c] {
			held[c.SHA256] = c
		}
	}
	for _, p := range byDigest {
		if same := held[p.fp.SHA256]; same != nil && same.Size == p.fp.Size {
			// A replaced input whose new bytes OUT holds elsewhere is
			// retired and not taken again: its bytes stay held once.
			r.already = append(r.already, sink.CommittedInput{Path: p.in.Path, Run: same.Run, As: same.Path})
			continue
		}
		keep = append(keep, p.in)
	}
	// The inputs keep their order on the command line.
	order := make(map[string]int, len(r.opts.Inputs))
	for i, in := range r.opts.Inputs {
		order[in.Path] = i
	}
	slices.SortStableFunc(keep, func(a, b stream.Input) int { return order[a.Path] - order[b.Path] })
	r.opts.Inputs = keep
	return nil
}

// replacedSet returns the committed inputs this run retires, as a set.
func (r *Run) replacedSet() map[*committedInput]bool {
	set := make(map[*committedInput]bool, len(r.replaced))
	for _, c := range r.replaced {
		set[c] = true
	}
	return set
}

// stagingKey identifies what the run will write: a staging directory left
// by a killed run is resumed from only when its key is the same.
func (r *Run) stagingKey() (string, error) {
	o := r.opts
	inputs := make([][2]string, len(o.Inputs))
	for i, in := range o.Inputs {
		inputs[i] = [2]string{in.Path, in.Rel}
	}
	b, err := json.Marshal(struct {
		Key, Keyring                string
		Run                         int
		Incremental, ReplaceChanged bool
		Archive                     sink.ArchiveFormat
		Tables                      []string
		// TableOptions is the table work, by the name its options had
		// here, so that the key stays what it was.
		TableOptions TableWork
		Handlers     []string
		Inputs       [][2]string
	}{o.Key, o.KeyringSHA256, r.run, o.Incremental, o.ReplaceChanged, o.Archive, o.Tables, o.TableWork, o.Handlers, inputs})
	return string(b) + "\n", err
}

// Resumed returns the seal of input idx when the run resumes it (a killed
// run sealed it, and the input is unchanged since); nil otherwise.
func (r *Run) Resumed(idx int) *Seal { return r.seals[idx] }

// UpToDate returns OUT's report.json, the last committed run's, when an
// incremental run has nothing to commit: every input is in OUT with the
// same fingerprint and none is replaced; nil when there is something to
// do (or no report to return). It then clears the staging directory.
func (r *Run) UpToDate() *sink.Report {
	if !r.opts.Incremental || len(r.opts.Inputs) > 0 || len(r.replaced) > 0 || r.state.lastRun == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.opts.Root, ReportFile))
	if err != nil {
		return nil
	}
	rep := new(sink.Report)
	if json.Unmarshal(b, rep) != nil {
		return nil
	}
	r.dir.ClearStaging()
	return rep
}

// verify checks the SHA-256 of the recorded files rels that the run
// reads, builds on or rewrites, each once, before it uses them: a file
// whose bytes differ from its manifest's record (an edit of the same
// size, which CheckRecord's sizes cannot see) is refused with a
// *RecordError naming it (exit 2), since a run that built on it would
// publish its forged content under a new, valid digest. A run that
// replaces OUT reads nothing of it and checks nothing.
func (r *Run) verify(rels ...string) error {
	if r.record == nil {
		return nil
	}
	var todo []string
	for _, rel := range rels {
		if rel != "" && !r.verified[rel] {
			r.verified[rel] = true
			todo = append(todo, rel)
		}
	}
	if problems := r.record.CheckDigests(r.dir.root, todo); len(problems) > 0 {
		return &RecordError{Root: r.dir.root, Problems: problems}
	}
	return nil
}

// builtOn are the recorded files every incremental run reads or builds
// on: report.json (its cumulative counts, or the summary of a run with
// nothing to do), the state's settings and inputs, every run's receipts
// state, and an Iceberg table's metadata (its next snapshot builds on the
// current one). The documents' index records are checked when they are
// read (FoldEarlierDocs), the files a replacement rewrites once they are
// known (verifyReplaced).
func (r *Run) builtOn() []string {
	rels := []string{ReportFile, StateRel(stateSettings), StateRel(stateInputs)}
	for run := 1; run <= r.record.LastRun && !r.opts.ReaderChecksReceipts; run++ {
		rels = append(rels, StateRel(stateReceiptsFile(run)))
	}
	if r.opts.TableFormat == FormatIceberg {
		var meta []string
		for rel := range r.record.Files {
			for _, name := range r.opts.Tables {
				if strings.HasPrefix(rel, TableDir(name)+"/metadata/") {
					meta = append(meta, rel)
				}
			}
		}
		slices.Sort(meta)
		rels = append(rels, meta...)
	}
	return rels
}

// verifyReplaced checks the SHA-256 of the recorded files that retiring
// the replaced inputs rewrites: the table parts they share with inputs
// OUT keeps, and the rejects and receipts files of every run from the
// first that committed one of them (with those runs' kept reports, which
// name the files).
func (r *Run) verifyReplaced() error {
	if len(r.replaced) == 0 {
		return nil
	}
	retired := r.replacedSet()
	kept := map[string]bool{}
	for _, c := range r.state.inputs {
		if !retired[c] {
			for _, f := range c.Files {
				kept[f] = true
			}
		}
	}
	from := r.run
	var rels []string
	for _, c := range r.replaced {
		from = min(from, c.Run)
		for _, f := range c.Files {
			if _, isPart := TableOf(f); isPart && kept[f] {
				rels = append(rels, f)
			}
		}
	}
	if err := r.verify(rels...); err != nil {
		return err
	}
	for run := from; run < r.run; run++ {
		rel := RunReportFile(run)
		if err := r.verify(rel); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(r.opts.Root, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		var rep sink.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%w: %s is not parseable (%v): rerun without --incremental to rebuild OUT", ErrRefused, rel, err)
		}
		if err := r.verify(rep.Outputs.RejectsIndex, rep.Outputs.RejectsData, rep.Outputs.Receipts); err != nil {
			return err
		}
	}
	return nil
}

// committedAtText is the run's committed_at for its manifest, fixed now
// if the pipeline has not fixed it.
func (r *Run) committedAtText() string { return FormatCommittedAt(r.FixCommittedAt(time.Now())) }
