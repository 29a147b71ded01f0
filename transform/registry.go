package transform

import (
	"errors"
	"fmt"
)

// Status is a handler's maturity, as in the extension registry.
type Status string

// Names of the handlers that are not extension handlers (those are named
// after their extension: ExtensionImagesInline, ...).
const (
	HandlerCoreJSON        = "core-json"
	HandlerCoreDocument    = "core-document"
	HandlerTranscriptHash  = "transcript-hash"
	HandlerConversationRow = "conversation-row"
)

// Handler statuses.
const (
	StatusCore   Status = "core"
	StatusStable Status = "stable"
	StatusDraft  Status = "draft"
)

// Manifest describes a handler.
type Manifest struct {
	// Name is unique in a registry, lowercase and hyphenated.
	Name string
	// Status is core, stable or draft.
	Status Status
	// Reads lists the document fields the handler reads, as JSON paths.
	Reads []string
	// Requires names the handlers that must run before this one.
	Requires []string
}

// Handler does one job on each parsed document.
type Handler interface {
	// Manifest describes the handler; it must not change.
	Manifest() Manifest
	// Handle inspects d and records its findings in res. It runs on many
	// goroutines at once, each with its own d and res, so it must not
	// mutate shared state. Setting res.Reject stops the later handlers.
	Handle(d *Doc, res *Result)
}

// ErrRegistry marks a registry that cannot be resolved.
var ErrRegistry = errors.New("handler registry")

// Registry is an ordered set of handlers. The zero value is an empty
// registry ready to use.
type Registry struct {
	handlers []Handler
	byName   map[string]int
	err      error
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]int{}}
}

// Register adds h. A second handler with the same name is an error, kept and
// returned again by Resolve.
func (r *Registry) Register(h Handler) error {
	if r.byName == nil {
		r.byName = map[string]int{}
	}
	m := h.Manifest()
	if m.Name == "" {
		err := fmt.Errorf("%w: a handler has no name", ErrRegistry)
		r.err = errors.Join(r.err, err)
		return err
	}
	if _, dup := r.byName[m.Name]; dup {
		err := fmt.Errorf("%w: handler %q registered twice", ErrRegistry, m.Name)
		r.err = errors.Join(r.err, err)
		return err
	}
	r.byName[m.Name] = len(r.handlers)
	r.handlers = append(r.handlers, h)
	return nil
}

// manifests returns the manifests in registration order.
func (r *Registry) manifests() []Manifest {
	out := make([]Manifest, len(r.handlers))
	for i, h := range r.handlers {
		out[i] = h.Manifest()
	}
	return out
}

// Resolve checks every dependency and returns the handlers in an order
// where each comes after those it requires (registration order otherwise).
func (r *Registry) Resolve() ([]Handler, error) {
	if r.err != nil {
		return nil, r.err
	}
	var errs []error
	for _, h := range r.handlers {
		m := h.Manifest()
		for _, dep := range m.Requires {
			if _, ok := r.byName[dep]; !ok {
				errs = append(errs, fmt.Errorf("%w: handler %q requires %q, which is not registered", ErrRegistry, m.Name, dep))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	const (
		unseen = iota
		visiting
		placed
	)
	state := make([]int, len(r.handlers))
	out := make([]Handler, 0, len(r.handlers))
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case placed:
			return nil
		case visiting:
			return fmt.Errorf("%w: dependency cycle through %q", ErrRegistry, r.handlers[i].Manifest().Name)
		}
		state[i] = visiting
		for _, dep := range r.handlers[i].Manifest().Requires {
			if err := visit(r.byName[dep]); err != nil {
				return err
			}
		}
		state[i] = placed
		out = append(out, r.handlers[i])
		return nil
	}
	for i := range r.handlers {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Select returns a registry holding the handlers named and every handler
// they require, transitively, in this registry's order: the others are left
// out. An unknown name, or a requirement that is not registered, is an
// error wrapping ErrRegistry.
func (r *Registry) Select(names ...string) (*Registry, error) {
	if r.err != nil {
		return nil, r.err
	}
	keep := make([]bool, len(r.handlers))
	var errs []error
	var visit func(name, from string)
	visit = func(name, from string) {
		i, ok := r.byName[name]
		if !ok {
			if from == "" {
				errs = append(errs, fmt.Errorf("%w: handler %q is not registered", ErrRegistry, name))
			} else {
				errs = append(errs, fmt.Errorf("%w: handler %q requires %q, which is not registered", ErrRegistry, from, name))
			}
			return
		}
		if keep[i] {
			return
		}
		keep[i] = true
		for _, dep := range r.handlers[i].Manifest().Requires {
			visit(dep, name)
		}
	}
	for _, name := range names {
		visit(name, "")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := NewRegistry()
	for i, h := range r.handlers {
		if keep[i] {
			out.Register(h)
		}
	}
	return out, nil
}

// Names returns the names of the registered handlers, in registration
// order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.handlers))
	for i, h := range r.handlers {
		out[i] = h.Manifest().Name
	}
	return out
}

// Default returns a registry holding the core handlers, core-json with the
// default nesting limit.
func Default() *Registry {
	r := NewRegistry()
	r.Register(CoreJSON{})
	r.Register(CoreDocument{})
	return r
}
