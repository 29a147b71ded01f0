package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/convbatch/convbatch/icebergout"
)

// icebergMetadata matches a file of an Iceberg table's metadata directory
// (--table-format iceberg): tables/<name>/metadata/<file>.
var icebergMetadata = regexp.MustCompile(`^tables/[^/]+/metadata/[^/]+$`)

// volatileSummary are the snapshot summary members that differ between
// two runs writing the same snapshot.
var volatileSummary = []string{}

// icebergEntry returns the key and normalized content under which
// Snapshot keeps the Iceberg metadata file rel of dir, and false for a
// file that is not one. Metadata carries random ids, UUIDs and times, so
// its files are compared by what they mean: a metadata version by its
// table's schemas, specs, properties and, for each snapshot in order,
// its summary and its data files with their record counts (ids, times and
// the names of manifests left out); a manifest or manifest list (Avro,
// named by UUID) only counts, one key per table; the version hint as it
// is.
func icebergEntry(dir, rel string) (string, []byte, bool, error) {
	if !icebergMetadata.MatchString(rel) {
		return "", nil, false, nil
	}
	base := path.Base(rel)
	switch {
	case base == icebergout.VersionHintFile:
		return "", nil, false, nil
	case strings.HasSuffix(base, ".avro"):
		return path.Dir(rel) + "/*.avro", nil, true, nil
	case strings.HasSuffix(base, ".metadata.json"):
		b, err := describeMetadata(dir, rel)
		return rel, b, true, err
	}
	return "", nil, false, nil
}

// describeMetadata is the normalized content of the metadata version rel.
func describeMetadata(dir, rel string) ([]byte, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	tdir := path.Dir(path.Dir(rel))
	tbl, err := icebergout.LoadVersion(context.Background(), root, tdir, rel)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	type snap struct {
		Summary map[string]string `json:"summary"`
		Files   []string          `json:"files"`
	}
	d := struct {
		Location   string            `json:"location"`
		Schema     string            `json:"schema"`
		Spec       string            `json:"spec"`
		Properties map[string]string `json:"properties"`
		Snapshots  []snap            `json:"snapshots"`
		Current    int               `json:"current"`
	}{Location: strings.TrimPrefix(meta.Location(), icebergout.Location(root, "")), Schema: meta.CurrentSchema().String(), Spec: meta.PartitionSpec().String(), Properties: meta.Properties()}
	d.Current = -1
	for i, s := range meta.Snapshots() {
		files, err := icebergout.SnapshotFiles(tbl, root, tdir, &s)
		if err != nil {
			return nil, err
		}
		slices.Sort(files)
		sum := map[string]string{"operation": string(s.Summary.Operation)}
		for k, v := range s.Summary.Properties {
			sum[k] = v
		}
		for _, k := range volatileSummary {
			delete(sum, k)
		}
		d.Snapshots = append(d.Snapshots, snap{Summary: sum, Files: files})
		if cur := meta.CurrentSnapshot(); cur != nil && cur.SnapshotID == s.SnapshotID {
			d.Current = i
		}
	}
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return b, nil
}
