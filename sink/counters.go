package sink

import "maps"

// Counters are the report's counters that records add to, beside
// Counts: by reason, by warning, by declared extension. They are kept
// per input (a segment's seal holds them) or per shard (the Beam module
// merges them).
type Counters struct {
	RejectsByReason   map[string]int64 `json:"rejects_by_reason"`
	Warnings          map[string]int64 `json:"warnings"`
	Declared          map[string]int64 `json:"declared"`
	Unknown           map[string]int64 `json:"unknown"`
	StatementsInvalid int64            `json:"statements_invalid"`
}

// NewCounters returns empty Counters, their maps made.
func NewCounters() Counters {
	return Counters{RejectsByReason: map[string]int64{}, Warnings: map[string]int64{}, Declared: map[string]int64{}, Unknown: map[string]int64{}}
}

// AddTo adds the counters to the report's.
func (c *Counters) AddTo(rep *Report) {
	addAll(rep.RejectsByReason, c.RejectsByReason)
	addAll(rep.Warnings, c.Warnings)
	addAll(rep.Extensions.Declared, c.Declared)
	addAll(rep.Extensions.Unknown, c.Unknown)
	rep.Receipts.StatementsInvalid += c.StatementsInvalid
}

// Merge adds o's counters to c's.
func (c *Counters) Merge(o *Counters) {
	addAll(c.RejectsByReason, o.RejectsByReason)
	addAll(c.Warnings, o.Warnings)
	addAll(c.Declared, o.Declared)
	addAll(c.Unknown, o.Unknown)
	c.StatementsInvalid += o.StatementsInvalid
}

// Clone returns a copy of c that shares no map with it.
func (c *Counters) Clone() Counters {
	return Counters{RejectsByReason: maps.Clone(c.RejectsByReason), Warnings: maps.Clone(c.Warnings),
		Declared: maps.Clone(c.Declared), Unknown: maps.Clone(c.Unknown), StatementsInvalid: c.StatementsInvalid}
}

func addAll(dst, src map[string]int64) {
	for k, v := range src {
		dst[k] += v
	}
}
