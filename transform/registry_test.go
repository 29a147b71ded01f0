package transform

import (
	"errors"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

// fake is a test handler: it appends its name to log, when set, then
// rejects or panics when told to.
type fake struct {
	name     string
	requires []string
	reject   codes.Reject
	panics   bool
	log      *[]string
}

func (f fake) Manifest() Manifest {
	return Manifest{Name: f.name, Status: StatusDraft, Requires: f.requires}
}

func (f fake) Handle(d *Doc, res *Result) {
	if f.log != nil {
		*f.log = append(*f.log, f.name)
	}
	if f.panics {
		var s []int
		s[len(f.name)]++ // a real runtime panic: index out of range
	}
	if f.reject != codes.NoReject {
		res.Reject = f.reject
	}
}

func names(hs []Handler) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Manifest().Name
	}
	return out
}

func TestRegistryResolve(t *testing.T) {
	for _, tc := range []struct {
		name     string
		handlers []fake
		want     string   // comma-joined order, when no error
		errHas   []string // substrings of the error, when one is expected
	}{
		{
			name:     "registration order",
			handlers: []fake{{name: "a"}, {name: "b"}, {name: "c"}},
			want:     "a,b,c",
		},
		{
			name:     "dependency registered later runs first",
			handlers: []fake{{name: "ext", requires: []string{"core"}}, {name: "core"}},
			want:     "core,ext",
		},
		{
			name: "chain registered backwards",
			handlers: []fake{
				{name: "c", requires: []string{"b"}},
				{name: "b", requires: []string{"a"}},
				{name: "a"},
			},
			want: "a,b,c",
		},
		{
			name: "diamond",
			handlers: []fake{
				{name: "d", requires: []string{"b", "c"}},
				{name: "b", requires: []string{"a"}},
				{name: "c", requires: []string{"a"}},
				{name: "a"},
			},
			want: "a,b,c,d",
		},
		{
			name:     "missing dependency",
			handlers: []fake{{name: "a"}, {name: "tool-linkage", requires: []string{"core-nothing"}}},
			errHas:   []string{`"tool-linkage"`, `"core-nothing"`, "not registered"},
		},
		{
			name:     "two missing dependencies",
			handlers: []fake{{name: "x", requires: []string{"p"}}, {name: "y", requires: []string{"q"}}},
			errHas:   []string{`"x"`, `"p"`, `"y"`, `"q"`},
		},
		{
			name:     "cycle",
			handlers: []fake{{name: "a", requires: []string{"b"}}, {name: "b", requires: []string{"a"}}},
			errHas:   []string{"cycle"},
		},
		{
			name:     "long cycle",
			handlers: []fake{{name: "a", requires: []string{"b"}}, {name: "b", requires: []string{"c"}}, {name: "c", requires: []string{"a"}}, {name: "d"}},
			errHas:   []string{"cycle"},
		},
		{
			name:     "self dependency",
			handlers: []fake{{name: "a", requires: []string{"a"}}},
			errHas:   []string{"cycle", `"a"`},
		},
		{
			name:     "no name",
			handlers: []fake{{name: ""}},
			errHas:   []string{"no name"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			for _, h := range tc.handlers {
				r.Register(h)
			}
			hs, err := r.Resolve()
			if tc.errHas != nil {
				if err == nil {
					t.Fatalf("Resolve = %q, want an error", names(hs))
				}
				if !errors.Is(err, ErrRegistry) {
					t.Errorf("error %v is not ErrRegistry", err)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not name %s", err, s)
					}
				}
				if hs != nil {
					t.Errorf("handlers returned with an error: %q", names(hs))
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got := strings.Join(names(hs), ","); got != tc.want {
				t.Errorf("order = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRegistryDuplicate(t *testing.T) {
	r := NewRegistry()
	if err := r.Register(fake{name: "a"}); err != nil {
		t.Fatal(err)
	}
	err := r.Register(fake{name: "a"})
	if err == nil || !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("second Register = %v", err)
	}
	if err := r.Register(fake{name: "b"}); err != nil {
		t.Fatalf("Register after a duplicate: %v", err)
	}
	hs, err := r.Resolve()
	if err == nil || !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), "registered twice") {
		t.Fatalf("Resolve = %q, %v; want the duplicate error again", names(hs), err)
	}
	// It stays failed.
	if _, err2 := r.Resolve(); err2 == nil {
		t.Error("second Resolve succeeded")
	}
	if got := len(r.manifests()); got != 2 {
		t.Errorf("%d manifests, want 2 (the duplicate is not added)", got)
	}
	// A duplicate of a core handler fails the same way.
	d := Default()
	if err := d.Register(CoreJSON{}); err == nil {
		t.Error("core-json registered twice")
	}
	if _, err := d.Resolve(); err == nil {
		t.Error("Default with a duplicate core-json resolved")
	}
}

func TestDefault(t *testing.T) {
	hs, err := Default().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(hs), ","); got != "core-json,core-document" {
		t.Errorf("Default order = %s", got)
	}
	ms := Default().manifests()
	if len(ms) != 2 || ms[0].Status != StatusCore || ms[1].Status != StatusCore {
		t.Errorf("Default manifests = %+v", ms)
	}
	if len(ms[1].Requires) != 1 || ms[1].Requires[0] != "core-json" {
		t.Errorf("core-document requires %q", ms[1].Requires)
	}
	// An extension handler registered before the core ones still runs after.
	r := NewRegistry()
	r.Register(fake{name: "tool-linkage", requires: []string{"core-document"}})
	r.Register(CoreDocument{})
	r.Register(CoreJSON{})
	hs, err = r.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(hs), ","); got != "core-json,core-document,tool-linkage" {
		t.Errorf("order = %s", got)
	}
}

func TestProcessPanic(t *testing.T) {
	var ran []string
	r := Default()
	r.Register(fake{name: "bad", requires: []string{"core-document"}, panics: true, log: &ran})
	r.Register(fake{name: "after", requires: []string{"bad"}, log: &ran})
	hs, err := r.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(hs)
	var res Result
	rec := line(`{"id":"secret-id","messages":[{"role":"user","content":"secret content"}]}`)
	rec.Line = 42
	p.Process(rec, &res)
	if res.Panic == nil {
		t.Fatal("Panic not set")
	}
	if msg := res.Panic.Error(); !strings.Contains(msg, "42") || strings.Contains(msg, "secret") {
		t.Errorf("Panic = %q: want the line number and no content", msg)
	}
	if strings.Join(ran, ",") != "bad" {
		t.Errorf("handlers run = %q: handlers after the panic must not run", ran)
	}
	// The processor is still usable, and the panic does not stick.
	r2 := Default()
	p2 := NewProcessor(mustResolve(t, r2))
	p2.Process(line(`{"id":"a","messages":[]}`), &res)
	if res.Panic != nil || res.Reject != codes.NoReject {
		t.Errorf("after a panic: %+v", res)
	}
	p.Process(line(`[]`), &res)
	if res.Panic != nil || res.Reject != codes.RejectNotObject {
		t.Errorf("same processor, rejected line: %+v", res)
	}
}

func TestRejectStopsLaterHandlers(t *testing.T) {
	var ran []string
	r := NewRegistry()
	r.Register(fake{name: "first", log: &ran})
	r.Register(fake{name: "rejecter", requires: []string{"first"}, reject: codes.RejectBadTitle, log: &ran})
	r.Register(fake{name: "later", requires: []string{"rejecter"}, log: &ran})
	r.Register(fake{name: "unrelated", log: &ran})
	p := NewProcessor(mustResolve(t, r))
	var res Result
	p.Process(line(`{}`), &res)
	if res.Reject != codes.RejectBadTitle {
		t.Errorf("Reject = %q", res.Reject)
	}
	if got := strings.Join(ran, ","); got != "first,rejecter" {
		t.Errorf("handlers run = %s", got)
	}
	// A core reject stops the extension handlers too.
	ran = ran[:0]
	r = Default()
	r.Register(fake{name: "ext", requires: []string{"core-document"}, log: &ran})
	p = NewProcessor(mustResolve(t, r))
	p.Process(line(`{"id":"","messages":[]}`), &res)
	if res.Reject != codes.RejectBadID || len(ran) != 0 || len(res.Warnings) != 0 {
		t.Errorf("core reject: %q, handlers run %q, warnings %q", res.Reject, ran, res.Warnings)
	}
	p.Process(line(`{"id":"a","messages":[]}`), &res)
	if res.Reject != codes.NoReject || strings.Join(ran, ",") != "ext" {
		t.Errorf("good line: %q, handlers run %q", res.Reject, ran)
	}
	ran = ran[:0]
	p.Process(&stream.Record{Kind: stream.KindBlank}, &res)
	if len(ran) != 0 || len(res.Warnings) != 0 {
		t.Errorf("blank line ran handlers: %q", ran)
	}
}

func mustResolve(t *testing.T, r *Registry) []Handler {
	t.Helper()
	hs, err := r.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return hs
}
