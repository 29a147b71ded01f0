package objout

import (
	"path"
	"strings"

	"github.com/convbatch/convbatch/icebergout"
	"github.com/convbatch/convbatch/outdir"
)

// An OUT on object storage holds Iceberg tables as a local OUT does, but
// each file under its run-unique key: the tables' metadata, staged in
// the scratch OUT by the local-OUT code, names the keys (Session.Locator),
// so that a reader that follows a table's metadata reads the objects of
// one commit. With an Iceberg catalog (--catalog) the catalog's
// compare-and-swap of each table comes after the commit record
// (Session.DeferCatalog): the record is the commit point, and the record
// names the catalog commits, which the next run applies again if a
// crash came between (docs/FORMAT.md, "OUT on object storage").

// HoldsIceberg reports whether the OUT of record c holds Iceberg tables
// (a table's metadata file).
func (c *Commit) HoldsIceberg() bool {
	for _, f := range c.Files {
		dir := path.Dir(f.Path)
		if strings.HasPrefix(dir, outdir.DirTables+"/") && path.Base(dir) == icebergout.MetadataDir && strings.HasSuffix(f.Path, metadataSuffix) {
			return true
		}
	}
	return false
}
