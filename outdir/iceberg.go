package outdir

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/internal/crashpoint"
	"github.com/convbatch/convbatch/tabledef"
)

// TableFormat is how a run lays out its tables (--table-format).
type TableFormat string

const (
	// FormatParquet writes each table as a directory of Parquet parts,
	// OUT/tables/<name>/part-NNNNN.parquet (docs/TABLES.md). The zero
	// value means the same.
	FormatParquet TableFormat = "parquet"
	// FormatIceberg writes each table as an Apache Iceberg table,
	// OUT/tables/<name>/metadata/ and data/, one snapshot per run
	// (docs/TABLES.md, "Iceberg tables").
	FormatIceberg TableFormat = "iceberg"
)

// ParseTableFormat parses the --table-format flag: "parquet" or "iceberg".
func ParseTableFormat(s string) (TableFormat, error) {
	switch f := TableFormat(s); f {
	case FormatParquet, FormatIceberg:
		return f, nil
	}
	return "", fmt.Errorf("unknown table format %q (want parquet or iceberg)", s)
}

// TableDataDir returns the directory of an Iceberg table's data files:
// OUT/tables/<name>/data.
func TableDataDir(table string) string { return TableDir(table) + "/" + icebergout.DataDir }

// iceberg is what a commit in the Iceberg format gathers for each table's
// snapshot: the metadata version it writes, the numbering of its new data
// files, and the files it adds and removes.
type iceberg struct {
	version map[string]int
	next    map[string]int
	add     map[string][]icebergout.DataFile
	remove  map[string][]string
	// rewrite are the data files to rewrite without some rows, by table.
	rewrite map[string]string
}

func newIceberg() iceberg {
	return iceberg{version: map[string]int{}, next: map[string]int{}, add: map[string][]icebergout.DataFile{}, remove: map[string][]string{}, rewrite: map[string]string{}}
}

func (p *commitPlan) icebergFormat() bool { return p.r.opts.TableFormat == FormatIceberg }

// root is OUT as an absolute path, as Iceberg locations need it.
func (p *commitPlan) absRoot() (string, error) {
	return filepath.Abs(p.r.opts.Root)
}

// icebergPlace returns where the data file of table in partition (a
// partition directory name, "" for none) is published: the table's data
// directory, the partition's directory in it, and a name that carries the
// metadata version of the snapshot that adds it,
// part-vVVVVVV-NNNNN.parquet, so that no run ever writes over a file an
// earlier snapshot holds.
func (p *commitPlan) icebergPlace(table, partition string) (string, error) {
	ice := &p.ice
	v, ok := ice.version[table]
	if !ok {
		n, err := icebergout.Version(filepath.Join(p.r.opts.Root, filepath.FromSlash(TableDir(table))))
		if err != nil {
			return "", err
		}
		v = n + 1
		ice.version[table] = v
	}
	dir := TableDataDir(table)
	if partition != "" {
		dir += "/" + partition
	}
	n := ice.next[dir]
	ice.next[dir]++
	return fmt.Sprintf("%s/part-v%06d-%05d.parquet", dir, v, n), nil
}

// icebergAdd records that the snapshot of table adds the data file
// published at to, staged at from (relative to the staging directory).
func (p *commitPlan) icebergAdd(table, from, to string) error {
	f := icebergout.DataFile{Rel: to, Local: filepath.Join(p.staging, filepath.FromSlash(from))}
	if p.r.partitionBy() == tabledef.PartitionDay {
		day, err := partitionDay(to)
		if err != nil {
			return err
		}
		f.Day = day
	}
	p.ice.add[table] = append(p.ice.add[table], f)
	return nil
}

// partitionDay returns the day of the partition directory in the path
// rel (days since 1970-01-01), nil for the null partition or a path in no
// partition.
func partitionDay(rel string) (*int32, error) {
	for _, el := range strings.Split(path.Dir(rel), "/") {
		v, ok := strings.CutPrefix(el, tabledef.PartitionKey+"=")
		if !ok {
			continue
		}
		if v == tabledef.NullPartition {
			return nil, nil
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return nil, fmt.Errorf("output directory: partition of %s: %w", rel, err)
		}
		d := int32(t.Unix() / 86400)
		return &d, nil
	}
	return nil, nil
}

// partitionOf returns the partition directory of a table's data file rel
// (relative to OUT), "" when it is in none.
func partitionOf(rel string) string {
	el := path.Base(path.Dir(rel))
	if strings.HasPrefix(el, tabledef.PartitionKey+"=") {
		return el
	}
	return ""
}

