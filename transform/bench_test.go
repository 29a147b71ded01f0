package transform

import (
	"bytes"
	"testing"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/gen"
	"github.com/convbatch/convbatch/stream"
)

// BenchmarkCoreChecks runs the core handlers on realistic generated
// documents; bytes/s is the per-core document-check throughput.
func BenchmarkCoreChecks(b *testing.B) {
	benchProcess(b, gen.Options{Conversations: 300, Seed: 5}, Default(), true)
}

// BenchmarkProcessShort runs the standard extracting handlers (as
// `convbatch extract` does) on tiny documents of the short profile, where
// the per-document costs of the handlers, not the bytes, set the pace.
func BenchmarkProcessShort(b *testing.B) {
	benchProcess(b, gen.Options{Conversations: 2000, Seed: 5, Profile: gen.ProfileShort, NoReceipts: true}, Standard(Options{Extract: true}), false)
}

// benchProcess runs the handlers of reg over the documents gen makes with
// opts, failing on any reject, and reports ns/doc (and bytes/s when
// setBytes).
func benchProcess(b *testing.B, opts gen.Options, reg *Registry, setBytes bool) {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Generate(&buf, opts); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	handlers, err := reg.Resolve()
	if err != nil {
		b.Fatal(err)
	}
	proc := NewProcessor(handlers)
	recs := make([]stream.Record, len(lines))
	for i, l := range lines {
		recs[i] = stream.Record{Kind: stream.KindLine, Raw: l, Data: l, Line: int64(i + 1)}
	}
	var res Result
	if setBytes {
		b.SetBytes(int64(buf.Len()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for i := range recs {
			proc.Process(&recs[i], &res)
			if res.Reject != codes.NoReject {
				b.Fatalf("line %d rejected: %s", i+1, res.Reject)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/doc")
}
