package main

import (
	"context"
	"log/slog"
	"sync"
)

// logGate is the slog.Handler convbeam installs with --verbose, in front
// of the handler beam.Init set up on standard error. Once the job ended,
// shut raises its level to WARN, so that the INFO records the runner's
// goroutines still write as they wind down (the loopback worker's
// "[SDK] stopping worker", say) cannot come after convbeam's summary,
// which scripts read as the last line; warnings and errors still pass.
// A record being written while shut is called is finished before shut
// returns.
type logGate struct {
	mu    *sync.RWMutex
	shut  *bool
	inner slog.Handler
}

// newLogGate returns a gate, open, in front of inner.
func newLogGate(inner slog.Handler) *logGate {
	return &logGate{mu: new(sync.RWMutex), shut: new(bool), inner: inner}
}

// Enabled implements slog.Handler.
func (g *logGate) Enabled(ctx context.Context, level slog.Level) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return (!*g.shut || level >= slog.LevelWarn) && g.inner.Enabled(ctx, level)
}

// Handle implements slog.Handler: it holds the gate's read lock while the
// inner handler writes, so that close waits for a record under way.
func (g *logGate) Handle(ctx context.Context, r slog.Record) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if *g.shut && r.Level < slog.LevelWarn {
		return nil
	}
	return g.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; the new handler shares the gate.
func (g *logGate) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logGate{mu: g.mu, shut: g.shut, inner: g.inner.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler; the new handler shares the gate.
func (g *logGate) WithGroup(name string) slog.Handler {
	return &logGate{mu: g.mu, shut: g.shut, inner: g.inner.WithGroup(name)}
}

// close lets only warnings and errors through from now on; it returns
// once no record that it would now drop is being written.
func (g *logGate) close() {
	g.mu.Lock()
	*g.shut = true
	g.mu.Unlock()
}