// icebergRetire takes the data file f (relative to OUT) of table out of
// its next snapshot. The file stays in OUT: earlier snapshots hold it.
func (p *commitPlan) icebergRetire(table, f string) {
	p.ice.remove[table] = append(p.ice.remove[table], f)
}

// icebergRewrite stages the data file f of table without the rows drop
// names, as a new file that the next snapshot adds in f's place; a copy
// with no row is not added. It returns the new file's path, "" when none.
func (p *commitPlan) icebergRewrite(table, f string, drop func(string, int64) bool) (string, error) {
	to, err := p.icebergPlace(table, partitionOf(f))
	if err != nil {
		return "", err
	}
	if err := p.r.verify(f); err != nil {
		return "", err
	}
	src := filepath.Join(p.r.opts.Root, filepath.FromSlash(f))
	rows, err := p.r.opts.TableWork.RewriteRows(p.txn, to, src, table, drop)
	if err != nil {
		return "", fmt.Errorf("output directory: rewrite %s without retired rows: %w", f, err)
	}
	p.icebergRetire(table, f)
	if rows == 0 {
		return "", nil
	}
	p.publish(outRel(to), to)
	return to, p.icebergAdd(table, outRel(to), to)
}

// reresolvedRows returns the receipts this run resolved again, by their
// source_file and source_line (nil when none).
func (p *commitPlan) reresolvedRows() map[rowKey]bool {
	if p.streamed {
		return p.rerKeys
	}
	if len(p.c.Reresolved) == 0 {
		return nil
	}
	keys := map[rowKey]bool{}
	for _, r := range p.c.Reresolved {
		keys[rowKey{r.File, r.Line}] = true
	}
	return keys
}

// rowKey is a row's source_file and source_line.
type rowKey struct {
	file string
	line int64
}

// rewriteData rewrites, each once, the data files the next snapshots
// must not hold whole: the parts a replaced input shares with kept ones
// (without the replaced inputs' rows: retire lists them in
// p.ice.rewrite), and the files of the tables of receipts (receipts,
// receipt_statements) holding the earlier rows
// of a receipt this run resolved again, or a row of a replaced input that
// no input lists (an earlier re-resolution's), without those rows. Every kept
// input's files then list the new names.
func (p *commitPlan) rewriteData(ctx context.Context, root string) error {
	dropFile := map[string]bool{}
	for _, c := range p.r.replaced {
		dropFile[c.Path] = true
	}
	keys := p.reresolvedRows()
	// A receipt's row may be in a file no input lists (a re-resolution's),
	// so the receipts table's files are searched for both kinds of row.
	drop := func(file string, line int64) bool { return dropFile[file] || keys[rowKey{file, line}] }
	// The tables of receipts (receipts, receipt_statements) hold a
	// receipt's rows at its source_file and source_line.
	for _, table := range p.r.receiptTables() {
		if keys == nil && len(dropFile) == 0 {
			break
		}
		current, err := icebergout.CurrentFilesAt(ctx, p.icebergAt(root, table))
		if err != nil {
			return err
		}
		retired := map[string]bool{}
		for _, f := range p.ice.remove[table] {
			retired[f] = true
		}
		for _, f := range current {
			if retired[f] || p.ice.rewrite[f] != "" {
				continue
			}
			if err := p.r.verify(f); err != nil {
				return err
			}
			held, err := p.r.opts.TableWork.HasRows(filepath.Join(root, filepath.FromSlash(f)), drop)
			if err != nil {
				return fmt.Errorf("output directory: %w", err)
			}
			if held {
				p.ice.rewrite[f] = table
			}
		}
	}
	// A receipt resolved again is a row of the tables of receipts only: the
	// other tables' rows at its source_file and source_line stay (a
	// merged file, convbatch maintain --rewrite-small-files, holds rows of
	// many inputs besides the replaced ones).
	dropInputs := func(file string, _ int64) bool { return dropFile[file] }
	renamed := map[string]string{}
	for _, f := range slices.Sorted(maps.Keys(p.ice.rewrite)) {
		dropRows := dropInputs
		if tabledef.FromReceipts(p.ice.rewrite[f]) {
			dropRows = drop
		}
		to, err := p.icebergRewrite(p.ice.rewrite[f], f, dropRows)
		if err != nil {
			return err
		}
		renamed[f] = to
	}
	if len(renamed) == 0 {
		return nil
	}
	retired := p.r.replacedSet()
	for _, c := range p.r.state.inputs {
		if retired[c] {
			continue
		}
		files := []string{}
		for _, f := range c.Files {
			if to, ok := renamed[f]; !ok {
				files = append(files, f)
			} else if to != "" {
				files = append(files, to)
			}
		}
		c.Files = files
	}
	return nil
}

