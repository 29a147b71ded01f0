package outdir

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/parquetout"
	"github.com/convbatch/convbatch/sink"
)

// TestSettingsError: an incremental run whose settings differ from those
// OUT's state records (settings.json, as a commit writes it) is refused
// with a *SettingsError that names, in words, exactly the settings that
// differ, each once, and quotes no JSON (issue 45 item 4); the same
// settings, also written otherwise (an OUT from before --table-format, or
// with other white space), pass.
func TestSettingsError(t *testing.T) {
	every := []string{"core", "usage-metadata", "transcript-hash", "consensus-receipt"}
	base := Options{Handlers: every, Tables: []string{"usage"}, Archive: sink.ArchiveZstd,
		TableWork: parquetout.Work{PartitionBy: parquetout.PartitionNone}, TableFormat: FormatParquet}
	flags := []string{SettingCommand, SettingTables, SettingPartitionBy, SettingArchive, SettingTableFormat}
	for _, tc := range []struct {
		name string
		// was is the settings.json OUT holds ("" for base's); change
		// makes this run's options from base.
		was    string
		change func(o *Options)
		// want are the settings named, each with what it must say.
		want map[string]string
	}{
		{name: "same", change: func(*Options) {}},
		{name: "before --table-format", was: `{"handlers":["core","usage-metadata","transcript-hash","consensus-receipt"],"tables":["usage"],"partition_by":"none","archive":"zst"}`, change: func(*Options) {}},
		{name: "other white space", was: "{\"handlers\": [\"core\",\"usage-metadata\",\"transcript-hash\",\"consensus-receipt\"], \"tables\": [\"usage\"], \"partition_by\": \"none\", \"archive\": \"zst\"}\n", change: func(*Options) {}},
		{name: "command", was: `{"handlers":["core","usage-metadata"],"tables":["usage"],"partition_by":"none","archive":"zst"}`, change: func(*Options) {},
			want: map[string]string{SettingCommand: "the command: OUT's runs did not run transcript-hash, consensus-receipt (as extract"}},
		{name: "fewer handlers", change: func(o *Options) { o.Handlers = every[:3] },
			want: map[string]string{SettingCommand: "the command: this run does not run consensus-receipt, which OUT's runs did"}},
		{name: "tables", change: func(o *Options) { o.Tables = []string{"usage", "conversations"} },
			want: map[string]string{SettingTables: "--tables: OUT holds usage, this run asks for usage,conversations (adds conversations)"}},
		{name: "tables none", change: func(o *Options) { o.Tables = nil },
			want: map[string]string{SettingTables: "--tables: OUT holds usage, this run asks for none"}},
		{name: "partition-by", change: func(o *Options) { o.TableWork = parquetout.Work{PartitionBy: parquetout.PartitionDay} },
			want: map[string]string{SettingPartitionBy: "--partition-by: OUT holds unpartitioned tables (none), this run asks for tables partitioned by day"}},
		{name: "archive", change: func(o *Options) { o.Archive = sink.ArchiveJSONL },
			want: map[string]string{SettingArchive: "--archive: OUT holds zst archives, this run asks for jsonl archives"}},
		{name: "archive none", change: func(o *Options) { o.Archive = sink.ArchiveNone },
			want: map[string]string{SettingArchive: "--archive: OUT holds zst archives, this run asks for no archives (none)"}},
		{name: "table-format", change: func(o *Options) { o.TableFormat = FormatIceberg },
			want: map[string]string{SettingTableFormat: "--table-format: OUT holds parquet, this run asks for iceberg"}},
		{name: "two", change: func(o *Options) { o.TableFormat, o.Archive = FormatIceberg, sink.ArchiveNone },
			want: map[string]string{SettingArchive: "--archive: OUT holds zst archives, this run asks for no archives (none)",
				SettingTableFormat: "--table-format: OUT holds parquet, this run asks for iceberg"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := open(t.TempDir(), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			was := tc.was
			if was == "" {
				b, err := json.Marshal((&Run{opts: base}).settings())
				if err != nil {
					t.Fatal(err)
				}
				was = string(b) + "\n"
			}
			if err := os.MkdirAll(filepath.Dir(d.State(stateSettings)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(d.State(stateSettings), []byte(was), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := base
			opts.Handlers = append([]string(nil), base.Handlers...)
			tc.change(&opts)
			err = (&Run{dir: d, opts: opts}).sameSettings()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *SettingsError
			if !errors.As(err, &se) || !errors.Is(err, ErrSettingsChanged) {
				t.Fatalf("err = %v, want a *SettingsError", err)
			}
			if len(se.Differences) != len(tc.want) {
				t.Errorf("differences %+v, want %d", se.Differences, len(tc.want))
			}
			msg := err.Error()
			for _, flag := range flags {
				says, named := tc.want[flag]
				// The rule at the end names every setting once; a
				// difference names its own a second time.
				n := strings.Count(msg, flag+":")
				switch {
				case named && (n != 1 || !strings.Contains(msg, says)):
					t.Errorf("%q does not say %q", msg, says)
				case !named && n != 0:
					t.Errorf("%q names %s, which does not differ", msg, flag)
				}
			}
			if strings.ContainsAny(msg, "{}\"") {
				t.Errorf("%q quotes JSON", msg)
			}
			if !strings.Contains(msg, "run without --incremental to replace OUT") {
				t.Errorf("%q does not say what to do", msg)
			}
		})
	}
}

// TestSettingsUnreadable: settings.json that this convbatch cannot read
// one by one (an unknown field, not JSON) is refused by name, quoting
// none of it.
func TestSettingsUnreadable(t *testing.T) {
	for _, was := range []string{`{"handlers":[],"tables":[],"partition_by":"none","archive":"zst","secret_field":1}`, "not json secret"} {
		d, err := open(t.TempDir(), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(d.State(stateSettings)), 0o755)
		if err := os.WriteFile(d.State(stateSettings), []byte(was), 0o644); err != nil {
			t.Fatal(err)
		}
		err = (&Run{dir: d, opts: Options{Archive: sink.ArchiveZstd}}).sameSettings()
		d.Close()
		var se *SettingsError
		if !errors.As(err, &se) || se.Unreadable == nil || !strings.Contains(err.Error(), StateRel(stateSettings)) {
			t.Errorf("%q: err = %v, want a *SettingsError naming %s", was, err, StateRel(stateSettings))
		}
		if strings.Contains(err.Error(), "secret") && !strings.Contains(err.Error(), "secret_field") {
			t.Errorf("%q: quotes the file: %v", was, err)
		}
	}
}

// TestOpenRunNeedsTableWork: a run that writes tables is refused without
// the table work that writes the commit's tables (Options.TableWork),
// before OUT is made; one without tables needs none.
func TestOpenRunNeedsTableWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{name: "tables, no work", opts: Options{Tables: []string{"usage"}, Archive: sink.ArchiveNone}},
		{name: "tables and work", opts: Options{Tables: []string{"usage"}, Archive: sink.ArchiveNone, TableWork: parquetout.Work{Version: "test"}}, ok: true},
		{name: "no tables", opts: Options{Archive: sink.ArchiveNone}, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Root = filepath.Join(t.TempDir(), "out")
			r, err := OpenRun(tc.opts)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), "Options.TableWork") {
				t.Fatalf("OpenRun = %v, want a refusal naming Options.TableWork", err)
			}
			if _, serr := os.Stat(tc.opts.Root); !errors.Is(serr, fs.ErrNotExist) {
				t.Errorf("refused run wrote OUT (%v)", serr)
			}
		})
	}
}
