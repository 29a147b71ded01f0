package pipeline

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convbatch/convbatch/tabledef"
)

// TestOpenErrorHasStatus: an object that is listed (stat'ed) when named
// but gone (404) or refused (403) when read is an open-error at offset 0
// that names the status (report.json's error.status), not a read-error
// without one; the other inputs are read as usual.
func TestOpenErrorHasStatus(t *testing.T) {
	body := []byte(`{"id":"x"}` + "\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch r.URL.Path {
			case "/gone.jsonl":
				http.NotFound(w, r)
				return
			case "/denied.jsonl":
				http.Error(w, "denied", http.StatusForbidden)
				return
			}
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), bytes.NewReader(body))
	}))
	defer srv.Close()
	inputs := expand(t, srv.URL+"/gone.jsonl", srv.URL+"/denied.jsonl", srv.URL+"/ok.jsonl")
	res, err := Run(context.Background(), Config{Inputs: inputs, OutDir: filepath.Join(t.TempDir(), "out"), Workers: 2, Tables: tabledef.Names})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"gone.jsonl": 404, "denied.jsonl": 403, "ok.jsonl": 0}
	for _, in := range res.Report.Inputs {
		name := in.Path[strings.LastIndex(in.Path, "/")+1:]
		st := want[name]
		switch {
		case st == 0 && in.Error != nil:
			t.Errorf("%s: %+v, want no fault", in.Path, in.Error)
		case st != 0 && (in.Error == nil || in.Error.Reason != "open-error" || in.Error.Offset != 0 || in.Error.Status != st):
			t.Errorf("%s: %+v, want open-error at 0 with status %d", in.Path, in.Error, st)
		}
	}
}
