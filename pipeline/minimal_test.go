package pipeline

import (
	"strings"
	"testing"

	"github.com/convbatch/convbatch/tabledef"
	"github.com/convbatch/convbatch/transform"
)

// TestDefaultRegistryHandlers pins the handlers of the default registry: a
// caller who sets neither Minimal nor Checks gets every handler (every
// check, as convbatch run), tables written or not; a Minimal run gets the
// core, its Checks and what the tables it writes need. Tables without an
// output directory are not written, so they need nothing.
func TestDefaultRegistryHandlers(t *testing.T) {
	const every = "core-json,core-document,images-inline,usage-metadata,tool-linkage,agent-context,transcript-hash,consensus-receipt"
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero", Config{}, every},
		{"tables", Config{OutDir: "out", Tables: []string{tabledef.Usage}}, every + ",conversation-row"},
		{"checks without Minimal", Config{Checks: transform.CheckTranscripts}, every},
		{"minimal usage", Config{OutDir: "out", Tables: []string{tabledef.Usage}, Minimal: true}, "core-json,core-document,usage-metadata"},
		{"minimal usage,conversations", Config{OutDir: "out", Tables: []string{tabledef.Usage, tabledef.Conversations}, Minimal: true, Checks: transform.CheckExtensions},
			"core-json,core-document,images-inline,usage-metadata,tool-linkage,agent-context,transcript-hash,conversation-row"},
		{"minimal tables without OutDir", Config{Tables: []string{tabledef.Receipts}, Minimal: true}, "core-json,core-document"},
		{"minimal hash", Config{Minimal: true, Checks: transform.CheckTranscripts}, "core-json,core-document,transcript-hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.validate(); err != nil {
				t.Fatal(err)
			}
			hs, err := tc.cfg.Registry.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(hs))
			for i, h := range hs {
				got[i] = h.Manifest().Name
			}
			if g := strings.Join(got, ","); g != tc.want {
				t.Errorf("handlers\n got %s\nwant %s", g, tc.want)
			}
		})
	}
}