// icebergAt is where the table's files are read from and located.
func (p *commitPlan) icebergAt(root, table string) icebergout.Place {
	pl := p.r.opts.IcebergPlace
	pl.Root, pl.Dir = root, TableDir(table)
	return pl
}

// snapshotTables stages one snapshot of every Iceberg table the run
// writes, adding its new data files and removing the retired ones, and
// publishes the snapshot's metadata after its data files, its
// vN.metadata.json last but for the version hint.
func (p *commitPlan) snapshotTables() error {
	if !p.icebergFormat() {
		return nil
	}
	ctx := context.Background()
	root, err := p.absRoot()
	if err != nil {
		return err
	}
	if p.r.opts.Incremental {
		if err := p.rewriteData(ctx, root); err != nil {
			return err
		}
	}
	for _, name := range p.r.opts.Tables {
		st, err := icebergout.Stage(ctx, p.txn, icebergout.Snapshot{
			Root: root, Table: name, Dir: TableDir(name),
			Partitioned: p.r.partitionBy() == tabledef.PartitionDay,
			Fresh:       !p.r.opts.Incremental,
			Add:         p.ice.add[name], Remove: p.ice.remove[name],
			Run:     p.run,
			Catalog: p.r.opts.Catalog,
			Locate:  p.r.opts.IcebergPlace.Locate, IO: p.r.opts.IcebergPlace.IO,
		})
		if err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		if v, ok := p.ice.version[name]; ok && v != st.Version {
			return fmt.Errorf("output directory: iceberg table %s: staged metadata version %d, its data files were named for %d", name, st.Version, v)
		}
		for _, f := range st.Files {
			p.publish(outRel(f), f)
		}
		if st.Catalog != nil {
			p.j.Catalog = append(p.j.Catalog, *st.Catalog)
		}
	}
	return nil
}

// catalogStep applies the journal's commits to the Iceberg catalog, in
// order, once every file they name is in place: each a compare-and-swap
// of a table's metadata location, skipped when the table is at its
// snapshot already (an interrupted commit that got that far), so that a
// recovery leaves each table at exactly one snapshot, the one OUT's
// record names. A journal with catalog commits and no catalog to apply
// them (a command run without --catalog) stops here: its report stays
// unpublished until a run with the catalog finishes the commit.
func (d *Dir) catalogStep(j *Journal) error {
	if len(j.Catalog) == 0 {
		return nil
	}
	if d.catalog == nil {
		return fmt.Errorf("%w: the interrupted commit of run %d registers %d Iceberg tables in a catalog: rerun `convbatch run` with the same --catalog and --catalog-namespace to finish it", ErrRefused, j.Run, len(j.Catalog))
	}
	// Every table first, so that a conflict on one moves none.
	if err := d.checkCatalog(j); err != nil {
		return err
	}
	for _, cc := range j.Catalog {
		if err := d.catalog.Commit(context.Background(), cc); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		crashpoint.Hit("catalog")
		if err := d.stepDone(); err != nil {
			return err
		}
	}
	return nil
}

// isCatalogMetadata reports whether rel (relative to OUT) is a metadata
// file of a table that the catalog wrote when it committed it: no run's
// manifest lists it (the catalog names it, not OUT's record), so check
// does not count it unexpected.
func isCatalogMetadata(rel string) bool {
	dir, name := path.Split(rel)
	return icebergout.IsCatalogMetadata(name) && strings.HasPrefix(dir, DirTables+"/") && path.Base(dir) == icebergout.MetadataDir
}

// checkCatalog returns ErrCatalogConflict (wrapped) when one of the
// journal's commits to the catalog could not be applied now: Commit
// calls it before it writes the journal, so that a table another writer
// moved since the run staged its snapshot stops the commit with nothing
// published, and catalogStep before the first of them.
func (d *Dir) checkCatalog(j *Journal) error {
	if len(j.Catalog) == 0 || d.catalog == nil {
		return nil
	}
	for _, cc := range j.Catalog {
		if err := d.catalog.Check(context.Background(), cc); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}

// CatalogTables returns the tables of OUT (root) whose metadata
// directory holds a metadata file an Iceberg catalog wrote
// (isCatalogMetadata): tables a run committed with --catalog, whose
// later commits (audit, maintain) must go to the catalog too.
func CatalogTables(root string) []string {
	var out []string
	for _, name := range tabledef.Names {
		ents, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(TableDir(name)), icebergout.MetadataDir))
		for _, e := range ents {
			if icebergout.IsCatalogMetadata(e.Name()) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}
